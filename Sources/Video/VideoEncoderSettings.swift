/// How a camera's H.264 is encoded (`[camera.video]`).
public struct VideoEncoderSettings: Sendable, Hashable {
    /// Which encoder: `auto` tries the hardware ones first and falls back to libx264.
    public enum Choice: String, Sendable, Hashable, CaseIterable {
        case auto
        /// A Raspberry Pi's (and other boards') V4L2 memory-to-memory encoder.
        case v4l2m2m = "h264_v4l2m2m"
        /// Intel and AMD GPUs through VA-API.
        case vaapi = "h264_vaapi"
        /// x264 in software.
        case libx264

        /// The encoders `auto` tries, in order.
        public static let automaticOrder: [Choice] = [.v4l2m2m, .vaapi, .libx264]
    }

    public var encoder: Choice
    /// Target bits per second; nil encodes at constant quality (`crf`) where the encoder
    /// can, and at `defaultBitrate` where it cannot (the hardware encoders).
    public var bitrate: Int?
    /// Constant quality for libx264: 0 (lossless) to 51; 23 is x264's default, lower is better.
    public var crf: Int
    /// Seconds from one keyframe to the next: where a recording can be cut and a player can join.
    public var keyframeInterval: Double

    public static let defaultCRF = 23
    public static let defaultKeyframeInterval = 2.0

    public init(encoder: Choice = .auto, bitrate: Int? = nil, crf: Int = VideoEncoderSettings.defaultCRF,
                keyframeInterval: Double = VideoEncoderSettings.defaultKeyframeInterval) {
        self.encoder = encoder
        self.bitrate = bitrate
        self.crf = crf
        self.keyframeInterval = keyframeInterval
    }

    /// A bitrate for encoders without constant quality: about 0.1 bit per pixel per frame
    /// (2.2 Mbit/s at 720p30), at least 500 kbit/s.
    public static func defaultBitrate(width: Int, height: Int, frameRate: Double) -> Int {
        max(500_000, Int(Double(width * height) * frameRate * 0.08))
    }
}
