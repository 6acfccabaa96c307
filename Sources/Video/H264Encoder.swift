import CFFmpeg
import Foundation
import VideoCore

/// One H.264 encoder from FFmpeg's libavcodec, opened for one size and rate. Used by one
/// thread at a time (the camera's video stage); pictures come from `VideoPicture`.
///
/// Opened for live use by default: no B-frames and no look-ahead (x264's `zerolatency`), so
/// every packet leaves as soon as its picture is encoded and decoding order is display order.
/// A movie rendered from files (a timelapse) is opened `forFile`: x264's look-ahead and
/// B-frames make it about half the size, as the `ffmpeg` command line's would be.
public final class H264Encoder {
    /// What the stream is for.
    public enum Purpose: Sendable {
        /// A camera's live frames: each packet out at once.
        case live
        /// A movie made from stored pictures, where no one waits for a frame.
        case file
    }

    /// The encoder that runs, such as "libx264".
    public let name: String
    /// Why each encoder tried before this one was not used, one line each.
    public let notUsed: [String]
    public private(set) var format: VideoStreamFormat
    public private(set) var framesEncoded = 0
    public private(set) var keyframesRequested = 0

    private let context: UnsafeMutablePointer<AVCodecContext>
    private var packet: UnsafeMutablePointer<AVPacket>
    /// VA-API only: the device and the frames the picture is uploaded to.
    private var hardwareFrames: UnsafeMutablePointer<AVBufferRef>?
    private var hardwareDevice: UnsafeMutablePointer<AVBufferRef>?
    private var uploaded: UnsafeMutablePointer<AVFrame>?
    private var firstMonotonic: Double?
    private var lastPTS: Int64?
    private var wantsKeyframe = false
    /// Capture times by pts, for the packets still inside the encoder.
    private var pending: [Int64: (capture: Double, monotonic: Double)] = [:]

    /// Timestamps count 90 kHz ticks, as MPEG video does.
    public static let timeScale: Int32 = 90_000

