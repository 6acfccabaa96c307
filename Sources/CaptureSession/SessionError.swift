import V4L2

/// Why a capture session could not do what was asked.
public enum SessionError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The camera is not running and the request needs it running.
    case notRunning(String)
    /// The device is gone or failing; the session is trying to get it back.
    case waitingForDevice(String)
    /// The session stopped for a reason retrying will not fix (permissions, a bad format).
    case failed(String)
    /// No frame arrived in time.
    case timeout(String)
    /// Settings or a control value that cannot work.
    case invalidSettings(String)
    /// The session is stopping or the daemon is shutting down.
    case shuttingDown
    /// What the request needs is not installed on this machine (FFmpeg's libraries for video).
    case unavailable(String)

    public var description: String {
        switch self {
        case .notRunning(let text), .waitingForDevice(let text), .failed(let text), .timeout(let text), .invalidSettings(let text),
             .unavailable(let text):
            return text
        case .shuttingDown: return "the camera is stopping"
        }
    }
}
