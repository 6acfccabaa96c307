/// How the bytes of one frame are laid out: enough for an encoder to read them.
public struct FrameLayout: Hashable, Sendable, CustomStringConvertible {
    public var format: PixelFormat
    public var size: FrameSize
    /// Bytes from one line of the first plane to the next (may exceed the visible width).
    public var bytesPerLine: Int
    /// Whether Y'CbCr samples use the full 0...255 range (JPEG's) rather than 16...235.
    public var range: ColorRange

    public init(format: PixelFormat, size: FrameSize, bytesPerLine: Int, range: ColorRange) {
        self.format = format
        self.size = size
        self.bytesPerLine = bytesPerLine
        self.range = range
    }

    public var description: String { "\(format) \(size)" }
}

/// The quantization of Y'CbCr samples (`V4L2_QUANTIZATION_*`).
public enum ColorRange: String, Hashable, Sendable, Codable {
    /// Y in 16...235 and Cb/Cr in 16...240, as most webcams and vivid send.
    case limited
    /// Every value 0...255, as JPEG stores them.
    case full
}

/// One captured frame: its bytes and where they came from.
public struct Frame: Sendable {
    public var layout: FrameLayout
    /// Where the bytes are kept: a box the capture source fills again, or a driver's buffer it
    /// lends, once no frame refers to it.
    public let storage: FrameStorage
    /// The frame's bytes, copied out of a driver's buffer where the frame lies in one:
    /// readers of every frame use `withUnsafeBytes`.
    public var bytes: [UInt8] { storage.bytes }
    /// How many bytes the frame has.
    public var byteCount: Int { storage.count }

    /// Lends the frame's bytes to `body`, wherever they lie (a box or a driver's buffer).
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        try storage.withUnsafeBytes(body)
    }
    /// The driver's frame counter; gaps mean frames were dropped.
    public var sequence: UInt32
    /// When the frame was captured, in CLOCK_MONOTONIC seconds (the driver's timestamp).
    public var monotonicTime: Double
    /// When the frame was captured, as wall-clock time in seconds since 1970.
    public var captureTime: Double

    public init(layout: FrameLayout, bytes: [UInt8], sequence: UInt32, monotonicTime: Double, captureTime: Double) {
        self.init(layout: layout, storage: FrameStorage(bytes), sequence: sequence, monotonicTime: monotonicTime, captureTime: captureTime)
    }

    public init(layout: FrameLayout, storage: FrameStorage, sequence: UInt32, monotonicTime: Double, captureTime: Double) {
        self.layout = layout
        self.storage = storage
        self.sequence = sequence
        self.monotonicTime = monotonicTime
        self.captureTime = captureTime
    }
}

/// A frame as a source gives it when it is asked whether the pixels are wanted only once the
/// frame has come (`FrameSource.nextFrame(timeout:ifWanted:)`).
public enum SourcedFrame: Sendable {
    /// The pixels were wanted: the frame.
    case read(Frame)
    /// They were not, but the device's buffer could be lent without a copy and leave the
    /// driver its reserve: the frame, its pixels unread where the device put them, kept as
    /// the newest for whoever comes for one before the next frame (`CaptureStream`).
    case kept(Frame)
    /// They were not, and stayed where the device put them: when the frame was captured, in
    /// CLOCK_MONOTONIC seconds.
    case unread(monotonicTime: Double)
}

/// The bytes of one frame: either a box that a `FrameRecycler` fills again once no frame
/// refers to it any more, or a driver's buffer lent until the last frame referring to it
/// goes (a V4L2 buffer read where the camera wrote it, as µStreamer encodes). A box is
/// written only by a FrameRecycler, and only while it holds the one reference to it, so no
/// other thread can be reading it then; a lent buffer is never written.
public final class FrameStorage: @unchecked Sendable {  // a box is written only while uniquely referenced; a lent buffer never
    fileprivate var box: [UInt8]
    private let lent: UnsafeRawBufferPointer?
    private let giveBack: (@Sendable () -> Void)?

    public init(_ bytes: [UInt8]) {
        box = bytes
        lent = nil
        giveBack = nil
    }