    /// Opens the encoder `settings` choose: `auto` tries the hardware encoders first and
    /// falls back to libx264; a named encoder is the only one tried.
    public init(settings: VideoEncoderSettings, size: FrameSize, frameRate: Double, range: ColorRange,
                purpose: Purpose = .live) throws(VideoError) {
        try FFmpegLibraries.load()
        guard size.width % 2 == 0, size.height % 2 == 0 else {
            throw VideoError(.unsupportedFormat, "H.264 in 4:2:0 needs an even width and height; \(size) is not")
        }
        let candidates = settings.encoder == .auto ? VideoEncoderSettings.Choice.automaticOrder : [settings.encoder]
        var reasons: [String] = []
        for choice in candidates {
            do throws(VideoError) {
                let opened = try Self.open(choice, settings: settings, size: size, frameRate: frameRate, range: range,
                                           purpose: purpose)
                guard let packet = av_packet_alloc() else { throw VideoError(.ffmpeg, "av_packet_alloc failed: out of memory") }
                name = choice.rawValue
                notUsed = reasons
                context = opened.context
                hardwareDevice = opened.device
                hardwareFrames = opened.frames
                self.packet = packet
                format = VideoStreamFormat(size: size, extradata: Self.extradata(of: opened.context), range: range,
                                           timeScale: Self.timeScale, frameRate: frameRate, encoder: choice.rawValue)
                return
            } catch {
                reasons.append("\(choice.rawValue): \(error.description)")
            }
        }
        throw VideoError(.noEncoder, "no H.264 encoder could be opened: " + reasons.joined(separator: "; "))
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&packet)
        av_frame_free(&uploaded)
        av_buffer_unref(&hardwareFrames)
        av_buffer_unref(&hardwareDevice)
    }

    private struct Opened {
        var context: UnsafeMutablePointer<AVCodecContext>
        var device: UnsafeMutablePointer<AVBufferRef>?
        var frames: UnsafeMutablePointer<AVBufferRef>?
    }

    private static func open(_ choice: VideoEncoderSettings.Choice, settings: VideoEncoderSettings, size: FrameSize,
                             frameRate: Double, range: ColorRange, purpose: Purpose) throws(VideoError) -> Opened {
        guard let codec = avcodec_find_encoder_by_name(choice.rawValue) else {
            throw VideoError(.noEncoder, "not built into this FFmpeg")
        }
        var device: UnsafeMutablePointer<AVBufferRef>?
        if choice == .vaapi {
            let status = av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VAAPI, nil, nil, 0)
            guard status >= 0 else { throw VideoError(.noEncoder, "no VA-API device (\(VideoError.message(status)))") }
        }
        guard let context = avcodec_alloc_context3(codec) else {
            av_buffer_unref(&device)
            throw VideoError(.ffmpeg, "avcodec_alloc_context3 failed: out of memory")
        }
        var opened = Opened(context: context, device: device, frames: nil)
        do throws(VideoError) {
            try configure(opened, choice: choice, settings: settings, size: size, frameRate: frameRate, range: range)
            // A file may reorder frames (B-frames): the libavcodec default of the preset decides.
            if purpose == .file { context.pointee.max_b_frames = -1 }
            if let device {
                opened.frames = try hardwareFrameContext(device, size: size)
                context.pointee.hw_frames_ctx = av_buffer_ref(opened.frames)
                context.pointee.pix_fmt = AV_PIX_FMT_VAAPI
            }
            var options: OpaquePointer?
            defer { av_dict_free(&options) }
            if choice == .libx264 {
                av_dict_set(&options, "preset", "veryfast", 0)
                if purpose == .live { av_dict_set(&options, "tune", "zerolatency", 0) }
                av_dict_set(&options, "forced-idr", "1", 0)
                if settings.bitrate == nil { av_dict_set(&options, "crf", String(settings.crf), 0) }
            }
            let status = avcodec_open2(context, codec, &options)
            if status < 0 && choice == .v4l2m2m {
                throw VideoError(.noEncoder, "no V4L2 memory-to-memory H.264 encoder on this machine (\(VideoError.message(status)))")
            }
            try VideoError.check(status, "opening the encoder")
            return opened
        } catch {
            var context: UnsafeMutablePointer<AVCodecContext>? = opened.context
            avcodec_free_context(&context)
            av_buffer_unref(&opened.frames)
            av_buffer_unref(&opened.device)
            throw error
        }
    }

    private static func configure(_ opened: Opened, choice: VideoEncoderSettings.Choice, settings: VideoEncoderSettings,
                                  size: FrameSize, frameRate: Double, range: ColorRange) throws(VideoError) {
        let c = opened.context
        c.pointee.width = Int32(size.width)
        c.pointee.height = Int32(size.height)
        c.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        c.pointee.time_base = AVRational(num: 1, den: timeScale)
        let rate = av_d2q(frameRate, 100_000)
        c.pointee.framerate = rate
        c.pointee.gop_size = Int32(max(1, (settings.keyframeInterval * frameRate).rounded()))
        c.pointee.max_b_frames = 0
        // MP4 keeps SPS and PPS in the track header (avcC), not before every keyframe.
        c.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        // A camera's 4:2:2 and 4:2:0 planes are BT.601, as JPEG's; the range is the frame's own.
        c.pointee.color_range = range == .full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
        c.pointee.colorspace = AVCOL_SPC_SMPTE170M
        c.pointee.color_primaries = AVCOL_PRI_SMPTE170M
        c.pointee.color_trc = AVCOL_TRC_SMPTE170M
        let bitrate = settings.bitrate ?? (choice == .libx264 ? nil
            : VideoEncoderSettings.defaultBitrate(width: size.width, height: size.height, frameRate: frameRate))
        if let bitrate {
            c.pointee.bit_rate = Int64(bitrate)
            // A buffer of one second, so the rate holds over short spans, as a live link needs.
            c.pointee.rc_max_rate = Int64(bitrate)
            c.pointee.rc_buffer_size = Int32(clamping: bitrate)
        }
    }

    private static func hardwareFrameContext(_ device: UnsafeMutablePointer<AVBufferRef>, size: FrameSize) throws(VideoError)
        -> UnsafeMutablePointer<AVBufferRef> {
        guard let frames = av_hwframe_ctx_alloc(device) else { throw VideoError(.ffmpeg, "av_hwframe_ctx_alloc failed") }
        frames.pointee.data.withMemoryRebound(to: AVHWFramesContext.self, capacity: 1) { context in
            context.pointee.format = AV_PIX_FMT_VAAPI
            context.pointee.sw_format = AV_PIX_FMT_YUV420P
            context.pointee.width = Int32(size.width)
            context.pointee.height = Int32(size.height)
            context.pointee.initial_pool_size = 4
        }
        let status = av_hwframe_ctx_init(frames)
        guard status >= 0 else {
            var unref: UnsafeMutablePointer<AVBufferRef>? = frames
            av_buffer_unref(&unref)
            throw VideoError.ffmpeg(status, "VA-API surfaces for \(size)")
        }
        return frames
    }

    private static func extradata(of context: UnsafeMutablePointer<AVCodecContext>) -> [UInt8] {
        guard let data = context.pointee.extradata, context.pointee.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(context.pointee.extradata_size)))
    }

    /// Makes the next picture a keyframe (IDR), so a player that joins now need not wait
    /// a whole keyframe interval.
    public func requestKeyframe() {
        wantsKeyframe = true
        keyframesRequested += 1
    }

    /// Encodes one picture captured at `monotonicTime` and returns the packets that are ready.
    public func encode(_ picture: VideoPicture, monotonicTime: Double, captureTime: Double) throws(VideoError) -> [VideoPacket] {
        let first = firstMonotonic ?? monotonicTime
        firstMonotonic = first
        // Capture times decide the timestamps, on the grid of the nominal rate: a frame the stage
        // skipped leaves a gap of whole frames, and frames a driver handed over in a burst (late,
        // then back to back) are spread one frame apart, so timestamps always rise by at least a
        // frame and players that assume the nominal rate never see two frames at one time.
        let tick = Double(Self.timeScale) / format.frameRate
        let onGrid = Int64((((monotonicTime - first) * Double(Self.timeScale)) / tick).rounded() * tick)
        let pts = lastPTS.map { max($0 + Int64(tick.rounded()), onGrid) } ?? 0
        lastPTS = pts
        pending[pts] = (captureTime, monotonicTime)
        var input = picture.frame
        if let hardwareFrames { input = try upload(picture, into: hardwareFrames) }
        input.pointee.pts = pts
        input.pointee.pict_type = wantsKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        input.pointee.color_range = picture.range == .full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
        wantsKeyframe = false
        try VideoError.check(avcodec_send_frame(context, input), "encoding a frame")
        framesEncoded += 1
        return try receive()
    }

    private func upload(_ picture: VideoPicture, into frames: UnsafeMutablePointer<AVBufferRef>) throws(VideoError)
        -> UnsafeMutablePointer<AVFrame> {
        if uploaded == nil { uploaded = av_frame_alloc() }
        guard let uploaded else { throw VideoError(.ffmpeg, "av_frame_alloc failed: out of memory") }
        av_frame_unref(uploaded)
        try VideoError.check(av_hwframe_get_buffer(frames, uploaded, 0), "a VA-API surface")
        try VideoError.check(av_hwframe_transfer_data(uploaded, picture.frame, 0), "uploading to VA-API")
        return uploaded
    }

    /// Ends the stream: every packet still inside the encoder.
    public func flush() throws(VideoError) -> [VideoPacket] {
        let status = avcodec_send_frame(context, nil)
        if status < 0 && status != FFmpegCode.endOfFile { throw VideoError.ffmpeg(status, "flushing the encoder") }
        return try receive()
    }

    private func receive() throws(VideoError) -> [VideoPacket] {
        var packets: [VideoPacket] = []
        while true {
            let status = avcodec_receive_packet(context, packet)
            if status == FFmpegCode.again || status == FFmpegCode.endOfFile { break }
            try VideoError.check(status, "receiving a packet")
            defer { av_packet_unref(packet) }
            let p = packet.pointee
            let data = Array(UnsafeBufferPointer(start: p.data, count: Int(p.size)))
            let times = pending.removeValue(forKey: p.pts) ?? (0, 0)
            let dts = p.dts == FFmpegCode.noTimestamp ? p.pts : p.dts
            packets.append(VideoPacket(data: data, pts: p.pts, dts: dts, isKeyframe: p.flags & AV_PKT_FLAG_KEY != 0,
                                       captureTime: times.capture, monotonicTime: times.monotonic))
            if format.extradata.isEmpty { format.extradata = Self.extradata(of: context) }
        }
        // Entries for frames the encoder dropped must not pile up.
        if pending.count > 64, let oldest = packets.last?.pts { pending = pending.filter { $0.key > oldest } }
        return packets
    }
}
