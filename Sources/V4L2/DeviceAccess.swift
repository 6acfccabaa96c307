import CV4L2
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Explains whether this process may open a device node, and if not, exactly why
/// and how to fix it: owner, group, mode, group membership and POSIX ACLs.
public enum DeviceAccess {
    /// A user or group: its number and, when the system knows it, its name.
    public struct Identity: Hashable, Sendable, CustomStringConvertible {
        public var id: UInt32
        public var name: String?
        public init(id: UInt32, name: String?) {
            self.id = id
            self.name = name
        }
        public var description: String { name ?? String(id) }
    }

    /// Who is asking: the process's effective user and groups.
    public struct Credentials: Sendable {
        public var user: Identity
        public var primaryGroup: Identity
        public var groups: [Identity]
        /// Groups the user belongs to in the group database (which a login session picks up only at login).
        public var configuredGroups: [Identity]

        public init(user: Identity, primaryGroup: Identity, groups: [Identity], configuredGroups: [Identity]) {
            self.user = user
            self.primaryGroup = primaryGroup
            self.groups = groups
            self.configuredGroups = configuredGroups
        }

        /// The credentials of this process.
        public static func current() -> Credentials {
            let uid = geteuid(), gid = getegid()
            let count = getgroups(0, nil)
            var gids = [gid_t](repeating: 0, count: Int(max(count, 0)))
            let got = getgroups(count, &gids)
            let user = Identity(id: uid, name: userName(uid))
            let groupIDs = ([gid] + gids.prefix(Int(max(got, 0)))).uniqued()
            return Credentials(
                user: user,
                primaryGroup: Identity(id: gid, name: groupName(gid)),
                groups: groupIDs.map { Identity(id: $0, name: groupName($0)) },
                configuredGroups: user.name.map { configuredGroupIDs(of: $0, primary: gid) }?
                    .map { Identity(id: $0, name: groupName($0)) } ?? [])
        }
    }

    /// One entry of a POSIX access ACL (`system.posix_acl_access`).
    public struct ACLEntry: Hashable, Sendable {
        public enum Tag: UInt16, Sendable {
            case userObject = 0x01, user = 0x02, groupObject = 0x04, group = 0x08, mask = 0x10, other = 0x20
        }
        public var tag: Tag
        /// rwx bits, 4 = read, 2 = write, 1 = execute.
        public var permissions: UInt16
        public var id: UInt32?

        public init(tag: Tag, permissions: UInt16, id: UInt32? = nil) {
            self.tag = tag
            self.permissions = permissions
            self.id = id
        }
    }

    /// The facts about a node that decide access.
    public struct Node: Sendable {
        public var path: String
        public var owner: Identity
        public var group: Identity
        /// Permission bits (0o7777 part of st_mode).
        public var mode: UInt32
        public var isCharacterDevice: Bool
        /// Extended ACL entries beyond the mode bits; empty when there is no ACL.
        public var acl: [ACLEntry]

        public init(path: String, owner: Identity, group: Identity, mode: UInt32, isCharacterDevice: Bool, acl: [ACLEntry]) {
            self.path = path
            self.owner = owner
            self.group = group
            self.mode = mode
            self.isCharacterDevice = isCharacterDevice
            self.acl = acl
        }

        /// "crw-rw----", as ls shows it.
        public var modeString: String {
            let letters: [Character] = ["r", "w", "x"]
            var text = isCharacterDevice ? "c" : "-"
            for shift in stride(from: 6, through: 0, by: -3) {
                for bit in 0..<3 {
                    text.append((mode >> UInt32(shift)) & (4 >> UInt32(bit)) != 0 ? letters[bit] : "-")
                }
            }
            return acl.isEmpty ? text : text + "+"
        }
    }

    /// The verdict for one node and one set of credentials.
    public struct Report: Sendable {
        public var node: Node
        public var credentials: Credentials
        /// Whether read and write access is granted.
        public var allowed: Bool
        /// What grants access ("group video", "an ACL entry for user alice"), when allowed.
        public var grantedBy: String?
        /// What is wrong and how to fix it, when not allowed.
        public var problem: String?
    }

    /// Read and write: a camera is opened O_RDWR.
    static let needed: UInt16 = 0o6

