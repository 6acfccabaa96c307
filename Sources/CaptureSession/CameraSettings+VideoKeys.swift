import Video

// The H.264 stage and recordings ([camera.video] in camd.toml, "video" in the API).
extension CameraSettings {
    static let videoKeys: [Key] = [
        Key("video.encoder", .choice(VideoEncoderSettings.Choice.allCases.map(\.rawValue)),
            get: { $0.video.encoder.encoder.rawValue },
            set: { settings, name in settings.video.encoder.encoder = VideoEncoderSettings.Choice(rawValue: name) ?? .auto },
            default: "auto", "\"auto\"", restart: .video,
            "The H.264 encoder: auto tries h264_v4l2m2m (a Raspberry Pi's), then h264_vaapi (Intel, AMD), then libx264."),
        Key("video.bitrate", bitrateReader,
            at: \.video.encoder.bitrate, "none (constant quality, crf)", restart: .video,
            "Target bits per second; without it libx264 encodes at constant quality (crf) and hardware encoders at about 0.08 bit per pixel."),
        Key("video.crf", .wholeNumber(0...51, "a whole number from 0 (lossless) to 51"), at: \.video.encoder.crf,
            default: VideoEncoderSettings.defaultCRF, "23", restart: .video,
            "libx264's constant quality when no bitrate is set: lower is better and bigger."),
        Key("video.keyframe_interval", .duration("a duration from 0.1 s to 60 s, such as \"2s\"", { $0 >= 0.1 && $0 <= 60 }),
            at: \.video.encoder.keyframeInterval, default: VideoEncoderSettings.defaultKeyframeInterval, "2", restart: .video,
            "Seconds between keyframes: where a continuous recording's files are cut and a player can start."),
        Key("video.record", .choice(VideoSettings.RecordMode.allCases.map(\.rawValue)),
            get: { $0.video.record.rawValue },
            set: { settings, mode in settings.video.record = VideoSettings.RecordMode(rawValue: mode) ?? .off },
            default: "off", "\"off\"", restart: .none,
            "continuous records whenever the camera runs, in files of `segment`; off records only when asked."),
        Key("video.segment", .duration("a duration from 1 s to 24 h, such as \"10m\"", { $0 >= 1 && $0 <= 86_400 }),
            at: \.video.segmentSeconds, default: VideoSettings.defaultSegmentSeconds, "600 (10 minutes)", restart: .none,
            "The length of each file of a continuous recording; files end at the first keyframe after it."),
        Key("video.keep_count", .wholeNumber(1...Int.max, "a whole number above 0"), at: \.video.keepCount, "no limit",
            restart: .none, "Keep at most this many of the camera's movies; the oldest go first."),
        Key("video.keep_bytes", .byteSize("a whole number of bytes above 0, or a size such as \"500M\" or \"2G\""),
            at: \.video.keepBytes, "no limit", restart: .none, "Keep at most this many bytes of the camera's movies."),
        Key("video.keep_age", .duration("a number of seconds above 0 or a duration such as \"12h\" or \"7d\"", { $0 > 0 }),
            at: \.video.keepSeconds, "no limit", restart: .none, "Delete the camera's movies older than this."),
    ]

    /// A bit rate: a whole number of bits per second, or text with a decimal unit.
    static let bitrateReader = ValueReader<Int>(
        "a bit rate from 1 to 10G bits per second, such as \"2M\" or \"800k\" (k = 1000, M = 1000000)",
        read: { value throws(ValueProblem) in
            switch value {
            case .integer(let bits):
                guard bits >= 1, bits <= 10_000_000_000 else { throw .invalid }
                return Int(bits)
            case .number(let real):
                guard let whole = real.exactWhole, whole >= 1, whole <= 10_000_000_000 else { throw .invalid }
                return Int(whole)
            case .string(let text), .text(let text):
                guard let bits = bitrate(parsing: text) else { throw .invalid }
                return bits
            default: throw .wrongType
            }
        }, write: { .string(bitrateText($0)) })

    /// Bits per second from "2M", "800k", "2.5m" or a plain number; nil when malformed or not above 0.
    static func bitrate(parsing text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("k", 1e3), ("m", 1e6), ("g", 1e9)]
        var body = Substring(trimmed), scale = 1.0
        if let unit = units.first(where: { trimmed.hasSuffix($0.0) }) {
            body = body.dropLast()
            scale = unit.1
        }
        guard !body.isEmpty, body.allSatisfy(\.isDecimalDigitOrPoint), let value = Double(body) else { return nil }
        let bits = value * scale
        guard bits >= 1, bits <= 1e10 else { return nil }
        return Int(bits.rounded())
    }

    /// "2M" for 2000000, "800k" for 800000, else the plain number.
    static func bitrateText(_ bits: Int) -> String {
        if bits % 1_000_000 == 0 { return "\(bits / 1_000_000)M" }
        if bits % 1_000 == 0 { return "\(bits / 1_000)k" }
        return String(bits)
    }
}
