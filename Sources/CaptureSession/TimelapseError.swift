/// Why a timelapse movie could not be asked for, found, or made. Every message says
/// what happened and what to do next.
public enum TimelapseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A field of the request cannot be used; `name` is the field, so the API answers 400 naming it.
    case invalidParameter(name: String, message: String)
    /// No saved photo lies in the asked range.
    case noPhotos(String)
    /// No job has that id.
    case unknownJob(String)
    /// The job already ended, so it cannot be cancelled.
    case alreadyFinished(String)
    /// As many jobs as camd queues are waiting or running already.
    case tooManyJobs(String)
    /// The disk (or the user's quota) is full; the unfinished movie was removed.
    case diskFull(String)
    /// The job was cancelled; its unfinished movie was removed.
    case cancelled
    /// Anything else: no photo could be read, the encoder would not open, a write failed.
    case failed(String)

    public var description: String {
        switch self {
        case .invalidParameter(_, let message), .noPhotos(let message), .unknownJob(let message),
             .alreadyFinished(let message), .tooManyJobs(let message), .diskFull(let message), .failed(let message):
            return message
        case .cancelled:
            return "the timelapse was cancelled; its unfinished movie was removed"
        }
    }

    /// A stable machine-readable code, for API error bodies.
    public var code: String {
        switch self {
        case .invalidParameter: return "bad_field"
        case .noPhotos: return "no_photos"
        case .unknownJob: return "unknown_timelapse"
        case .alreadyFinished: return "timelapse_finished"
        case .tooManyJobs: return "too_many_timelapses"
        case .diskFull: return "disk_full"
        case .cancelled: return "cancelled"
        case .failed: return "timelapse_failed"
        }
    }
}
