import CamdTestSupport
import CaptureSession
@testable import ControlAPI
@testable import Daemon
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The listener's connection handling: what SIGTERM does to open connections,
/// and what happens to a connection that sends nothing.
@Suite struct HTTPListenerTests {
    @Test func gracefulShutdownClosesAnIdleKeepAliveConnection() async throws {
        try await withListener(idleTimeout: .seconds(60)) { path, group in
            let client = try RawUnixClient(path: path)
            let answer = try await client.request("GET /ping HTTP/1.1\r\nHost: camd\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(answer.hasSuffix("pong"))
            // The connection is kept alive and idle: it must not hold the daemon up.
            await group.triggerGracefulShutdown()
            #expect(try await client.waitForClose(limit: 5), "the idle connection was not closed on shutdown")
        }
    }

    /// A connection that has sent nothing is still the listener's own (`ReadySnapshotHandler`,
    /// before Hummingbird's handlers are added): SIGTERM closes it too.
    @Test func gracefulShutdownClosesAConnectionThatSentNothing() async throws {
        try await withListener(idleTimeout: .seconds(60)) { path, group in
            let silent = try RawUnixClient(path: path)
            let halfRequest = try RawUnixClient(path: path)
            try halfRequest.send("GET /ping HTTP/1.1\r\nHost: ca")
            try await Task.sleep(for: .milliseconds(100))
            await group.triggerGracefulShutdown()
            #expect(try await silent.waitForClose(limit: 5), "a connection that never sent a request stayed open")
            #expect(try await halfRequest.waitForClose(limit: 5), "a half-sent request stayed open")
        }
    }

    @Test func anIdleConnectionIsClosedAfterTheIdleTimeout() async throws {
        try await withListener(idleTimeout: .milliseconds(300)) { path, group in
            let silent = try RawUnixClient(path: path)
            let halfRequest = try RawUnixClient(path: path)
            try halfRequest.send("GET /ping HTTP/1.1\r\nHost: ca")
            #expect(try await silent.waitForClose(limit: 5), "a connection that never sent a request stayed open")
            #expect(try await halfRequest.waitForClose(limit: 5), "a half-sent request stayed open")
            await group.triggerGracefulShutdown()
        }
    }

    @Test func aResponseUnderWayIsNotCutByTheIdleTimeout() async throws {
        // 600 ms: on a loaded machine the request itself may take a few hundred to be read,
        // and a connection that has not sent one yet is rightly closed.
        try await withListener(idleTimeout: .milliseconds(600)) { path, group in
            let client = try RawUnixClient(path: path)
            // /slow answers after 3 s, five times the idle timeout.
            let answer = try await client.request("GET /slow HTTP/1.1\r\nHost: camd\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(answer.hasSuffix("done"))
            await group.triggerGracefulShutdown()
        }
    }

    /// Every connection is served on one event loop, the listener's own: accepted on one
    /// loop and registered on another, a connection cost four wakeups between the loops
    /// before its request was read (issue 16: instructions and thread switches per answer).
    @Test func everyConnectionIsServedOnOneEventLoop() async throws {
        try await withListener(idleTimeout: .seconds(60)) { path, group in
            var loops = Set<String>()
            for _ in 0..<6 {
                let client = try RawUnixClient(path: path)
                let answer = try await client.request("GET /loop HTTP/1.1\r\nHost: camd\r\nConnection: close\r\n\r\n")
                #expect(answer.hasPrefix("HTTP/1.1 200"))
                loops.insert(String(answer.split(separator: "\r\n\r\n").last ?? ""))
            }
            #expect(loops.count == 1, "connections were served on \(loops.count) event loops: \(loops)")
            await group.triggerGracefulShutdown()
        }
    }

    /// The listener's event loop runs under SCHED_BATCH: a client on the same machine that
    /// connects or closes is not preempted by the loop it wakes (`ThreadScheduling`).
    @Test func theEventLoopRunsUnderBatchScheduling() async throws {
        try await withListener(idleTimeout: .seconds(60)) { path, group in
            let client = try RawUnixClient(path: path)
            let answer = try await client.request("GET /policy HTTP/1.1\r\nHost: camd\r\nConnection: close\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(answer.hasSuffix("\r\n\r\n\(ThreadScheduling.batchPolicy)"), "the loop's policy: \(answer)")
            await group.triggerGracefulShutdown()
        }
    }

    @Test func aTCPAddressThatCannotBeUsedIsAConfigurationError() async throws {
        // A port already taken by another socket of this process.
        let (taken, port) = try RunningDaemon.loopbackSocket(listening: true)
        defer { close(taken) }
        let listener = HTTPListener(endpoints: [.tcp(host: "127.0.0.1", port: port)],
                                    router: Router(context: CamdRequestContext.self), logger: Logger(label: "camd.test"))
        do {
            try await listener.run()
            Issue.record("the listener ran on a port in use")
        } catch let error as TCPListenError {
            #expect(error.code == EADDRINUSE)
            #expect(error.description.contains("127.0.0.1:\(port)"))
            #expect(error.description.contains("daemon.tcp"))
        }
    }

    /// Runs a listener with `/ping` and `/slow` on a scratch socket, calls `body`, and
    /// fails the test if the service group has not finished 10 s after `body` returns.
    private func withListener(idleTimeout: Duration,
                              _ body: @Sendable (String, ServiceGroup) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camd-listener-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("camd.sock").path

        let router = Router(context: CamdRequestContext.self)
        router.get("ping") { _, _ in "pong" }
        router.get("loop") { _, context in context.channel.map { "\(ObjectIdentifier($0.eventLoop))" } ?? "none" }
        router.get("policy") { _, context -> String in
            guard let loop = context.channel?.eventLoop else { return "none" }
            return "\(try await loop.submit { ThreadScheduling.currentPolicy() }.get())"
        }
        router.get("slow") { _, _ -> String in
            try await Task.sleep(for: .seconds(3))
            return "done"
        }
        let (listening, markListening) = AsyncStream.makeStream(of: Void.self)
        let logger = Logger(label: "camd.test")
        let listener = HTTPListener(endpoints: [.unixSocket(path: path, mode: 0o600, group: nil)], router: router,
                                    logger: logger, idleTimeout: idleTimeout) { markListening.yield() }
        let group = ServiceGroup(configuration: .init(services: [listener], logger: logger))

        try await withThrowingTaskGroup(of: Bool.self) { tasks in
            tasks.addTask {
                try await group.run()
                return true
            }
            var iterator = listening.makeAsyncIterator()
            _ = await iterator.next()
            try await body(path, group)
            tasks.addTask {
                try await Task.sleep(for: .seconds(10))
                return false
            }
            let stopped = try await tasks.next() ?? false
            #expect(stopped, "the listener did not stop within 10 s of graceful shutdown")
            tasks.cancelAll()
        }
    }
}

/// A client on a Unix socket, with a receive timeout so a test cannot hang. Its
/// blocking reads run on a Dispatch thread: blocking the cooperative pool could
/// starve the very responder the test waits for.
private final class RawUnixClient: Sendable {
    let fd: Int32

    init(path: String) throws {
        // Stored only once connected, so a failed init does not close it twice (deinit).
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8.prefix(raw.count - 1))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.fd = fd
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
    }

    /// Sends a request and reads one response with a Content-Length body.
    func request(_ text: String) async throws -> String {
        try send(text)
        return try await onOwnThread { self.readResponse() }
    }

    private func readResponse() -> String {
        var received = [UInt8]()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &chunk, chunk.count)
            if count == 0 { break }
            if count > 0 { received += chunk[0..<count] }
            let response = String(decoding: received, as: UTF8.self)
            if let split = response.range(of: "\r\n\r\n"),
               let lengthLine = response[..<split.lowerBound].split(separator: "\r\n")
                   .first(where: { $0.lowercased().hasPrefix("content-length:") }),
               let length = Int(lengthLine.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)),
               response.utf8.count - response.utf8.distance(from: response.startIndex, to: split.upperBound) >= length {
                return response
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// True when the server closes the connection within `limit` seconds.
    func waitForClose(limit: Double) async throws -> Bool {
        try await onOwnThread { self.readUntilClosed(limit: limit) }
    }

    private func readUntilClosed(limit: Double) -> Bool {
        let deadline = Date().addingTimeInterval(limit)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            let count = read(fd, &chunk, chunk.count)
            if count == 0 { return true }
            if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { return true }
        }
        return false
    }
}