    /// Checks whether this process may open `path` for reading and writing.
    /// Returns nil when the path cannot be examined at all (it does not exist).
    public static func check(_ path: String, as credentials: Credentials = .current()) -> Report? {
        guard case .success(let info) = Syscall.stat(path) else { return nil }
        let node = Node(
            path: path,
            owner: Identity(id: info.st_uid, name: userName(info.st_uid)),
            group: Identity(id: info.st_gid, name: groupName(info.st_gid)),
            mode: info.st_mode & 0o7777,
            isCharacterDevice: info.st_mode & S_IFMT == S_IFCHR,
            acl: readACL(path))
        return evaluate(node, credentials)
    }

    /// The decision itself, from facts alone, so it can be tested without devices.
    public static func evaluate(_ node: Node, _ who: Credentials) -> Report {
        var report = Report(node: node, credentials: who, allowed: false, grantedBy: nil, problem: nil)
        let userName = who.user.name ?? "uid \(who.user.id)"
        let groupName = node.group.name ?? "gid \(node.group.id)"
        let memberIDs = Set(who.groups.map(\.id))

        if who.user.id == 0 {
            report.allowed = true
            report.grantedBy = "root"
            return report
        }
        let ownerBits = UInt16((node.mode >> 6) & 7), groupBits = UInt16((node.mode >> 3) & 7)
        let otherBits = UInt16(node.mode & 7)
        // With an ACL, the mode's group bits are the mask that caps named entries.
        let mask = node.acl.first { $0.tag == .mask }?.permissions ?? (node.acl.isEmpty ? 7 : groupBits)
        let owningGroupBits = node.acl.first { $0.tag == .groupObject }?.permissions ?? groupBits

        func grant(_ bits: UInt16, _ by: String) -> Report {
            var granted = report
            if bits & needed == needed {
                granted.allowed = true
                granted.grantedBy = by
            }
            return granted
        }

        if who.user.id == node.owner.id {
            let verdict = grant(ownerBits, "owner \(userName)")
            if verdict.allowed { return verdict }
            report.problem = "\(node.path) is \(node.modeString) \(node.owner):\(groupName): its owner \(userName) has no read and write access. Fix the mode (a udev rule with MODE=\"0660\") or run `sudo chmod u+rw \(node.path)`."
            return report
        }
        if let entry = node.acl.first(where: { $0.tag == .user && $0.id == who.user.id }) {
            let verdict = grant(entry.permissions & mask, "an ACL entry for user \(userName) (systemd-logind's uaccess grants these to the user at the seat)")
            if verdict.allowed { return verdict }
        }
        var matchedGroups: [(String, UInt16)] = []
        if memberIDs.contains(node.group.id) { matchedGroups.append(("group \(groupName)", owningGroupBits & mask)) }
        for entry in node.acl where entry.tag == .group && memberIDs.contains(entry.id ?? UInt32.max) {
            let name = who.groups.first { $0.id == entry.id }?.description ?? "gid \(entry.id ?? 0)"
            matchedGroups.append(("an ACL entry for group \(name)", entry.permissions & mask))
        }
        if !matchedGroups.isEmpty {
            for (by, bits) in matchedGroups {
                let verdict = grant(bits, by)
                if verdict.allowed { return verdict }
            }
            report.problem = "\(node.path) is \(node.modeString) \(node.owner):\(groupName): user \(userName) is in group \(groupName), but that group has no read and write access. Give the group access with a udev rule (MODE=\"0660\", as camd's udev/70-camd.rules does) or `sudo chmod g+rw \(node.path)`."
            return report
        }
        let other = grant(otherBits, "permissions for all users")
        if other.allowed { return other }

        let inDatabase = who.configuredGroups.contains { $0.id == node.group.id }
        var text = "\(node.path) is \(node.modeString) \(node.owner):\(groupName), and user \(userName) (uid \(who.user.id)) is not in group \(groupName)"
        text += node.acl.contains { $0.tag == .user } ? " and has no ACL entry for it." : "."
        if inDatabase {
            text += " \(userName) was added to group \(groupName) after this login session started: log out and in again (or run `newgrp \(groupName)`), or restart the service."
        } else if let name = who.user.name {
            text += " Fix: run `sudo usermod -aG \(groupName) \(name)` and log in again, or run camd as its service user (camd.service runs in group \(groupName))."
        } else {
            text += " Fix: run this process with group \(groupName) (for example SupplementaryGroups=\(groupName) in a systemd unit)."
        }
        report.problem = text
        return report
    }

