import Foundation
import Logging
import SystemPackage
import Video
import VideoCore
#if canImport(Glibc)
import Glibc
#endif

/// Timelapse movies made from saved photos, as background jobs: each renders one
/// camera's photos in a time range into an H.264 MP4 that joins the media library.
///
/// Jobs render one at a time, in the order asked, each on a thread of its own at a
/// lower priority than the cameras' encoders (`TimelapseRenderer` says why memory
/// stays bounded); the actor only keeps the jobs' states and never waits inside a
/// turn. While it grows, a movie is a hidden file in the camera's folder
/// (`AtomicFile.temporaryPrefix` + `timelapse-<id>.mp4.partial`, which the photo scan
/// ignores and the next start removes); finished, `PhotoOutput.adoptVideo` gives it
/// its name. A cancelled or failed job leaves no file.
public actor TimelapseJobs {
    public nonisolated let photos: PhotoOutput
    private let cameras: Cameras
    private let encoder: VideoEncoderSettings
    private let logger: Logger

    /// Jobs waiting or running at once; more are refused until one ends.
    public static let unfinishedLimit = 8
    /// Finished jobs kept for the list; the oldest beyond this are forgotten (their movies stay).
    public static let finishedKept = 50
    /// The render threads' niceness: below the cameras' encoders (+5), so a long render
    /// never costs a live stream its frames.
    static let niceness: Int32 = 10

    private struct Entry {
        var job: Job
        /// The photos in the range, oldest first; dropped once the render has their paths.
        var photos: [PhotoRecord]
        let progress: TimelapseProgress
        /// The camera's `[camera.video]` encoder and movie retention, when camd runs that camera.
        let encoder: VideoEncoderSettings
        let retention: VideoSettings?
        var waiters: [CheckedContinuation<Job, Never>] = []
    }

    /// Oldest first.
    private var entries: [Entry] = []
    private var renderingQueue = false

    /// - Parameters:
    ///   - cameras: a job for one of these takes its `[camera.video]` encoder settings, and
    ///     its movie retention applies to the finished movie.
    ///   - encoder: the H.264 encoder for photos of a camera camd does not run (any longer).
    public init(photos: PhotoOutput, cameras: Cameras = Cameras([]), encoder: VideoEncoderSettings = VideoEncoderSettings(),
                logger: Logger = Logger(label: "camd.timelapse")) {
        self.photos = photos
        self.cameras = cameras
        self.encoder = encoder
        self.logger = logger
    }

    // MARK: - Asking

    /// Makes a job for `camera`'s photos captured in `since ..< until` and queues it.
    /// - Throws: `.invalidParameter` for a bad camera id or an empty range, `.noPhotos`
    ///   when the range holds no photo (no job is made), `.tooManyJobs`.
    public func start(camera: String, since: Double?, until: Double?, settings: TimelapseSettings) async throws(TimelapseError) -> Job {
        guard CameraSettings.isValidID(camera) else {
            throw .invalidParameter(name: "camera", message: "camera must be a camera id (1 to 64 letters, digits, '-' and '_'); got \"\(camera)\"")
        }
        if let since, let until, until <= since {
            throw .invalidParameter(name: "until", message: "until (\(until)) must be after since (\(since)); until is exclusive")
        }
        try checkRoom()
        // Newest first from the list; the movie runs oldest first.
        let records = await photos.list(camera: camera, since: since, until: until, kind: .photo)
        guard !records.isEmpty else {
            let known = cameras[camera] != nil || cameras.ids.isEmpty ? "" : " (camd runs no camera of that id; it runs \(cameras.ids.joined(separator: ", ")))"
            throw .noPhotos("camera \(camera)\(known) has no photos \(Self.describe(since: since, until: until)), so there is nothing to make a movie of. Widen since/until, or see which exist with GET /v1/photos?camera=\(camera).")
        }
        let video = await cameras[camera]?.settings.video
        try checkRoom()  // again: other requests may have queued jobs while the list and settings were read
        let job = Job(id: Self.newID(), camera: camera, since: since, until: until, fps: settings.fps, size: settings.size,
                      state: .queued, framesDone: 0, framesTotal: records.count, framesSkipped: 0,
                      createdAt: PhotoOutput.currentTime())
        entries.append(Entry(job: job, photos: records.reversed(), progress: TimelapseProgress(),
                             encoder: video?.encoder ?? encoder, retention: video))
        logger.info("timelapse \(job.id) queued: \(records.count) photos of \(camera) at \(settings.fps) fps")
        if !renderingQueue {
            renderingQueue = true
            Task { await self.renderQueue() }
        }
        return job
    }

    /// Every job known, newest first.
    public func list() -> [Job] {
        entries.reversed().map(Self.current)
    }

    public func job(_ id: String) throws(TimelapseError) -> Job {
        Self.current(entries[try position(of: id)])
    }

    /// Stops a job: a queued one at once, a running one before its next photo. Returns
    /// once it has stopped and its unfinished movie is gone. Cancelling a cancelled job
    /// again answers it as it is.
    /// - Throws: `.unknownJob`; `.alreadyFinished` for a job that is done or failed.
    public func cancel(_ id: String) async throws(TimelapseError) -> Job {
        let index = try position(of: id)
        let entry = entries[index]
        switch entry.job.state {
        case .queued:
            return finish(id, .failure(.cancelled)) ?? entry.job
        case .running:
            entry.progress.cancel()
            return try await finished(id)
        case .cancelled:
            return entry.job
        case .done:
            throw .alreadyFinished("timelapse \(id) is already done: its movie is \(entry.job.movie?.name ?? "in the media library"). Delete the movie itself if it is not wanted.")
        case .failed:
            throw .alreadyFinished("timelapse \(id) already failed: \(entry.job.error ?? "see its error")")
        }
    }

    /// Forgets a job, cancelling it first if it has not finished; a finished job's movie stays.
    public func remove(_ id: String) async throws(TimelapseError) {
        let index = try position(of: id)
        if !entries[index].job.state.isFinished { _ = try await cancel(id) }
        entries.removeAll { $0.job.id == id }
    }

    /// The job once it has finished (done, failed or cancelled).
    public func finished(_ id: String) async throws(TimelapseError) -> Job {
        let index = try position(of: id)
        if entries[index].job.state.isFinished { return entries[index].job }
        return await withCheckedContinuation { entries[index].waiters.append($0) }
    }

    /// Cancels every job that has not finished and waits until each has stopped: for shutdown.
    public func cancelAll() async {
        for entry in entries where !entry.job.state.isFinished {
            _ = try? await cancel(entry.job.id)
        }
    }

    // MARK: - Rendering

    /// Renders queued jobs one after another until none is left.
    private func renderQueue() async {
        while let index = entries.firstIndex(where: { $0.job.state == .queued }) {
            entries[index].job.state = .running
            entries[index].job.startedAt = PhotoOutput.currentTime()
            let job = entries[index].job
            let records = entries[index].photos
            entries[index].photos = []
            let outcome = await render(job, records, entries[index])
            finish(job.id, outcome)
        }
        renderingQueue = false
    }

    /// Renders on a thread of its own, then gives the movie its name in the media library.
    private func render(_ job: Job, _ records: [PhotoRecord], _ entry: Entry) async
        -> Result<(PhotoRecord, TimelapseRenderer.Result), TimelapseError> {
        let folder = photos.root + "/" + job.camera
        let partial = folder + "/" + AtomicFile.temporaryPrefix + "timelapse-\(job.id).mp4.partial"
        let paths = records.map { folder + "/" + $0.name }
        let first = records[0].captureTime
        let settings: TimelapseSettings
        do { settings = try TimelapseSettings(fps: job.fps, size: job.size) } catch { return .failure(error) }
        let encoder = entry.encoder, progress = entry.progress
        let rendered = await withCheckedContinuation { continuation in
            WorkerThread.start(name: "camd-timelapse", niceness: Self.niceness) {
                continuation.resume(returning: Self.renderFile(paths, to: partial, settings: settings, encoder: encoder,
                                                               progress: progress))
            }
        }
        let result: TimelapseRenderer.Result
        switch rendered {
        case .success(let made): result = made
        case .failure(let error): return .failure(error)
        }
        do throws(PhotoError) {
            let wanted = try PhotoOutput.fileName(pattern: "{camera}-timelapse-{date}-{time}.mp4", camera: job.camera,
                                                  captureTime: first, sequence: 0)
            let movie = try await photos.adoptVideo(at: partial, camera: job.camera, name: wanted, captureTime: first,
                                                    retention: entry.retention)
            return .success((movie, result))
        } catch {
            // adoptVideo leaves the file when the rename fails; a job that failed leaves none.
            await BlockingIO.run { _ = unlink(partial) }
            if case .diskFull(let message) = error { return .failure(.diskFull(message)) }
            return .failure(.failed("The movie was made but could not be put in the media library: \(error.description)"))
        }
    }

    /// Runs on the render thread: creates the unfinished movie, renders into it, and
    /// removes it again unless the render succeeded.
    private static func renderFile(_ paths: [String], to partial: String, settings: TimelapseSettings,
                                   encoder: VideoEncoderSettings, progress: TimelapseProgress)
        -> Result<TimelapseRenderer.Result, TimelapseError> {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(partial, .writeOnly, options: [.create, .truncate, .noFollow, .closeOnExec],
                                           permissions: [.ownerReadWrite, .groupRead, .otherRead], retryOnInterrupt: true)
        } catch {
            let cause = error as? Errno ?? .ioError
            if cause == .noSpace || cause == .diskQuotaExceeded {
                return .failure(.diskFull("Cannot create the movie \(partial): the disk is full (\(cause)). Free some space or lower the photo retention limits, then start the timelapse again."))
            }
            return .failure(.failed("Cannot create the movie \(partial): \(cause). Check that camd may write to the camera's photo folder."))
        }
        var outcome: Result<TimelapseRenderer.Result, TimelapseError>
        do throws(TimelapseError) {
            let renderer = TimelapseRenderer(settings: settings, encoder: encoder)
            outcome = .success(try renderer.render(paths, into: { bytes in
                do {
                    _ = try file.writeAll(bytes)
                    return 0
                } catch {
                    return (error as? Errno)?.rawValue ?? EIO
                }
            }, output: partial, progress: progress))
        } catch {
            outcome = .failure(error)
        }
        do {
            try file.close()
        } catch {
            // A network file system may report a failed write only now.
            if case .success = outcome { outcome = .failure(TimelapseRenderer.failure(VideoError(.write(errno: (error as? Errno)?.rawValue ?? EIO), "closing"), output: partial)) }
        }
        if case .failure = outcome { unlink(partial) }
        return outcome
    }

    /// Records how a job ended and wakes those waiting for it.
    /// A job is removed only once it has finished, so its entry is still there.
    @discardableResult
    private func finish(_ id: String, _ outcome: Result<(PhotoRecord, TimelapseRenderer.Result), TimelapseError>) -> Job? {
        guard let index = entries.firstIndex(where: { $0.job.id == id }) else { return nil }
        var job = Self.current(entries[index])
        job.finishedAt = PhotoOutput.currentTime()
        switch outcome {
        case .success(let (movie, result)):
            job.state = .done
            job.movie = movie
            job.size = result.size
            job.framesSkipped = result.skipped
            logger.notice("timelapse \(id) done: \(movie.name), \(result.frames) frames (\(result.skipped) skipped) at \(result.size) with \(result.encoder)")
        case .failure(.cancelled):
            job.state = .cancelled
            logger.info("timelapse \(id) cancelled")
        case .failure(let error):
            job.state = .failed
            job.error = error.description
            logger.error("timelapse \(id) failed: \(error.description)")
        }
        entries[index].job = job
        entries[index].photos = []
        let waiters = entries[index].waiters
        entries[index].waiters = []
        for waiter in waiters { waiter.resume(returning: job) }
        forgetOldJobs()
        return job
    }

    // MARK: - Bookkeeping

    /// A job with its render's counts as they are now.
    private static func current(_ entry: Entry) -> Job {
        var job = entry.job
        // A finished job took its final counts in `finish`.
        guard !job.state.isFinished else { return job }
        let counts = entry.progress.current
        job.framesDone = counts.done
        job.framesSkipped = counts.skipped
        job.size = job.size ?? counts.size
        job.encoder = counts.encoder
        return job
    }

    private func position(of id: String) throws(TimelapseError) -> Int {
        guard let index = entries.firstIndex(where: { $0.job.id == id }) else {
            throw .unknownJob("no timelapse \"\(id)\"; list them with GET /v1/timelapses (finished ones are forgotten after \(Self.finishedKept) newer ones)")
        }
        return index
    }

    private func checkRoom() throws(TimelapseError) {
        let unfinished = entries.filter { !$0.job.state.isFinished }.count
        guard unfinished < Self.unfinishedLimit else {
            throw .tooManyJobs("\(unfinished) timelapses are queued or running, as many as camd takes; wait for one to finish or cancel one (GET /v1/timelapses)")
        }
    }

    private func forgetOldJobs() {
        var finished = entries.filter(\.job.state.isFinished).count
        entries.removeAll { entry in
            guard finished > Self.finishedKept, entry.job.state.isFinished else { return false }
            finished -= 1
            return true
        }
    }

    /// 12 hex digits: unique enough among a few dozen jobs, and safe in a file name.
    private static func newID() -> String {
        let digits = String(UInt64.random(in: 0..<(1 << 48)), radix: 16)
        return String(repeating: "0", count: 12 - digits.count) + digits
    }

    /// "from 2026-11-22T06:00:00Z (since) until ...", as a person reads the range.
    private static func describe(since: Double?, until: Double?) -> String {
        func time(_ seconds: Double) -> String { ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: seconds)) }
        switch (since, until) {
        case (nil, nil): return "at all"
        case (let since?, nil): return "from \(time(since)) (since) on"
        case (nil, let until?): return "before \(time(until)) (until)"
        case (let since?, let until?): return "from \(time(since)) (since) until \(time(until)) (until)"
        }
    }
}
