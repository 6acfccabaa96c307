#if canImport(Glibc)
import Glibc
#endif

/// A failure to set up the control socket, with what to do about it.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// The control socket's file: stale ones from a killed daemon are removed, a
/// live one means another camd is running; access is set by mode and group.
enum SocketFile {
    static func prepare(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // nothing there
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw SocketError(description: "\(path) exists and is not a socket; remove it or choose another path with --socket")
        }
        if answers(path) {
            throw SocketError(description: "another camd is already serving \(path); stop it first (systemctl stop camd camd.socket) or use --socket")
        }
        unlink(path)  // left behind by a daemon that was killed
    }

    /// Whether something accepts connections on the socket.
    static func answers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
    }

    static func setAccess(_ path: String, mode: UInt32, group: String?) throws {
        if let group {
            guard let gid = groupID(group) else {
                throw SocketError(description: "socket group \"\(group)\" does not exist; create it or set socket_group in camd.toml")
            }
            if chown(path, uid_t.max, gid) != 0 && geteuid() == 0 {
                throw SocketError(description: "cannot give \(path) to group \(group): \(String(cString: strerror(errno)))")
            }
        }
        guard chmod(path, mode_t(mode)) == 0 else {
            throw SocketError(description: "cannot set mode \(String(mode, radix: 8)) on \(path): \(String(cString: strerror(errno)))")
        }
    }

    static func groupID(_ name: String) -> gid_t? {
        var entry = group(), result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.gr_gid
    }
}
