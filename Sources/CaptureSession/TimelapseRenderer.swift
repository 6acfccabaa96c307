import JPEG
import SystemPackage
import Video
import VideoCore
#if canImport(Glibc)
import Glibc
#endif

/// Renders saved photos, oldest first, into one H.264 movie (fragmented MP4) at a fixed
/// frame rate: photo i is shown at i / fps seconds, whatever its capture time.
///
/// Memory stays that of one photo whatever their number: each is read, decoded at the
/// smallest DCT scale that still covers the movie's size, fitted into it ("contain" with
/// black bars, turned upright as its EXIF Orientation says, as camd's image pipeline does
/// for snapshots and contact sheets), encoded and written before the next is read.
/// A photo of another size than the first is fitted the same way, not refused.
///
/// Blocking, and not thread-safe: `TimelapseJobs` runs each render on a thread of its
/// own, never on the cooperative pool or inside an actor's turn.
public final class TimelapseRenderer {
    /// What a finished render made.
    public struct Result: Sendable, Hashable {
        /// Frames in the movie: the photos that could be read.
        public var frames: Int
        /// Photos skipped: deleted since the job started, or not readable as a JPEG.
        public var skipped: Int
        public var size: FrameSize
        /// frames / fps, in seconds.
        public var duration: Double
        /// The movie's length in bytes.
        public var bytes: Int
        /// The H.264 encoder that ran, such as "libx264".
        public var encoder: String
    }

    /// The largest photo file read: a larger one is skipped rather than read into memory.
    public static let largestPhoto = 64 << 20

    private let settings: TimelapseSettings
    private let encoderSettings: VideoEncoderSettings
    private let pipeline = ImagePipeline()
    /// The fitted photo, reused from frame to frame.
    private var fitted = YUVImage()

    public init(settings: TimelapseSettings, encoder: VideoEncoderSettings = VideoEncoderSettings()) {
        self.settings = settings
        encoderSettings = encoder
    }

    /// Renders the photo files at `paths` (oldest first) into `sink`, counting them in
    /// `progress` and stopping before the next photo once `progress` is cancelled.
    /// - Parameter output: where the sink writes, for messages only.
    /// - Throws: `.cancelled`; `.diskFull` when the sink answers ENOSPC or EDQUOT;
    ///   `.failed` when no photo could be read, the encoder would not open or a write failed.
    public func render(_ paths: [String], into sink: @escaping FragmentedMP4Writer.Sink, output: String,
                       progress: TimelapseProgress) throws(TimelapseError) -> Result {
        var size = settings.size
        var encoder: H264Encoder?
        var picture: VideoPicture?
        var writer: FragmentedMP4Writer?
        var frames = 0
        var firstProblem: String?

        func write(_ packets: [VideoPacket], _ encoder: H264Encoder) throws(VideoError) {
            for packet in packets {
                // The writer needs the encoder's SPS/PPS, which some encoders give only with the first packet.
                if writer == nil { writer = try FragmentedMP4Writer(format: encoder.format, sink: sink) }
                try writer!.write(packet)
            }
        }

        for path in paths {
            if progress.isCancelled { throw .cancelled }
            let movieSize: FrameSize
            do throws(SkippedPhoto) {
                movieSize = try fit(try Self.read(path), path: path, size: &size)
            } catch {
                firstProblem = firstProblem ?? error.reason
                progress.update { $0.done += 1; $0.skipped += 1 }
                continue
            }
            do throws(VideoError) {
                if encoder == nil {
                    let opened = try H264Encoder(settings: encoderSettings, size: movieSize, frameRate: settings.fps, range: .full,
                                                 purpose: .file)
                    encoder = opened
                    picture = try VideoPicture(size: movieSize)
                    progress.update { $0.size = movieSize; $0.encoder = opened.name }
                }
                picture!.fill(from: fitted)
                let time = Double(frames) / settings.fps
                try write(try encoder!.encode(picture!, monotonicTime: time, captureTime: time), encoder!)
            } catch {
                throw Self.failure(error, output: output)
            }
            frames += 1
            progress.update { $0.done += 1 }
        }
        if progress.isCancelled { throw .cancelled }
        guard let encoder, frames > 0, let size else {
            throw .failed("None of the \(paths.count) photos could be read (\(firstProblem ?? "no photos")), so no movie was made. Check the photo folder, or choose another time range.")
        }
        do throws(VideoError) {
            try write(try encoder.flush(), encoder)
            try writer?.finish()
        } catch {
            throw Self.failure(error, output: output)
        }
        return Result(frames: frames, skipped: paths.count - frames, size: size, duration: Double(frames) / settings.fps,
                      bytes: writer?.bytesWritten ?? 0, encoder: encoder.name)
    }

