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
    /// The box the bytes are kept in; a capture source reuses it once no frame refers to it.
    public let storage: FrameStorage
    /// The frame's bytes.
    public var bytes: [UInt8] { storage.bytes }
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

/// The bytes of one frame, in a box that a `FrameRecycler` fills again once no frame
/// refers to it any more. `bytes` is written only by a FrameRecycler, and only while it
/// holds the one reference to the box, so no other thread can be reading it then.
public final class FrameStorage: @unchecked Sendable {  // bytes written only while uniquely referenced
    public fileprivate(set) var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }
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

    /// A box of `count` bytes filled by `fill`, which must write all of them.
    public mutating func storage(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> FrameStorage {
        // Frames of another size (a restart with new settings) are not kept.
        boxes.removeAll { $0.bytes.count != count }
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
            boxes[index].bytes.withUnsafeMutableBytes(fill)
            return boxes[index]
        }
        return nil
    }
}
