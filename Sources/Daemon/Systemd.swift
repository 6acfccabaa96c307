#if canImport(Glibc)
import Glibc
#endif

/// What camd tells systemd and learns from it (sd-daemon(3)): readiness, status,
/// the watchdog, and sockets passed by socket activation.
///
/// Written here, not called in libsystemd. camd used three of its functions (`sd_notify`,
/// `sd_watchdog_enabled`, `sd_listen_fds`), and Debian 12's libsystemd brings six more
/// libraries into the process with it (libgcrypt, libgpg-error, liblzma, libzstd, liblz4,
/// libcap): code a network-facing daemon never runs, mapped and relocated all the same
/// (issue 16, docs/performance.md). What the three do is read environment variables and
/// send one datagram, and systemd documents that as the interface, stable and meant to be
/// implemented without its library (sd_notify(3), "Standalone Implementations"; the
/// "Interface Portability and Stability" chart: `$NOTIFY_SOCKET` and `$LISTEN_FDS`,
/// "reimplementable independently"). Each function below does what libsystemd 252's does.
public enum Systemd {
    /// Whether systemd is listening for notifications (NOTIFY_SOCKET is set).
    public static var isSupervising: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Whether stderr goes to the journal, so log lines should carry priority prefixes.
    public static var logsToJournal: Bool { getenv("JOURNAL_STREAM") != nil || getenv("INVOCATION_ID") != nil }

    /// The first descriptor socket activation passes (`SD_LISTEN_FDS_START`).
    public static let firstListenedDescriptor: Int32 = 3

    /// Sends `READY=1`, `STATUS=...`, `WATCHDOG=1` and the like; does nothing outside systemd.
    public static func notify(_ state: String) {
        guard let socket = environment("NOTIFY_SOCKET") else { return }
        _ = send(state, toNotifySocket: socket)
    }

    /// Sends `state` as one datagram to systemd's notification socket `path`: a file, or an
    /// abstract socket when it starts with `@` (`sd_notify`). Whether it was sent; a path of
    /// another kind, or too long for a socket address, sends nothing.
    static func send(_ state: String, toNotifySocket path: String) -> Bool {
        guard var address = notifyAddress(path) else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let length = socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + address.pathLength)
        var message = Array(state.utf8)
        while true {
            let sent = withUnsafePointer(to: &address.storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    sendto(fd, &message, message.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
            if sent >= 0 { return true }
            if errno != EINTR { return false }
        }
    }

    /// The socket address of a notification socket path, and how many bytes of `sun_path`
    /// it uses: a file's path with its terminating NUL, an abstract name (`@` made NUL)
    /// without one, as libsystemd's `sockaddr_un_set_path`.
    static func notifyAddress(_ path: String) -> (storage: sockaddr_un, pathLength: Int)? {
        var bytes = Array(path.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "/") || first == UInt8(ascii: "@") else { return nil }
        let abstract = first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 } else { bytes.append(0) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count <= capacity, abstract || bytes.count > 1 else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return (address, bytes.count)
    }

    /// The watchdog interval systemd expects pings within, if the unit sets WatchdogSec=.
    public static func watchdogInterval() -> Duration? {
        watchdogInterval(environment: environment, pid: getpid())
    }

    /// `sd_watchdog_enabled`: WATCHDOG_USEC, a positive count of microseconds, unless
    /// WATCHDOG_PID names another process.
    static func watchdogInterval(environment: (String) -> String?, pid: pid_t) -> Duration? {
        guard let text = environment("WATCHDOG_USEC"), let microseconds = UInt64(text),
              microseconds > 0, microseconds < UInt64.max, microseconds <= UInt64(Int64.max) else { return nil }
        if let owner = environment("WATCHDOG_PID"), pid_t(owner) != pid { return nil }
        return .microseconds(Int64(microseconds))
    }

    /// Listening sockets passed by socket activation (LISTEN_FDS), as descriptors: each is
    /// made close-on-exec, and the variables are removed so hooks and other children do
    /// not take the sockets for theirs (`sd_listen_fds(1)`).
    public static func listeningSockets() -> [Int32] {
        defer {
            for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
        }
        return take(listenedDescriptors(environment: environment, pid: getpid()))
    }

    /// The passed descriptors, each made close-on-exec; none when one cannot be (it is not open).
    static func take(_ descriptors: Range<Int32>) -> [Int32] {
        for fd in descriptors {
            let flags = fcntl(fd, F_GETFD)
            guard flags >= 0, flags & FD_CLOEXEC != 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0 else { return [] }
        }
        return Array(descriptors)
    }

    /// The descriptors LISTEN_FDS counts from `firstListenedDescriptor`, when LISTEN_PID is
    /// this process: they were passed to it, not to a parent that left the variables set.
    static func listenedDescriptors(environment: (String) -> String?, pid: pid_t) -> Range<Int32> {
        let none = firstListenedDescriptor..<firstListenedDescriptor
        guard let owner = environment("LISTEN_PID"), pid_t(owner) == pid,
              let text = environment("LISTEN_FDS"), let count = Int32(text),
              count > 0, count <= Int32.max - firstListenedDescriptor else { return none }
        return firstListenedDescriptor..<(firstListenedDescriptor + count)
    }

    /// The process's environment variable `name`.
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