    /// Why one photo is left out of the movie.
    struct SkippedPhoto: Error {
        var reason: String
    }

    /// Decodes `jpeg` and fits it into the movie's size (the first photo's, when `size`
    /// is still nil) in `fitted`, turned upright as its EXIF Orientation says.
    private func fit(_ jpeg: [UInt8], path: String, size: inout FrameSize?) throws(SkippedPhoto) -> FrameSize {
        let orientation = EXIF.Orientation(readingFrom: jpeg)
        if size == nil {
            guard case .success(let stored) = JPEGSegments.dimensions(in: jpeg) else {
                throw SkippedPhoto(reason: "\(path) is not a readable JPEG")
            }
            let shown = orientation?.swapsAxes == true ? FrameSize(width: stored.height, height: stored.width) : stored
            size = TimelapseSettings.size(forFirstPhoto: shown)
        }
        let movieSize = size!
        var geometry = Geometry(width: movieSize.width, height: movieSize.height, fit: .contain, pad: .black)
        if let orientation { (geometry.rotate, geometry.flip) = Geometry.turn(for: orientation) }
        do {
            try pipeline.render(jpeg: jpeg, geometry: geometry, overlay: nil, into: &fitted)
        } catch {
            throw SkippedPhoto(reason: "\(path): \(error)")
        }
        return movieSize
    }

    /// A photo's bytes. O_NOFOLLOW: a photo replaced by a symbolic link is not read
    /// through, as the photo routes refuse it.
    static func read(_ path: String) throws(SkippedPhoto) -> [UInt8] {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(path, .readOnly, options: [.noFollow, .closeOnExec], retryOnInterrupt: true)
        } catch {
            throw SkippedPhoto(reason: (error as? Errno) == .noSuchFileOrDirectory
                               ? "\(path) was deleted while the timelapse ran" : "\(path): \(error)")
        }
        defer { try? file.close() }
        var status = stat()
        guard fstat(file.rawValue, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw SkippedPhoto(reason: "\(path) is not a regular file")
        }
        let length = Int(status.st_size)
        guard length <= largestPhoto else {
            throw SkippedPhoto(reason: "\(path) is \(length) bytes, more than the \(largestPhoto >> 20) MiB a photo may be")
        }
        var bytes = [UInt8](repeating: 0, count: length)
        var got = 0
        do {
            try bytes.withUnsafeMutableBytes { raw in
                while got < length {
                    let read = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[got...]), retryOnInterrupt: true)
                    if read == 0 { break }
                    got += read
                }
            }
        } catch {
            throw SkippedPhoto(reason: "\(path): \(error)")
        }
        return got == length ? bytes : Array(bytes.prefix(got))
    }

    /// The video layer's failure in the job's words: a full disk says what to free.
    static func failure(_ error: VideoError, output: String) -> TimelapseError {
        if case .write(let code) = error.kind {
            let cause = Errno(rawValue: code)
            if error.isDiskFull {
                return .diskFull("Cannot write the movie \(output): the disk is full (\(cause)); the unfinished movie was removed. Free some space or lower the photo retention limits, then start the timelapse again.")
            }
            return .failed("Cannot write the movie \(output): \(cause); the unfinished movie was removed. Check the disk the photo folder is on.")
        }
        if error.kind == .noEncoder {
            return .failed("The movie could not be encoded: \(error.description).")
        }
        return .failed("Encoding the movie failed: \(error.description)")
    }
}
