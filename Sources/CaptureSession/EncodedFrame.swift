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
    /// The live stream's copy with the configured overlay drawn in (`stream_overlay`),
    /// made once per frame for every stream client; nil when the stream shows `jpeg` itself.
    public var streamJPEG: [UInt8]?
    /// `jpeg` itself carries the stream overlay and no plain copy was made: only stream
    /// clients wanted this frame (`FrameHub.wantsPlainJPEG`), so it was encoded once, for them.
    /// Never served as a snapshot.
    public var overlaidOnly: Bool
    /// `jpeg` tagged for a snapshot, made on the encoder thread for a JPEG made ahead of a
    /// poll (`EncoderWorker`), so the poll answered on the event loop builds no EXIF there.
    public var snapshot: TaggedJPEG?

    /// What a live stream client is sent.
    public var jpegForStream: [UInt8] { streamJPEG ?? jpeg }

    public init(jpeg: [UInt8], sequence: UInt32, captureTime: Double, monotonicTime: Double, size: FrameSize,
                sourceFormat: PixelFormat, encodeSeconds: Double, streamJPEG: [UInt8]? = nil, overlaidOnly: Bool = false) {
        self.jpeg = jpeg
        self.sequence = sequence
        self.captureTime = captureTime
        self.monotonicTime = monotonicTime
        self.size = size
        self.sourceFormat = sourceFormat
        self.encodeSeconds = encodeSeconds
        self.streamJPEG = streamJPEG
        self.overlaidOnly = overlaidOnly
    }
}
