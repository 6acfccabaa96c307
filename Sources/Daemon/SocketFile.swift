#if canImport(Glibc)
import Glibc
#endif
import CV4L2  // setxattr, which Glibc does not export

/// A failure to set up the control socket, with what to do about it.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// The TCP listener of `tcp` in camd.toml cannot be made: a setting to change, so
/// camd exits with EX_CONFIG and systemd does not restart it in a loop.
public struct TCPListenError: Error, CustomStringConvertible, Sendable {
    public var host: String
    public var port: Int
    public var code: Int32

    public var description: String {
        let cause = "camd cannot listen on TCP \(host):\(port) (daemon.tcp in camd.toml): \(String(cString: strerror(code)))"
        switch code {
        case EAFNOSUPPORT, EPERM:
            return cause + ". camd.service allows no Internet sockets (RestrictAddressFamilies=AF_UNIX, PrivateNetwork=yes): add the drop-in of \"Serving over TCP\" in docs/systemd.md, or remove tcp from camd.toml"
        case EACCES:
            return cause + ". Ports below 1024 need privileges camd does not have: choose a port above 1024"
        default:
            return cause + ". Choose another address or port, or stop what uses it"
        }
    }
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

    /// Lets a second group connect too (read-only API users), with a POSIX ACL entry
    /// `group:NAME:rw` on the socket file, leaving its owner, group and mode as they are.
    static func grantGroup(_ path: String, group name: String, mode: UInt32) throws {
        guard let gid = groupID(name) else {
            throw SocketError(description: "read-only group \"\(name)\" does not exist; create it or unset read_only_group")
        }
        func entry(_ tag: UInt16, _ permissions: UInt16, _ id: UInt32 = .max) -> [UInt8] {
            [UInt8(tag & 0xff), UInt8(tag >> 8), UInt8(permissions & 0xff), UInt8(permissions >> 8)]
                + (0..<4).map { UInt8((id >> ($0 * 8)) & 0xff) }
        }
        let owner = UInt16((mode >> 6) & 7), groupBits = UInt16((mode >> 3) & 7), other = UInt16(mode & 7)
        let acl: [UInt8] = [2, 0, 0, 0] + entry(0x01, owner) + entry(0x04, groupBits) + entry(0x08, 6, gid)
            + entry(0x10, groupBits | 6) + entry(0x20, other)
        guard setxattr(path, "system.posix_acl_access", acl, acl.count, 0) == 0 else {
            throw SocketError(description: "cannot add an ACL for group \(name) to \(path): \(String(cString: strerror(errno))) (does the file system support ACLs?)")
        }
    }

    /// The path a listening Unix socket is bound to (for sockets systemd passed).
    static func boundPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard status == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return path.isEmpty ? nil : path
    }

    static func groupID(_ name: String) -> gid_t? {
        var entry = group(), result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.gr_gid
    }
}
