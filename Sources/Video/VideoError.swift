import Foundation
import CFFmpeg

/// A failure in the video layer, saying what failed and, where it can, what to do.
public struct VideoError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// FFmpeg refused or failed an operation.
        case ffmpeg
        /// No H.264 encoder could be opened.
        case noEncoder
        /// The frames' pixel format cannot be fed to the encoder.
        case unsupportedFormat
        /// The file is not a video camd can read.
        case unreadable
        /// Writing the output failed; `errno` says why (ENOSPC for a full disk).
        case write(errno: Int32)
        /// A time outside the video was asked for.
        case outOfRange
        /// FFmpeg's libraries are not installed (or not the version camd was built against).
        case unavailable
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    /// Whether writing failed because the disk (or the user's quota) is full.
    public var isDiskFull: Bool {
        if case .write(let code) = kind { return code == ENOSPC || code == EDQUOT }
        return false
    }

    /// FFmpeg's message for an error code (`av_strerror`).
    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func ffmpeg(_ code: Int32, _ what: String) -> VideoError {
        VideoError(.ffmpeg, "\(what): \(message(code))")
    }

    /// Passes a non-negative FFmpeg result through; a negative one becomes an error naming `what`.
    @discardableResult
    static func check(_ code: Int32, _ what: @autoclosure () -> String) throws(VideoError) -> Int32 {
        if code < 0 { throw ffmpeg(code, what()) }
        return code
    }
}

/// FFmpeg's libraries, which camd loads when video is first used instead of linking them
/// (CFFmpeg's stubs; issue 16). Every entry point of this module that calls FFmpeg asks for
/// them first, so a missing library is an error for the one who asked, not an abort.
public enum FFmpegLibraries {
    public static func load() throws(VideoError) {
        if let failed = CFFmpeg_load() {
            throw VideoError(.unavailable, "FFmpeg's libraries could not be loaded (\(String(cString: failed))); "
                + "video needs them: install libavcodec59, libavformat59 and libavutil57 (scripts/install-deps)")
        }
        quiet
    }

    /// FFmpeg writes its own messages to stderr; camd reports failures through return codes
    /// in its own words, so the library's log stays quiet unless `CAMD_FFMPEG_LOG=1` asks
    /// (for debugging an encoder that will not open). Set once, before FFmpeg is first used.
    private static let quiet: Void = {
        av_log_set_level(getenv("CAMD_FFMPEG_LOG") != nil ? AV_LOG_VERBOSE : AV_LOG_QUIET)
    }()
}

/// FFmpeg's error codes that callers test for.
enum FFmpegCode {
    static let again = CFFmpeg_AVERROR_EAGAIN()
    static let endOfFile = CFFmpeg_AVERROR_EOF()
    static let noTimestamp = CFFmpeg_AV_NOPTS_VALUE()
}

