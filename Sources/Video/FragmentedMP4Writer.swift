import CFFmpeg
import VideoCore

/// Writes H.264 packets as fragmented MP4 with libavformat's MP4 muxer, into a sink:
/// a file for recordings, memory for live clients.
///
/// Fragmented (`empty_moov`): the header comes first and says nothing of the length,
/// and each fragment (`moof` + `mdat`, cut at keyframes and at least every
/// `fragmentSeconds`) is complete on its own, so a file cut short by a crash or a power
/// loss plays up to its last whole fragment. The sink only appends; nothing is written
/// twice, so the output need not be seekable.
public final class FragmentedMP4Writer {
    /// Takes the next bytes of the file; returns 0, or an errno (ENOSPC) to stop writing.
    public typealias Sink = (UnsafeRawBufferPointer) -> Int32

    /// How a player should turn the picture upright: the camera's `rotate` (clockwise
    /// degrees) and flips, written as the track's display matrix, not into the pixels.
    public struct DisplayTransform: Sendable, Hashable {
        public var rotate: Int
        public var flipHorizontal: Bool
        public var flipVertical: Bool

        public init(rotate: Int = 0, flipHorizontal: Bool = false, flipVertical: Bool = false) {
            self.rotate = rotate
            self.flipHorizontal = flipHorizontal
            self.flipVertical = flipVertical
        }

        public static let upright = DisplayTransform()
    }

    public let format: VideoStreamFormat
    public private(set) var packetsWritten = 0
    public private(set) var bytesWritten = 0
    /// The bytes the sink took up to the end of the last whole fragment (or the header):
    /// where to cut a file whose last write failed, so that it still plays.
    public private(set) var committedBytes = 0
    /// The span of the packets written so far, in seconds (first timestamp to the end of the last frame).
    public private(set) var duration = 0.0
    /// Ticks a second of the track's time (the `mdhd` timescale), which the muxer chooses
    /// from the stream's: what a fragment written elsewhere must count in.
    public private(set) var trackTimeScale: Int32 = 0

    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let stream: UnsafeMutablePointer<AVStream>
    private let output: Output
    private let packet: UnsafeMutablePointer<AVPacket>
    private var firstDTS: Int64?
    private var finished = false
    private let frameTicks: Int64

    /// The sink and the first error it gave, reached from FFmpeg's write callback.
    private final class Output {
        let sink: Sink
        var errno: Int32 = 0
        var bytes = 0
        init(_ sink: @escaping Sink) { self.sink = sink }
    }

