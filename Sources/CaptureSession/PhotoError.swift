import SystemPackage

/// Why the photo output could not save, find or delete a photo. Every message
/// names the path or name involved and says what to do next.
public enum PhotoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The disk (or the user's quota) is full; nothing half-written was left behind.
    case diskFull(String)
    /// The operating system refused access to the photo folder or file.
    case permissionDenied(String)
    /// A photo name, camera id or name pattern breaks a naming rule, or points
    /// outside the photo folder (a symbolic link, `..`).
    case invalidName(String)
    /// No photo has that name.
    case notFound(String)
    /// Any other failure of the file system.
    case ioFailure(String)

    public var description: String {
        switch self {
        case .diskFull(let message), .permissionDenied(let message), .invalidName(let message),
             .notFound(let message), .ioFailure(let message):
            return message
        }
    }

    /// A stable machine-readable code, for API error bodies and metrics labels.
    public var code: String {
        switch self {
        case .diskFull: return "disk_full"
        case .permissionDenied: return "permission_denied"
        case .invalidName: return "invalid_name"
        case .notFound: return "not_found"
        case .ioFailure: return "io_failure"
        }
    }

    /// The atomic writer's failure, in the photo output's terms.
    init(_ error: OutputError) {
        switch error.kind {
        case .noSpace: self = .diskFull(error.description)
        case .permissionDenied: self = .permissionDenied(error.description)
        case .missingFolder:
            self = .ioFailure(error.description + " The photo folder disappeared while saving; check that nothing else removes it.")
        case .other: self = .ioFailure(error.description)
        }
    }

    /// A failed system call on `path`, classified by its errno.
    /// - Parameters:
    ///   - doing: what was being done, e.g. "creating the photo folder".
    ///   - advice: what to do for a failure that is neither a full disk nor a permission problem.
    init(_ cause: Errno, path: String, doing: String, advice: String) {
        switch cause {
        case .noSpace, .diskQuotaExceeded:
            self = .diskFull("Cannot finish \(doing) at \(path): the disk is full (\(cause)). Free some space or lower the photo retention limits.")
        case .permissionDenied, .notPermitted, .readOnlyFileSystem:
            self = .permissionDenied("Cannot finish \(doing) at \(path): \(cause). Give the camd user write access to the photo folder, or choose another one.")
        default:
            self = .ioFailure("Cannot finish \(doing) at \(path): \(cause). \(advice)")
        }
    }
}
