import VideoCore

/// What a muxer or a player needs to know of an H.264 stream before its first packet.
public struct VideoStreamFormat: Sendable, Hashable {
    public var size: FrameSize
    /// The codec's global header (SPS and PPS), as the encoder gives it: Annex B start
    /// codes from libx264, or an `avcC` record; the MP4 muxer writes either as `avcC`.
    public var extradata: [UInt8]
    /// Whether the samples are 16...235 (a camera's YUYV as it is) or 0...255 (decoded JPEG).
    public var range: ColorRange
    /// Packet timestamps count this many ticks a second.
    public var timeScale: Int32
    /// The frame rate the encoder was opened with (nominal; timestamps are the capture times).
    public var frameRate: Double
    /// The encoder that made the stream, such as "libx264".
    public var encoder: String

    public init(size: FrameSize, extradata: [UInt8], range: ColorRange, timeScale: Int32, frameRate: Double, encoder: String) {
        self.size = size
        self.extradata = extradata
        self.range = range
        self.timeScale = timeScale
        self.frameRate = frameRate
        self.encoder = encoder
    }

    /// The RFC 6381 codec string a browser's Media Source asks about, such as "avc1.64001f",
    /// from the SPS's profile, constraint flags and level.
    public var codecString: String {
        let start: Int
        if extradata.first == 1 {
            start = 1  // avcC: version, then profile, constraints, level
        } else if let sps = AnnexB.nalUnits(in: extradata).first(where: { AnnexB.unitType(extradata, $0) == 7 }) {
            start = sps.lowerBound + 1  // Annex B: the bytes after the SPS's NAL header
        } else {
            return "avc1.42e01e"
        }
        guard extradata.count >= start + 3 else { return "avc1.42e01e" }
        let hex = extradata[start..<start + 3].map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        return "avc1." + hex
    }
}

/// One encoded access unit, as the encoder gave it (Annex B from libx264).
public struct VideoPacket: Sendable {
    public var data: [UInt8]
    /// Presentation and decoding times, in `VideoStreamFormat.timeScale` ticks from the stream's start.
    public var pts: Int64
    public var dts: Int64
    public var isKeyframe: Bool
    /// When the frame was captured, as wall-clock seconds since 1970.
    public var captureTime: Double
    /// When the frame was captured, in CLOCK_MONOTONIC seconds.
    public var monotonicTime: Double

    public init(data: [UInt8], pts: Int64, dts: Int64, isKeyframe: Bool, captureTime: Double, monotonicTime: Double) {
        self.data = data
        self.pts = pts
        self.dts = dts
        self.isKeyframe = isKeyframe
        self.captureTime = captureTime
        self.monotonicTime = monotonicTime
    }
}
