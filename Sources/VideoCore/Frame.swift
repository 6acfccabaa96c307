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
    public var bytes: [UInt8]
    /// The driver's frame counter; gaps mean frames were dropped.
    public var sequence: UInt32
    /// When the frame was captured, in CLOCK_MONOTONIC seconds (the driver's timestamp).
    public var monotonicTime: Double
    /// When the frame was captured, as wall-clock time in seconds since 1970.
    public var captureTime: Double

    public init(layout: FrameLayout, bytes: [UInt8], sequence: UInt32, monotonicTime: Double, captureTime: Double) {
        self.layout = layout
        self.bytes = bytes
        self.sequence = sequence
        self.monotonicTime = monotonicTime
        self.captureTime = captureTime
    }
}