    /// "v4l2-ctl (pid 812)", or "another program" when /proc shows none.
    public static func describeHolders(of path: String) -> String {
        let holders = holders(of: path)
        return holders.isEmpty ? "another program" : holders.map { "\($0.command) (pid \($0.pid))" }.joined(separator: ", ")
    }

    /// Processes that hold `path` open, read from /proc (only those this user may see).
    public static func holders(of path: String) -> [(pid: Int32, command: String)] {
        guard case .success(let target) = Syscall.stat(path) else { return [] }
        var found: [(Int32, String)] = []
        guard let proc = opendir("/proc") else { return [] }
        defer { closedir(proc) }
        let me = getpid()
        while let entry = readdir(proc) {
            let name = string(fromCArray: entry.pointee.d_name)
            guard let pid = Int32(name), pid != me, let fdDir = opendir("/proc/\(name)/fd") else { continue }
            defer { closedir(fdDir) }
            while let fdEntry = readdir(fdDir) {
                let fdName = string(fromCArray: fdEntry.pointee.d_name)
                guard fdName.first?.isNumber == true,
                      case .success(let info) = Syscall.stat("/proc/\(name)/fd/\(fdName)"),
                      info.st_mode & S_IFMT == S_IFCHR, info.st_rdev == target.st_rdev else { continue }
                found.append((pid, readFirstLine("/proc/\(name)/comm") ?? "?"))
                break
            }
        }
        return found
    }
}

// MARK: - System databases

func userName(_ uid: uid_t) -> String? {
    var entry = passwd(), result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
    return String(cString: entry.pw_name)
}

func groupName(_ gid: gid_t) -> String? {
    var entry = group(), result: UnsafeMutablePointer<group>?
    var buffer = [CChar](repeating: 0, count: 16384)
    guard getgrgid_r(gid, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
    return String(cString: entry.gr_name)
}

func configuredGroupIDs(of user: String, primary: gid_t) -> [gid_t] {
    var count: Int32 = 64
    var groups = [gid_t](repeating: 0, count: Int(count))
    if getgrouplist(user, primary, &groups, &count) == -1 {
        groups = [gid_t](repeating: 0, count: Int(count))
        guard getgrouplist(user, primary, &groups, &count) != -1 else { return [] }
    }
    return Array(groups.prefix(Int(count)))
}

/// Parses `system.posix_acl_access`; returns only the entries an ACL adds
/// beyond the mode bits, or an empty list when the node has no extended ACL.
func readACL(_ path: String) -> [DeviceAccess.ACLEntry] {
    var buffer = [UInt8](repeating: 0, count: 1024)
    let size = getxattr(path, "system.posix_acl_access", &buffer, buffer.count)
    guard size > 4 else { return [] }
    return parseACL(Array(buffer.prefix(size)))
}

/// The kernel's xattr form: a little-endian u32 version (2), then entries of
/// u16 tag, u16 permissions, u32 id.
public func parseACL(_ bytes: [UInt8]) -> [DeviceAccess.ACLEntry] {
    func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
    func u32(_ at: Int) -> UInt32 { UInt32(u16(at)) | UInt32(u16(at + 2)) << 16 }
    guard bytes.count >= 4, u32(0) == 2 else { return [] }
    var entries: [DeviceAccess.ACLEntry] = []
    var offset = 4
    while offset + 8 <= bytes.count {
        if let tag = DeviceAccess.ACLEntry.Tag(rawValue: u16(offset)) {
            let id = (tag == .user || tag == .group) ? u32(offset + 4) : nil
            entries.append(.init(tag: tag, permissions: u16(offset + 2), id: id))
        }
        offset += 8
    }
    let extended = entries.contains { $0.tag == .user || $0.tag == .group || $0.tag == .mask }
    return extended ? entries : []
}

func readFirstLine(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 512)
    guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
    let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return line.hasSuffix("\n") ? String(line.dropLast()) : line
}

extension Array where Element: Hashable {
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