    /// Writes the file's header at once (`ftyp` and an empty `moov`).
    public init(format: VideoStreamFormat, transform: DisplayTransform = .upright, fragmentSeconds: Double = 1,
                sink: @escaping Sink) throws(VideoError) {
        try FFmpegLibraries.load()
        guard !format.extradata.isEmpty else {
            throw VideoError(.ffmpeg, "the encoder gave no SPS/PPS header; an MP4 track cannot be written without one")
        }
        self.format = format
        let output = Output(sink)
        self.output = output
        frameTicks = Int64((Double(format.timeScale) / max(1, format.frameRate)).rounded())
        guard let packet = av_packet_alloc() else { throw VideoError(.ffmpeg, "av_packet_alloc failed: out of memory") }
        self.packet = packet
        var context: UnsafeMutablePointer<AVFormatContext>?
        let stream: UnsafeMutablePointer<AVStream>
        do throws(VideoError) {
            try VideoError.check(avformat_alloc_output_context2(&context, nil, "mp4", nil), "the MP4 muxer")
            guard let context, let made = avformat_new_stream(context, nil) else {
                throw VideoError(.ffmpeg, "avformat_new_stream failed: out of memory")
            }
            try Self.describe(made, format, transform)
            context.pointee.pb = try Self.makeIO(output)
            context.pointee.flags |= AVFMT_FLAG_FLUSH_PACKETS | AVFMT_FLAG_BITEXACT
            stream = made
        } catch {
            // `stream` is not set yet, so deinit will not run: free here what it would.
            var packet: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&packet)
            Self.free(context)
            throw error
        }
        self.context = context
        self.stream = stream
        // Every stored property is set from here on, so a failure runs deinit, which frees
        // the packet and the context: freeing them here too would free them twice (a sink
        // that is full from the first byte failed exactly so).
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        av_dict_set(&options, "movflags", "empty_moov+default_base_moof+frag_keyframe", 0)
        av_dict_set(&options, "frag_duration", String(Int(fragmentSeconds * 1_000_000)), 0)
        try check(avformat_write_header(self.context, &options), "writing the MP4 header")
        avio_flush(self.context!.pointee.pb)
        try check(0, "writing the MP4 header")
        committedBytes = output.bytes
        trackTimeScale = stream.pointee.time_base.den
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&packet)
        Self.free(context)
    }

    private static func free(_ context: UnsafeMutablePointer<AVFormatContext>?) {
        guard let context else { return }
        if let io = context.pointee.pb {
            av_freep(&io.pointee.buffer)
            var optional: UnsafeMutablePointer<AVIOContext>? = io
            avio_context_free(&optional)
            context.pointee.pb = nil
        }
        avformat_free_context(context)
    }

    private static func describe(_ stream: UnsafeMutablePointer<AVStream>, _ format: VideoStreamFormat,
                                 _ transform: DisplayTransform) throws(VideoError) {
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = AV_CODEC_ID_H264
        parameters.pointee.width = Int32(format.size.width)
        parameters.pointee.height = Int32(format.size.height)
        parameters.pointee.color_range = format.range == .full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
        parameters.pointee.color_space = AVCOL_SPC_SMPTE170M
        parameters.pointee.color_primaries = AVCOL_PRI_SMPTE170M
        parameters.pointee.color_trc = AVCOL_TRC_SMPTE170M
        guard let extradata = av_mallocz(format.extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
            throw VideoError(.ffmpeg, "av_mallocz failed: out of memory")
        }
        extradata.copyMemory(from: format.extradata, byteCount: format.extradata.count)
        parameters.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
        parameters.pointee.extradata_size = Int32(format.extradata.count)
        stream.pointee.time_base = AVRational(num: 1, den: format.timeScale)
        stream.pointee.avg_frame_rate = av_d2q(format.frameRate, 100_000)
        if transform != .upright {
            guard let side = av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, 9 * 4) else {
                throw VideoError(.ffmpeg, "av_stream_new_side_data failed: out of memory")
            }
            side.withMemoryRebound(to: Int32.self, capacity: 9) { matrix in
                // Clockwise, as camd's `rotate` (FFmpeg 5.1's setter takes clockwise degrees; its
                // getter answers counterclockwise, hence the sign in `VideoFile`).
                av_display_rotation_set(matrix, Double(transform.rotate))
                av_display_matrix_flip(matrix, transform.flipHorizontal ? 1 : 0, transform.flipVertical ? 1 : 0)
            }
        }
    }

    /// An AVIO context whose writes go to `output`'s sink; nothing is ever read or sought.
    private static func makeIO(_ output: Output) throws(VideoError) -> UnsafeMutablePointer<AVIOContext> {
        let size = 64 * 1024
        guard let buffer = av_malloc(size) else { throw VideoError(.ffmpeg, "av_malloc failed: out of memory") }
        let opaque = Unmanaged.passUnretained(output).toOpaque()
        guard let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(size), 1, opaque, nil,
                                          { opaque, bytes, count in
            guard let opaque, let bytes else { return -EINVAL }
            let output = Unmanaged<Output>.fromOpaque(opaque).takeUnretainedValue()
            if output.errno != 0 { return -output.errno }
            let status = output.sink(UnsafeRawBufferPointer(start: bytes, count: Int(count)))
            if status != 0 {
                output.errno = status
                return -status
            }
            output.bytes += Int(count)
            return count
        }, nil) else {
            var buffer: UnsafeMutableRawPointer? = buffer
            av_freep(&buffer)
            throw VideoError(.ffmpeg, "avio_alloc_context failed: out of memory")
        }
        io.pointee.seekable = 0
        return io
    }

    /// A failure of the sink (a full disk) is reported as the sink's errno, not FFmpeg's code.
    private func check(_ status: Int32, _ what: String) throws(VideoError) {
        if output.errno != 0 {
            throw VideoError(.write(errno: output.errno), "\(what): \(VideoError.message(-output.errno))")
        }
        try VideoError.check(status, what)
    }

    /// Appends one packet; a fragment goes to the sink when the next keyframe (or the
    /// fragment duration) is reached.
    public func write(_ video: VideoPacket) throws(VideoError) {
        guard let context, !finished else { throw VideoError(.ffmpeg, "the MP4 writer is finished") }
        try check(av_new_packet(packet, Int32(video.data.count)), "allocating a packet")
        defer { av_packet_unref(packet) }
        video.data.withUnsafeBytes { bytes in
            packet.pointee.data.update(from: bytes.bindMemory(to: UInt8.self).baseAddress!, count: video.data.count)
        }
        let first = firstDTS ?? video.dts
        firstDTS = first
        packet.pointee.pts = video.pts - first
        packet.pointee.dts = video.dts - first
        packet.pointee.duration = frameTicks
        packet.pointee.flags = video.isKeyframe ? AV_PKT_FLAG_KEY : 0
        packet.pointee.stream_index = 0
        duration = Double(video.pts - first + frameTicks) / Double(format.timeScale)
        av_packet_rescale_ts(packet, AVRational(num: 1, den: format.timeScale), stream.pointee.time_base)
        try check(av_write_frame(context, packet), "writing a frame")
        packetsWritten += 1
        bytesWritten = output.bytes
        // The muxer hands over whole fragments, and each write is flushed (AVFMT_FLAG_FLUSH_PACKETS).
        committedBytes = output.bytes
    }

    /// Writes the last fragment and the trailer; the sink has every byte when this returns.
    public func finish() throws(VideoError) {
        guard let context, !finished else { return }
        finished = true
        try check(av_write_trailer(context), "finishing the MP4 file")
        avio_flush(context.pointee.pb)
        try check(0, "flushing the MP4 file")
        bytesWritten = output.bytes
        committedBytes = output.bytes
    }
}
