import VideoCore

/// A frame encoded as JPEG once and shared by every consumer that wants it
/// (snapshot, stream clients, photo output).
public struct EncodedFrame: Sendable {
    public var jpeg: [UInt8]
    public var sequence: UInt32
    /// Wall-clock capture time, seconds since 1970.
    public var captureTime: Double
    /// CLOCK_MONOTONIC capture time, seconds.
    public var monotonicTime: Double
    public var size: FrameSize
    /// The camera's pixel format the JPEG was made from.
    public var sourceFormat: PixelFormat
    /// How long encoding took, in seconds (0 for MJPEG passed through).
    public var encodeSeconds: Double

    public init(jpeg: [UInt8], sequence: UInt32, captureTime: Double, monotonicTime: Double, size: FrameSize,
                sourceFormat: PixelFormat, encodeSeconds: Double) {
        self.jpeg = jpeg
        self.sequence = sequence
        self.captureTime = captureTime
        self.monotonicTime = monotonicTime
        self.size = size
        self.sourceFormat = sourceFormat
        self.encodeSeconds = encodeSeconds
    }
}
