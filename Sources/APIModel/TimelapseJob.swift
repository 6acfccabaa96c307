import CaptureSession

/// A timelapse movie job in the API (`/v1/timelapses`, `/v1/timelapses/{id}`).
public struct TimelapseJob: Codable, Sendable, Hashable {
    public var id: String
    public var camera: String
    /// queued, running, done, failed or cancelled.
    public var state: TimelapseJobs.Job.State
    /// The range of capture times, in seconds since 1970 (`since` inclusive, `until` exclusive).
    public var since: Double?
    public var until: Double?
    public var fps: Double
    /// "WIDTHxHEIGHT": as asked, or the first photo's once the render has read it.
    public var size: String?
    /// Photos handled so far (in the movie, or skipped) out of the photos in the range.
    public var framesDone: Int
    public var framesTotal: Int
    /// Photos left out: deleted while the job ran, or not readable.
    public var framesSkipped: Int
    /// The H.264 encoder, such as "libx264", once the render has opened it.
    public var encoder: String?
    /// The movie's name in the media library (`GET /v1/media/{name}`), once done.
    public var name: String?
    /// What went wrong and what to do, when failed.
    public var error: String?
    /// Seconds since 1970.
    public var createdAt: Double
    public var startedAt: Double?
    public var finishedAt: Double?

    public init(_ job: TimelapseJobs.Job) {
        id = job.id
        camera = job.camera
        state = job.state
        since = job.since
        until = job.until
        fps = job.fps
        size = job.size?.description
        framesDone = job.framesDone
        framesTotal = job.framesTotal
        framesSkipped = job.framesSkipped
        encoder = job.encoder
        name = job.movie?.name
        error = job.error
        createdAt = job.createdAt
        startedAt = job.startedAt
        finishedAt = job.finishedAt
    }
}
