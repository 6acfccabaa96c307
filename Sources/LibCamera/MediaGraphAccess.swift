import V4L2
#if canImport(Glibc)
import Glibc
#endif

/// The permission check for libcamera cameras. libcamera opens every node of a camera's
/// media graph (/dev/media*, /dev/video*, /dev/v4l-subdev*) and quietly skips a pipeline
/// it cannot open, so a camera this user may not use is simply not listed: the
/// nodes are checked here to say which one refused and how to fix it.
public enum MediaGraphAccess {
    /// What is wrong with each media-graph node this user may not open, by path.
    public static func refusedNodes() -> [(path: String, problem: String)] {
        guard let folder = opendir("/dev") else { return [] }
        defer { closedir(folder) }
        var paths: [String] = []
        while let entry = readdir(folder) {
            let name = cString(entry.pointee.d_name)
            if name.hasPrefix("media") || name.hasPrefix("v4l-subdev") || name.hasPrefix("video") { paths.append("/dev/\(name)") }
        }
        return paths.sorted().compactMap { path in
            guard let report = DeviceAccess.check(path), !report.allowed else { return nil }
            return (path, report.problem ?? "\(path) is not readable and writable by this user")
        }
    }

    /// A permission error naming the first node that refused, or nil when every node is open to this user.
    static func denial(_ what: String) -> DeviceError? {
        let refused = refusedNodes()
        guard let first = refused.first else { return nil }
        let others = refused.dropFirst().map(\.path)
        return DeviceError(.permissionDenied, path: first.path,
                           "\(what): libcamera cannot open every node of a camera's media graph. \(first.problem)"
                           + (others.isEmpty ? "" : " (also refused: \(others.joined(separator: ", ")))"))
    }
}
