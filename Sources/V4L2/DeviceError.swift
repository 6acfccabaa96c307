import SystemPackage

/// A failure to open, configure or stream a video device, with a message that
/// says what happened and what to do next.
public struct DeviceError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure this is; callers map it to exit codes or HTTP statuses.
    public enum Kind: String, Sendable {
        case noSuchDevice = "no_such_device"
        case permissionDenied = "permission_denied"
        /// EPERM although file permissions allow it: a device cgroup (systemd's DeviceAllow=) refuses.
        case devicePolicy = "device_policy"
        case busy = "device_busy"
        case notACamera = "not_a_camera"
        case unsupported = "unsupported"
        case invalidArgument = "invalid_argument"
        /// The device went away (ENODEV): unplugged, or vivid's `disconnect`.
        case disconnected = "disconnected"
        /// The driver reported a streaming failure (EIO and the like).
        case streamFailed = "stream_failed"
        /// No frame arrived within the allowed time.
        case timeout = "timeout"
        /// Only a new camd process can open the camera again: libcamera 0.0.3 keeps a camera
        /// that went away while streaming (`LibCameraStream.stop`), and aborts the process
        /// when it comes back.
        case restartNeeded = "restart_needed"
    }

    public var kind: Kind
    public var path: String
    public var message: String
    public var errno: Errno?

    public init(_ kind: Kind, path: String, _ message: String, errno: Errno? = nil) {
        self.kind = kind
        self.path = path
        self.message = message
        self.errno = errno
    }

    public var description: String { message }

    /// Classifies an errno from an ioctl on a device that was open and working.
    static func from(_ errno: Errno, path: String, during what: String) -> DeviceError {
        switch errno {
        case .operationNotSupportedByDevice, .noSuchFileOrDirectory:
            return DeviceError(.disconnected, path: path,
                               "\(path) disconnected during \(what) (\(errno)): the camera was unplugged or its driver reset it",
                               errno: errno)
        case .resourceBusy:
            return DeviceError(.busy, path: path, "\(path) is busy during \(what): \(DeviceAccess.describeHolders(of: path)) is using it",
                               errno: errno)
        case .invalidArgument:
            return DeviceError(.unsupported, path: path, "\(path) refused \(what) (\(errno))", errno: errno)
        default:
            return DeviceError(.streamFailed, path: path, "\(path) failed during \(what): \(errno)", errno: errno)
        }
    }
}
