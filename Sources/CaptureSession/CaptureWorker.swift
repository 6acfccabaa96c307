import Foundation
import Synchronization
import V4L2
import VideoCore

/// What the capture thread reports to its session.
enum CaptureEvent: Sendable {
    /// The device is open and streaming.
    case running(source: String, card: String, configuration: CaptureConfiguration)
    /// The device could not be opened or stopped working; the worker retries after `retryIn`.
    case lost(DeviceError, retryIn: Double)
    /// A failure retrying will not fix without a change (not a camera, format not offered).
    case failed(DeviceError)
    /// The thread has released the device and ended.
    case stopped
}

/// The dedicated thread that owns one camera: opens and configures it, runs the
/// poll/DQBUF loop, and on any device error closes it and reopens it with backoff.
/// All blocking device work happens here, never on the session actor.
final class CaptureWorker: Sendable {
    /// Opens, configures and starts a source: `FrameSources.open`, or a stand-in in tests.
    typealias Opener = @Sendable (_ selector: String?, _ request: CaptureRequest,
                                  _ controls: [(name: String, value: String)]) throws(DeviceError) -> any FrameSource

    let settings: CameraSettings
    private let hub: FrameHub
    private let open: Opener
    private let events: @Sendable (CaptureEvent) -> Void
    private let stopRequested = Atomic<Bool>(false)
    private let commands = Mutex<[@Sendable ((any FrameSource)?) -> Void]>([])

    /// How long without a frame before the device counts as stalled.
    static func stallLimit(_ configuration: CaptureConfiguration) -> Double {
        max(5, 10 * (configuration.interval?.seconds ?? 0.2))
    }
    static let backoff: [Double] = [0.5, 1, 2, 4, 5]

    static let openSource: Opener = { (selector, request, controls) throws(DeviceError) in
        try FrameSources.open(selector, request: request, controls: controls)
    }

    init(settings: CameraSettings, hub: FrameHub, open: @escaping Opener = CaptureWorker.openSource,
         events: @escaping @Sendable (CaptureEvent) -> Void) {
        self.settings = settings
        self.hub = hub
        self.open = open
        self.events = events
    }

    func start() {
        WorkerThread.start(name: "camd-cap-\(settings.id)") { [self] in run() }
    }

    /// Asks the thread to stop; it reports `.stopped` once the device is released.
    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
    }

    var isStopping: Bool { stopRequested.load(ordering: .acquiring) }

    /// Runs `work` on the capture thread with the open source, between frames; with nil
    /// when there is no device to run it on (lost, or the thread is ending), so it is always answered.
    func perform(_ work: @escaping @Sendable ((any FrameSource)?) -> Void) {
        commands.withLock { $0.append(work) }
    }

    private func run() {
        var attempt = 0
        let controls = settings.controls.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        while !isStopping {
            let source: any FrameSource
            do {
                source = try open(settings.device, settings.request, controls)
                // The frames status's frame_memory_bytes counts: the newest, one per encoder.
                // The newest is filled again with the next frame when the others are held.
                source.keepFrames(1 + max(1, settings.encoderThreads)) { [hub] in hub.releaseNewestRaw() }
            } catch {
                if Self.isPermanent(error) {
                    events(.failed(error))
                    break
                }
                let delay = Self.backoff[min(attempt, Self.backoff.count - 1)]
                attempt += 1
                events(.lost(error, retryIn: delay))
                pause(delay)
                continue
            }
            attempt = 0
            events(.running(source: source.name, card: source.cardName, configuration: source.configuration))
            let failure = stream(source)
            // A lost device is reported before it is stopped: stopping a libcamera camera that
            // went away waits seconds for libcamera to learn it (`LibCameraStream.stop`), and
            // clients should get their 503 at once.
            let delay = Self.backoff[0]
            if let failure {
                hub.deviceLost(.waitingForDevice(failure.message))
                events(.lost(failure, retryIn: delay))
            }
            source.stop()
            if failure != nil { pause(delay) }
        }
        runCommands(nil)
        events(.stopped)
    }

    /// The poll/DQBUF loop; returns the error that ended it, or nil when asked to stop.
    private func stream(_ source: any FrameSource) -> DeviceError? {
        let stallLimit = Self.stallLimit(source.configuration)
        var lastFrame = ContinuousClock.now
        var dropsReported = 0, copiesReported = 0
        while !isStopping {
            runCommands(source)
            do {
                // Short waits, so a stop request is seen promptly; the stall bound is ours.
                // Pixels nobody wants stay in the driver's buffer: an idle camera copies nothing
                // (a V4L2 camera keeps its newest frame there, lent, for the next snapshot).
                // Whether anyone wants them is asked once the frame has come.
                switch try source.nextFrame(timeout: .milliseconds(250), ifWanted: { hub.wantsPixels() }) {
                case .read(let frame), .kept(let frame): hub.publish(frame)
                case .unread(let captured): hub.publishUnread(monotonicTime: captured)
                }
                let (dropped, copied) = (source.droppedFrames, source.copiedFrames)
                hub.addSourceCounts(dropped: dropped - dropsReported, copied: copied - copiesReported)
                (dropsReported, copiesReported) = (dropped, copied)
                lastFrame = .now
            } catch where error.kind == .timeout {
                if ContinuousClock.now - lastFrame > .seconds(stallLimit) {
                    return DeviceError(.timeout, path: source.name,
                                       "\(source.name) sent no frame for \(Int(stallLimit)) s; the device may be stalled")
                }
            } catch {
                return error
            }
        }
        return nil
    }

    private func runCommands(_ source: (any FrameSource)?) {
        let pending = commands.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
        for work in pending { work(source) }
    }

    /// Sleeps up to `seconds`, waking early when asked to stop.
    private func pause(_ seconds: Double) {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while !isStopping, ContinuousClock.now < deadline {
            runCommands(nil)  // no device now: answer queued work instead of keeping it waiting
            usleep(50_000)
        }
    }

    /// Errors that another attempt cannot fix without a change of settings.
    static func isPermanent(_ error: DeviceError) -> Bool {
        switch error.kind {
        case .notACamera, .unsupported, .invalidArgument: return true
        default: return false
        }
    }
}
