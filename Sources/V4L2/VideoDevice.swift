import CV4L2
import SystemPackage
import VideoCore
#if canImport(Glibc)
import Glibc
#endif

/// An open V4L2 video capture node.
///
/// Opened non-blocking and close-on-exec; closed when the value is released.
/// Not thread-safe: one thread (the capture thread) owns a device at a time.
public final class VideoDevice {
    public let path: String
    public let info: DeviceInfo
    let fd: FileDescriptor

    /// The major number of V4L2 character devices (`VIDEO_MAJOR`).
    static let videoMajor: UInt32 = 81

    /// Opens a camera, or throws a `DeviceError` that says why not and what to do.
    ///
    /// Refuses nodes that are not V4L2 character devices (a regular file, a tty)
    /// and V4L2 nodes that are not cameras ("/dev/video1 is a video output device, not a camera").
    public init(path: String) throws(DeviceError) {
        self.path = path
        let status: Glibc.stat
        switch Syscall.stat(path) {
        case .success(let found): status = found
        case .failure(let error) where error == .noSuchFileOrDirectory || error == .notDirectory:
            throw DeviceError(.noSuchDevice, path: path, "\(path) does not exist. Run `camctl devices` to list cameras.", errno: error)
        case .failure(let error) where error == .permissionDenied:
            throw DeviceError(.permissionDenied, path: path, "\(path) cannot be examined: a folder on its path denies access (\(error))", errno: error)
        case .failure(let error):
            throw DeviceError(.noSuchDevice, path: path, "\(path) cannot be examined: \(error)", errno: error)
        }
        guard status.st_mode & S_IFMT == S_IFCHR, major(status.st_rdev) == Self.videoMajor else {
            let what = status.st_mode & S_IFMT == S_IFCHR ? "a character device but not a video device" : "not a character device"
            throw DeviceError(.notACamera, path: path, "\(path) is \(what); a camera is a V4L2 node such as /dev/video0")
        }

        let opened: FileDescriptor
        do {
            opened = try FileDescriptor.open(path, .readWrite, options: [.nonBlocking, .closeOnExec], retryOnInterrupt: true)
        } catch {
            throw Self.explainOpenFailure(path, error)
        }

        var cap = v4l2_capability()
        if case .failure(let error) = Syscall.ioctl(opened, CV4L2_VIDIOC_QUERYCAP, &cap) {
            try? opened.close()
            throw DeviceError(.notACamera, path: path, "\(path) does not answer VIDIOC_QUERYCAP (\(error)): not a V4L2 device", errno: error)
        }
        let all = DeviceCapabilities(rawValue: cap.capabilities)
        let caps = all.contains(DeviceCapabilities(rawValue: UInt32(V4L2_CAP_DEVICE_CAPS)))
            ? DeviceCapabilities(rawValue: cap.device_caps) : all
        self.info = DeviceInfo(driver: string(fromCArray: cap.driver), card: string(fromCArray: cap.card),
                               busInfo: string(fromCArray: cap.bus_info), capabilities: caps)
        self.fd = opened

        guard caps.isCamera else {
            // Deinit closes the descriptor.
            if caps.contains(.videoCaptureMultiplanar) {
                throw DeviceError(.unsupported, path: path,
                                  "\(path) (\(info.card)) is a multi-planar capture device, which camd does not support yet")
            }
            throw DeviceError(.notACamera, path: path, "\(path) (\(info.card)) is \(caps.kindDescription), not a camera")
        }
    }

    deinit {
        try? fd.close()
    }

    static func explainOpenFailure(_ path: String, _ error: any Error) -> DeviceError {
        guard let errno = error as? Errno else {
            return DeviceError(.streamFailed, path: path, "\(path) cannot be opened: \(error)")
        }
        switch errno {
        case .permissionDenied, .notPermitted:
            if let report = DeviceAccess.check(path), let problem = report.problem {
                return DeviceError(.permissionDenied, path: path, "Permission denied opening \(path): \(problem)", errno: errno)
            }
            // The file permissions allow it, so something else refused: a device cgroup or a security module.
            return DeviceError(errno == .notPermitted ? .devicePolicy : .permissionDenied, path: path,
                               "Permission denied opening \(path) (\(errno)) although its file permissions allow this user: a device policy blocks it. Under systemd, the unit needs `DeviceAllow=char-video4linux rw`, and it must be restarted if the video driver was loaded after it started.",
                               errno: errno)
        case .resourceBusy:
            return DeviceError(.busy, path: path, "\(path) is busy: \(DeviceAccess.describeHolders(of: path)) is using it. Stop it, or ask camd for frames instead of opening the camera.", errno: errno)
        case .operationNotSupportedByDevice, .noSuchFileOrDirectory, .noSuchAddressOrDevice:
            return DeviceError(.noSuchDevice, path: path, "\(path) has no device behind it (\(errno)): was the camera unplugged?", errno: errno)
        default:
            return DeviceError(.streamFailed, path: path, "\(path) cannot be opened: \(errno)", errno: errno)
        }
    }

    /// The ioctl funnel with this device's error wording.
    func control<Argument>(_ request: UInt, _ argument: inout Argument, _ what: String) throws(DeviceError) {
        if case .failure(let error) = Syscall.ioctl(fd, request, &argument) {
            throw DeviceError.from(error, path: path, during: what)
        }
    }

    /// The descriptor, for a poll loop that waits on several things.
    public var fileDescriptor: FileDescriptor { fd }
}

@inline(__always)
func major(_ device: dev_t) -> UInt32 {
    // glibc's gnu_dev_major, which Swift cannot import as a macro.
    UInt32(((device >> 32) & 0xffff_f000) | ((device >> 8) & 0x0000_0fff))
}
