@testable import Daemon
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// camd's own sd-daemon(3) subset: what systemd would read from it, and what it reads from
/// the variables systemd sets, as libsystemd 252 does.
@Suite struct SystemdTests {
    /// A datagram socket bound where `notify` sends, standing in for systemd's; reads one message.
    struct Listener {
        let fd: Int32

        init(path: String) throws {
            let address = try #require(Systemd.notifyAddress(path))
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var storage = address.storage
            let length = socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + address.pathLength)
            let bound = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            try #require(bound == 0, "bind \(path): errno \(errno)")
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count < 0 ? nil : String(decoding: buffer[..<count], as: UTF8.self)
        }
    }

    @Test func notifySendsTheStateAsOneDatagramToAFileSocket() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camd-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("notify").path
        let listener = try Listener(path: path)
        defer { close(listener.fd) }
        #expect(Systemd.send("READY=1\nSTATUS=serving /run/camd.sock", toNotifySocket: path))
        #expect(listener.receive() == "READY=1\nSTATUS=serving /run/camd.sock")
        #expect(Systemd.send("WATCHDOG=1", toNotifySocket: path))
        #expect(listener.receive() == "WATCHDOG=1", "each state is a datagram of its own")
    }

    @Test func anAtSignNamesAnAbstractSocket() throws {
        let name = "@camd-notify-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let listener = try Listener(path: name)
        defer { close(listener.fd) }
        #expect(Systemd.send("STOPPING=1", toNotifySocket: name))
        #expect(listener.receive() == "STOPPING=1")
        #expect(!FileManager.default.fileExists(atPath: String(name.dropFirst())), "no file: the name is in the abstract namespace")
        let address = try #require(Systemd.notifyAddress(name))
        #expect(address.pathLength == name.utf8.count, "an abstract name's length has no NUL after it")
        #expect(try #require(Systemd.notifyAddress("/run/systemd/notify")).pathLength == "/run/systemd/notify".utf8.count + 1)
    }

    @Test func aSocketOfAnotherKindOrTooLongSendsNothing() {
        #expect(Systemd.notifyAddress("vsock:2:1234") == nil, "not a Unix socket address")
        #expect(Systemd.notifyAddress("relative/notify") == nil)
        #expect(Systemd.notifyAddress("") == nil)
        #expect(Systemd.notifyAddress("/" + String(repeating: "a", count: 200)) == nil, "longer than sun_path")
        #expect(!Systemd.send("READY=1", toNotifySocket: "/nonexistent-camd-test/notify"), "nobody listens there")
    }

    @Test func theWatchdogIntervalIsWatchdogUsecForThisProcess() {
        func interval(_ variables: [String: String], pid: pid_t = 42) -> Duration? {
            Systemd.watchdogInterval(environment: { variables[$0] }, pid: pid)
        }
        #expect(interval(["WATCHDOG_USEC": "20000000"]) == .seconds(20))
        #expect(interval(["WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "42"]) == .seconds(20))
        #expect(interval(["WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "7"]) == nil, "meant for another process")
        #expect(interval([:]) == nil, "no WatchdogSec=")
        #expect(interval(["WATCHDOG_USEC": "0"]) == nil)
        #expect(interval(["WATCHDOG_USEC": "soon"]) == nil)
        #expect(interval(["WATCHDOG_USEC": "-5"]) == nil)
        #expect(interval(["WATCHDOG_USEC": "18446744073709551615"]) == nil, "infinity is not an interval")
    }

    @Test func listenedDescriptorsCountFromThreeForThisProcessOnly() {
        func descriptors(_ variables: [String: String], pid: pid_t = 42) -> [Int32] {
            Array(Systemd.listenedDescriptors(environment: { variables[$0] }, pid: pid))
        }
        #expect(descriptors(["LISTEN_PID": "42", "LISTEN_FDS": "2"]) == [3, 4])
        #expect(descriptors(["LISTEN_PID": "42", "LISTEN_FDS": "1", "LISTEN_FDNAMES": "camd.socket"]) == [3])
        #expect(descriptors(["LISTEN_PID": "41", "LISTEN_FDS": "2"]).isEmpty, "left set by a parent: not ours")
        #expect(descriptors(["LISTEN_FDS": "2"]).isEmpty)
        #expect(descriptors(["LISTEN_PID": "42", "LISTEN_FDS": "0"]).isEmpty)
        #expect(descriptors(["LISTEN_PID": "42", "LISTEN_FDS": "-1"]).isEmpty)
        #expect(descriptors(["LISTEN_PID": "42", "LISTEN_FDS": "many"]).isEmpty)
        #expect(descriptors(["LISTEN_PID": "42", "LISTEN_FDS": "2147483647"]).isEmpty, "past the last descriptor number")
    }

    @Test func passedDescriptorsAreMadeCloseOnExec() throws {
        // A socket opened without close-on-exec, as systemd passes it.
        let passed = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(passed >= 0)
        try #require(fcntl(passed, F_GETFD) & FD_CLOEXEC == 0)
        #expect(Systemd.take(passed..<(passed + 1)) == [passed])
        #expect(fcntl(passed, F_GETFD) & FD_CLOEXEC != 0, "hooks and other children camd starts do not inherit the socket")
        // A number no descriptor has: the lowest free one above 900, closed again. Not `passed`
        // once closed, which another test running at once may be given by its next open.
        let unopened = fcntl(passed, F_DUPFD, 900)
        try #require(unopened >= 900)
        close(unopened)
        close(passed)
        #expect(Systemd.take(unopened..<(unopened + 1)).isEmpty, "a descriptor that is not open: nothing was passed")
    }

    @Test func listeningSocketsClearsTheVariablesForChildren() {
        setenv("LISTEN_PID", "\(getpid() + 1)", 1)
        setenv("LISTEN_FDS", "1", 1)
        setenv("LISTEN_FDNAMES", "camd.socket", 1)
        #expect(Systemd.listeningSockets().isEmpty, "passed to another process")
        #expect(getenv("LISTEN_PID") == nil && getenv("LISTEN_FDS") == nil && getenv("LISTEN_FDNAMES") == nil,
                "a hook camd starts does not take itself for socket-activated")
    }
}
