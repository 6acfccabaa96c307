import CFFmpeg
import JPEG
import VideoCore

/// A video file read with libavformat and libavcodec: what it holds (`VideoInfo`) and
/// single frames from it, for the media list and video thumbnails.
public final class VideoFile {
    /// What the media list shows of a video.
    public struct Info: Sendable, Hashable {
        /// The coded picture size, before the display matrix turns it.
        public var size: FrameSize
        /// Seconds from the first frame to the end of the last.
        public var duration: Double
        /// Clockwise degrees the track's display matrix turns the picture (0, 90, 180, 270).
        public var rotate: Int
        /// Whether the display matrix mirrors the picture left to right.
        public var mirrored: Bool
        /// The codec, such as "h264".
        public var codec: String
        /// The size a player shows: `size` turned by `rotate`.
        public var displaySize: FrameSize {
            rotate % 180 == 0 ? size : FrameSize(width: size.height, height: size.width)
        }
    }

    public let path: String
    public let info: Info
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private let streamIndex: Int32
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>

    public init(path: String) throws(VideoError) {
        try FFmpegLibraries.load()
        self.path = path
        var opening: UnsafeMutablePointer<AVFormatContext>?
        let opened = avformat_open_input(&opening, path, nil, nil)
        guard opened >= 0, let format = opening else { throw VideoError(.unreadable, "\(path) cannot be read as a video: \(VideoError.message(opened))") }
        guard let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            avformat_close_input(&opening)
            throw VideoError(.ffmpeg, "out of memory")
        }
        self.frame = frame
        self.packet = packet
        self.format = format
        do throws(VideoError) {
            try VideoError.check(avformat_find_stream_info(format, nil), "reading \(path)")
            let index = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
            guard index >= 0 else { throw VideoError(.unreadable, "\(path) has no video track") }
            streamIndex = index
            let stream = format.pointee.streams[Int(index)]!
            let parameters = stream.pointee.codecpar!
            let (rotate, mirrored) = Self.transform(of: stream)
            info = Info(size: FrameSize(width: Int(parameters.pointee.width), height: Int(parameters.pointee.height)),
                        duration: Self.duration(format, stream), rotate: rotate, mirrored: mirrored,
                        codec: String(cString: avcodec_get_name(parameters.pointee.codec_id)))
        } catch {
            var frame: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&frame)
            var packet: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&packet)
            avformat_close_input(&self.format)
            throw error
        }
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&packet)
        avcodec_free_context(&decoder)
        avformat_close_input(&format)
    }

    /// The display matrix's rotation, clockwise, to the nearest quarter turn, and whether it mirrors.
    private static func transform(of stream: UnsafeMutablePointer<AVStream>) -> (Int, Bool) {
        guard let side = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, nil) else { return (0, false) }
        return side.withMemoryRebound(to: Int32.self, capacity: 9) { matrix in
            let counterclockwise = av_display_rotation_get(matrix)
            guard counterclockwise.isFinite else { return (0, false) }
            let quarter = Int((-counterclockwise / 90).rounded())
            // A negative determinant of the 2x2 part means a mirror image.
            let determinant = Int64(matrix[0]) * Int64(matrix[4]) - Int64(matrix[1]) * Int64(matrix[3])
            return (((quarter % 4) + 4) % 4 * 90, determinant < 0)
        }
    }

    /// The container's duration; for a fragmented file cut short (no index at its end),
    /// the stream's, or the sum of its fragments as the demuxer found them.
    private static func duration(_ format: UnsafeMutablePointer<AVFormatContext>, _ stream: UnsafeMutablePointer<AVStream>) -> Double {
        if stream.pointee.duration > 0 && stream.pointee.duration != FFmpegCode.noTimestamp {
            return Double(stream.pointee.duration) * av_q2d(stream.pointee.time_base)
        }
        if format.pointee.duration > 0 && format.pointee.duration != FFmpegCode.noTimestamp {
            return Double(format.pointee.duration) / Double(AV_TIME_BASE)
        }
        return 0
    }

    /// The frame shown at `seconds` from the start, as a full-range planar image of the coded
    /// size (not yet turned upright: `info.rotate` says how). Throws `.outOfRange` for a time
    /// outside the video.
    public func frame(at seconds: Double) throws(VideoError) -> YUVImage {
        guard seconds >= 0, seconds <= max(info.duration, 0) || info.duration == 0 else {
            throw VideoError(.outOfRange, String(format: "at=%g is past the end of the video (%.3f s long)", seconds, info.duration))
        }
        guard let format else { throw VideoError(.unreadable, "\(path) is closed") }
        let stream = format.pointee.streams[Int(streamIndex)]!
        let decoder = try openDecoder(stream)
        let timeBase = stream.pointee.time_base
        let start = stream.pointee.start_time == FFmpegCode.noTimestamp ? 0 : stream.pointee.start_time
        let target = start + Int64(seconds / av_q2d(timeBase))
        // The MP4 demuxer seeks by decoding time, so with B-frames the keyframe it lands on may
        // be shown after `target`: step back further until the first frame is not past it.
        let step = Int64(2 / av_q2d(timeBase))
        var seekTo = target
        while true {
            try VideoError.check(av_seek_frame(format, streamIndex, max(seekTo, start), AVSEEK_FLAG_BACKWARD), "seeking in \(path)")
            avcodec_flush_buffers(decoder)
            switch try decode(until: target, decoder) {
            case .found(let image): return image
            case .startsAfter where seekTo > start:
                seekTo -= step
            case .startsAfter, .ended:
                throw VideoError(.outOfRange, String(format: "at=%g is past the last frame of the video (%.3f s long)",
                                                     seconds, info.duration))
            }
        }
    }

    private enum Decoded {
        case found(YUVImage)
        /// The first frame decoded is shown after the target: the seek went too far.
        case startsAfter
        /// No frame at all.
        case ended
    }

    /// Decodes from where the demuxer stands to the frame on screen at `target`: the last one
    /// shown at or before it. Only that frame is converted.
    private func decode(until target: Int64, _ decoder: UnsafeMutablePointer<AVCodecContext>) throws(VideoError) -> Decoded {
        guard let held = av_frame_alloc() else { throw VideoError(.ffmpeg, "av_frame_alloc failed: out of memory") }
        defer { var held: UnsafeMutablePointer<AVFrame>? = held; av_frame_free(&held) }
        var holding = false
        var draining = false
        while true {
            if !draining {
                let status = av_read_frame(format, packet)
                if status == FFmpegCode.endOfFile {
                    draining = true
                    avcodec_send_packet(decoder, nil)
                } else {
                    try VideoError.check(status, "reading \(path)")
                    defer { av_packet_unref(packet) }
                    guard packet.pointee.stream_index == streamIndex else { continue }
                    try VideoError.check(avcodec_send_packet(decoder, packet), "decoding \(path)")
                }
            }
            while true {
                let status = avcodec_receive_frame(decoder, frame)
                if status == FFmpegCode.again { break }
                if status == FFmpegCode.endOfFile { return holding ? .found(try Self.image(of: held)) : .ended }
                try VideoError.check(status, "decoding \(path)")
                let pts = frame.pointee.best_effort_timestamp
                if pts != FFmpegCode.noTimestamp && pts > target {
                    av_frame_unref(frame)
                    return holding ? .found(try Self.image(of: held)) : .startsAfter
                }
                av_frame_unref(held)
                av_frame_move_ref(held, frame)
                holding = true
                if pts == target { return .found(try Self.image(of: held)) }
            }
        }
    }

    private func openDecoder(_ stream: UnsafeMutablePointer<AVStream>) throws(VideoError) -> UnsafeMutablePointer<AVCodecContext> {
        if let decoder { return decoder }
        guard let codec = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id),
              let context = avcodec_alloc_context3(codec) else {
            throw VideoError(.unreadable, "\(path): no decoder for \(info.codec)")
        }
        decoder = context
        try VideoError.check(avcodec_parameters_to_context(context, stream.pointee.codecpar), "reading \(path)'s codec")
        context.pointee.thread_count = 1
        try VideoError.check(avcodec_open2(context, codec, nil), "opening the \(info.codec) decoder")
        return context
    }

    /// A decoded 4:2:0 or 4:2:2 frame as a full-range `YUVImage`.
    static func image(of frame: UnsafeMutablePointer<AVFrame>) throws(VideoError) -> YUVImage {
        let size = FrameSize(width: Int(frame.pointee.width), height: Int(frame.pointee.height))
        let subsampling: ChromaSubsampling
        switch AVPixelFormat(frame.pointee.format) {
        case AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P: subsampling = .s420
        case AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P: subsampling = .s422
        case AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUVJ444P: subsampling = .s444
        default:
            let name = av_get_pix_fmt_name(AVPixelFormat(frame.pointee.format)).map { String(cString: $0) } ?? "unknown"
            throw VideoError(.unsupportedFormat, "decoded frames in \(name) are not supported")
        }
        let full = frame.pointee.color_range == AVCOL_RANGE_JPEG
            || [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P].contains(AVPixelFormat(frame.pointee.format))
        let identity = (0...255).map { UInt8($0) }
        let tables = [full ? identity : PlaneConversion.expandLuma, full ? identity : PlaneConversion.expandChroma]
        let sources = [(frame.pointee.data.0!, Int(frame.pointee.linesize.0)),
                       (frame.pointee.data.1!, Int(frame.pointee.linesize.1)),
                       (frame.pointee.data.2!, Int(frame.pointee.linesize.2))]
        var image = YUVImage(size: size, subsampling: subsampling)
        image.withUnsafeMutablePlanes { plane, out, stride, rows in
            let (from, fromStride) = sources[plane]
            let table = tables[plane == 0 ? 0 : 1]
            table.withUnsafeBufferPointer { lut in
                for row in 0..<rows {
                    let source = from + row * fromStride, target = out + row * stride
                    for x in 0..<stride { target[x] = lut[Int(source[x])] }
                }
            }
        }
        return image
    }
}
