import V4L2
import VideoCore
#if canImport(Glibc)
import Glibc
#endif

/// A built-in test source for demos and host benchmarks on machines without a
/// camera: 75% colour bars in limited-range YUYV (the layout vivid and most
/// webcams send), with a square that moves one step per frame.
/// It is labelled as synthetic everywhere and is never what a test calls a camera.
public final class SyntheticSource: FrameSource {
    public let configuration: CaptureConfiguration
    public var name: String { "\(FrameSources.syntheticName) (synthetic test source, not a camera)" }
    public var cardName: String { "camd synthetic test source" }
    private let background: [UInt8]
    private var recycler = FrameRecycler()
    private var sequence: UInt32 = 0
    private var nextDue: ContinuousClock.Instant?

    public static let supportedSizes = FrameSizes.stepwise(
        min: FrameSize(width: 16, height: 16), max: FrameSize(width: 3840, height: 2160), step: FrameSize(width: 2, height: 2))

    /// The bars, left to right, as full-range RGB at 75%: white, yellow, cyan, green, magenta, red, blue, black.
    public static let bars: [(r: Double, g: Double, b: Double)] = [
        (191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0), (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0),
    ]

    /// The pixel formats it offers, so settings can be checked before it is opened.
    public static let formats: [PixelFormat] = [.yuyv]

    public init(request: CaptureRequest) throws(DeviceError) {
        if let format = request.format, !Self.formats.contains(format) {
            throw DeviceError(.unsupported, path: FrameSources.syntheticName,
                              "the synthetic test source offers only \(Self.formats.map(\.description).joined(separator: ", ")); got \(format)")
        }
        let size = Self.supportedSizes.nearest(to: request.size ?? CaptureRequest.defaultSize)!
        let fps = min(max(request.fps ?? 30, 1), 120)
        configuration = CaptureConfiguration(
            layout: FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited),
            bufferSize: size.area * 2, interval: FrameInterval(fps: fps), request: request)
        background = Self.drawBars(size)
    }

    /// BT.601 limited-range Y'CbCr of a full-range RGB colour.
    static func limitedYCbCr(_ c: (r: Double, g: Double, b: Double)) -> (y: UInt8, cb: UInt8, cr: UInt8) {
        let r = c.r / 255, g = c.g / 255, b = c.b / 255
        let y = 16 + 65.481 * r + 128.553 * g + 24.966 * b
        let cb = 128 - 37.797 * r - 74.203 * g + 112 * b
        let cr = 128 + 112 * r - 93.786 * g - 18.214 * b
        return (UInt8(y.rounded()), UInt8(cb.rounded()), UInt8(cr.rounded()))
    }

    static func drawBars(_ size: FrameSize) -> [UInt8] {
        var row = [UInt8](repeating: 0, count: size.width * 2)
        for pair in 0..<(size.width / 2) {
            let colour = limitedYCbCr(bars[min(7, pair * 2 * 8 / size.width)])
            row[pair * 4] = colour.y
            row[pair * 4 + 1] = colour.cb
            row[pair * 4 + 2] = colour.y
            row[pair * 4 + 3] = colour.cr
        }
        var frame = [UInt8]()
        frame.reserveCapacity(row.count * size.height)
        for _ in 0..<size.height { frame.append(contentsOf: row) }
        return frame
    }

    public func keepFrames(_ count: Int, takingBackNewest: @escaping @Sendable () -> Void) {
        recycler.keep(count, takingBackNewest: takingBackNewest)
    }

    public func nextFrame(timeout: Duration) throws(DeviceError) -> Frame {
        let (monotonic, wallClock) = waitForFrame()
        return drawn(monotonic, wallClock)
    }

    /// A frame nobody wants is not drawn, as a camera's is not copied.
    public func nextFrame(timeout: Duration, ifWanted wanted: () -> Bool) throws(DeviceError) -> SourcedFrame {
        let (monotonic, wallClock) = waitForFrame()
        return wanted() ? .read(drawn(monotonic, wallClock)) : .unread(monotonicTime: monotonic)
    }

    private func drawn(_ monotonic: Double, _ wallClock: Double) -> Frame {
        let storage = recycler.storage(count: background.count) { target in
            background.withUnsafeBytes { target.copyMemory(from: $0) }
            drawSquare(into: target)
        }
        return Frame(layout: configuration.layout, storage: storage, sequence: sequence, monotonicTime: monotonic, captureTime: wallClock)
    }

    /// Keeps the configured rate: sleeps until the next frame is due and counts it.
    private func waitForFrame() -> (monotonic: Double, wallClock: Double) {
        let interval = Duration.seconds(configuration.interval?.seconds ?? 1.0 / 30)
        let now = ContinuousClock.now
        let due = nextDue ?? now
        if due > now { try? ContinuousClock.sleepBlocking(until: due) }
        nextDue = max(due, now - interval) + interval
        sequence &+= 1
        var mono = timespec(), real = timespec()
        clock_gettime(CLOCK_MONOTONIC, &mono)
        clock_gettime(CLOCK_REALTIME, &real)
        return (Double(mono.tv_sec) + Double(mono.tv_nsec) / 1e9, Double(real.tv_sec) + Double(real.tv_nsec) / 1e9)
    }

    /// A mid-grey square crossing the bottom eighth of the frame, so motion is visible.
    private func drawSquare(into bytes: UnsafeMutableRawBufferPointer) {
        let size = configuration.layout.size
        let side = max(2, size.height / 8) & ~1
        let travel = max(1, size.width - side)
        let left = (Int(sequence) * 4 % travel) & ~1
        let top = size.height - side
        for y in top..<size.height {
            let line = y * size.width * 2
            for x in stride(from: left, to: min(left + side, size.width), by: 2) {
                let p = line + x * 2
                bytes[p] = 126; bytes[p + 1] = 128; bytes[p + 2] = 126; bytes[p + 3] = 128
            }
        }
    }

    public var droppedFrames: Int { 0 }

    public func stop() {}
}

extension ContinuousClock {
    /// Sleeps the calling thread (not a task) until `deadline`: sources run on their own threads.
    static func sleepBlocking(until deadline: Instant) throws {
        let remaining = deadline - .now
        guard remaining > .zero else { return }
        var request = timespec(tv_sec: Int(remaining.components.seconds),
                               tv_nsec: Int(remaining.components.attoseconds / 1_000_000_000))
        var left = timespec()
        while nanosleep(&request, &left) == -1 && errno == EINTR { request = left }
    }
}