    /// Bytes that stay readable, and unchanged, until `giveBack` is called: when the last
    /// frame referring to this storage goes, on whichever thread lets go of it.
    public init(lending bytes: UnsafeRawBufferPointer, giveBack: @escaping @Sendable () -> Void) {
        box = []
        lent = bytes
        self.giveBack = giveBack
    }

    deinit { giveBack?() }

    /// Whether the bytes lie in a lent buffer rather than a box of camd's own.
    public var isLent: Bool { lent != nil }

    public var count: Int { lent?.count ?? box.count }

    /// The bytes as an array: the box itself, or a copy of a lent buffer.
    public var bytes: [UInt8] { lent.map { [UInt8]($0) } ?? box }

    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        if let lent { return try body(lent) }
        // Not Array.withUnsafeBytes: its closure cannot throw a typed error through it.
        var result: Swift.Result<Result, Failure>?
        box.withUnsafeBytes { bytes in
            do throws(Failure) { result = .success(try body(bytes)) } catch { result = .failure(error) }
        }
        return try result!.get()
    }
}

/// Frame storage for one capture source, reused: a camera captures 30 frames a second for
/// months, and allocating each (1.8 MB at 720p YUYV) only to free it a few milliseconds
/// later costs page faults on every frame and leaves the freed memory to the allocator's
/// arenas. A box is filled again only when no frame refers to it (the hub moved on and
/// every encoder or render is done with it); otherwise a new one is made, so a frame
/// someone still holds never changes. Used by one thread, the source's.
public struct FrameRecycler {
    private var boxes: [FrameStorage] = []
    /// How many boxes are kept: the capture session sets the newest frame plus one per
    /// encoder thread, the frames its `frame_memory_bytes` bound counts. A moment when
    /// more are held (a render, a waiting snapshot) allocates one that is not kept.
    public var limit: Int {
        didSet { limit = max(1, limit) }
    }

    public static let defaultLimit = 3

    /// Asked to let go of the newest frame when every box is held, before a new box is made
    /// (the capture session's hub drops its newest raw frame nobody has taken). The frame
    /// about to be filled replaces that one anyway: filling its box instead of a new one
    /// keeps the boxes at the frames consumers hold and one more. While an encoder holds a
    /// frame (an encode takes longer than a frame interval on a slow machine) that is two
    /// boxes, not three, 0.6 MiB at 640x480 YUYV and 4 MiB at 1080p (issue 16).
    public var takeBackNewest: (@Sendable () -> Void)?

    public init(limit: Int = FrameRecycler.defaultLimit) {
        self.limit = max(1, limit)
    }

    /// Keeps `count` boxes, and asks `takeBackNewest` for the newest frame's box when all
    /// are held: what a capture source is told (`FrameSource.keepFrames`).
    public mutating func keep(_ count: Int, takingBackNewest: @escaping @Sendable () -> Void) {
        limit = count
        takeBackNewest = takingBackNewest
    }

    /// Lets go of the kept boxes: a source that lends its frames the driver's buffers calls
    /// this once it has not needed a box for a while, so boxes a burst needed do not stay
    /// resident (0.6 MiB each at 640x480 YUYV, 4 MiB at 1080p). A box a frame still
    /// refers to goes with its last frame.
    public mutating func forgetBoxes() {
        boxes.removeAll()
    }

    /// How many boxes are kept for filling again.
    public var keptBoxes: Int { boxes.count }

    /// A box of `count` bytes filled by `fill`, which must write all of them.
    public mutating func storage(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> FrameStorage {
        // Frames of another size (a restart with new settings) are not kept.
        boxes.removeAll { $0.box.count != count }
        if let box = refill(fill) { return box }
        if let takeBackNewest, !boxes.isEmpty {
            takeBackNewest()
            if let box = refill(fill) { return box }
        }
        let box = FrameStorage([UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        })
        if boxes.count < limit { boxes.append(box) }
        return box
    }

    /// A kept box no frame refers to, filled by `fill`; nil when every one is held.
    private mutating func refill(_ fill: (UnsafeMutableRawBufferPointer) -> Void) -> FrameStorage? {
        for index in boxes.indices where isKnownUniquelyReferenced(&boxes[index]) {
            boxes[index].box.withUnsafeMutableBytes(fill)
            return boxes[index]
        }
        return nil
    }
}
