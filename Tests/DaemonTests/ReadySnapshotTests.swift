import APIModel
import CamdTestSupport
import CaptureSession
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Snapshot polls answered on the listener's event loop (issue 16: answer time), through
/// the real `camd`: byte for byte the router's answer, only where the router would answer at
/// once, never past the access rules, and in order with the requests the router answers.
@Suite struct ReadySnapshotTests {
    /// A frame younger than ten minutes: any JPEG already made answers it, so whether a
    /// request is answered at once does not hang on an encoder's timing.
    static let anyReadyFrame = "/v1/cameras/cam/snapshot?max_age_ms=600000"
    /// A poll of a frame captured after it, with an image option that keeps the frame as
    /// captured: the loop leaves any query but `max_age_ms` to the router, which answers it
    /// (and has the connection).
    static let routedPoll = "/v1/cameras/cam/snapshot?rotate=0&max_age_ms=0"

    @Test func aPollIsAnsweredOnTheEventLoopWithTheRoutersHeadersAndEXIF() async throws {
        try await Self.withDaemon { daemon in
            let path = daemon.path, before = daemon.answeredBefore
            // The router answered the warm-up; the next is answered from its JPEG on the loop.
            let routed = try #require(daemon.warmUp)
            let fast = try Self.get(.unix(path), Self.anyReadyFrame)
            #expect(try Self.answeredOnEventLoop(path) == before + 1, "the poll was not answered on the event loop")

            #expect(routed.status == 200 && fast.status == 200)
            #expect(fast.headers.map(\.name) == routed.headers.map(\.name), "\(fast.headers) against \(routed.headers)")
            #expect(fast.header("content-type") == "image/jpeg" && fast.header("cache-control") == "no-store")
            #expect(fast.header("x-frame-size") == "320x240")
            #expect(fast.header("content-length") == String(fast.body.count))
            #expect(fast.body.starts(with: [0xFF, 0xD8]) && fast.body.suffix(2) == [0xFF, 0xD9])
            // The same EXIF tags as the router writes (capture time, camera, pixel size).
            let fastTags = EXIFReadBack.entries(in: fast.body), routedTags = EXIFReadBack.entries(in: routed.body)
            #expect(!fastTags.isEmpty && Set(fastTags.keys) == Set(routedTags.keys), "\(fastTags.keys.sorted()) against \(routedTags.keys.sorted())")
            // The frame it carries is the one the router made: the same sequence or a later one.
            #expect((Int(fast.header("x-frame-sequence") ?? "") ?? -1) >= (Int(routed.header("x-frame-sequence") ?? "") ?? .max))
        }
    }

    /// Requests on one keep-alive connection, sent at once: a poll that waits for a new frame
    /// (on the loop, for its encode), two answered at once on the loop, then a status that
    /// makes the connection the router's, which answers the last poll: in order.
    @Test func aKeepAliveConnectionIsAnsweredInOrder() async throws {
        try await Self.withDaemon { daemon in
            let path = daemon.path, before = daemon.answeredBefore
            let connection = try TestConnection(.unix(path))
            let request = { (target: String) in "GET \(target) HTTP/1.1\r\nHost: camd\r\n\r\n" }
            try connection.send(request("/v1/cameras/cam/snapshot?max_age_ms=0") + request(Self.anyReadyFrame)
                                + request(Self.anyReadyFrame) + request("/v1/status") + request(Self.anyReadyFrame))
            var kinds: [String] = []
            var sequences: [Int] = []
            let reader = AnswerReader(connection)
            for _ in 0..<5 {
                let answer = try reader.next()
                #expect(answer.status == 200)
                kinds.append(answer.header("content-type") ?? "none")
                if let sequence = answer.header("x-frame-sequence").flatMap(Int.init) { sequences.append(sequence) }
            }
            #expect(kinds == ["image/jpeg", "image/jpeg", "image/jpeg", "application/json", "image/jpeg"], "\(kinds)")
            #expect(sequences == sequences.sorted(), "frames out of order: \(sequences)")
            // The first waited on the loop, the second and third were answered there at once.
            #expect(try Self.answeredOnEventLoop(path) == before + 2)
            #expect(try Self.waitedOnEventLoop(path) == daemon.waitedBefore + 1, "the first poll did not wait on the loop")
        }
    }

    /// After polls answered on the loop, the connection is handed over with NIO's response
    /// encoder added then: a `HEAD` on it is answered without a body, and what follows it is
    /// framed as before (a body after the `HEAD` would be read as the next answer's head).
    @Test func aHeadAfterPollsOnOneConnectionHasNoBody() async throws {
        try await Self.withDaemon { daemon in
            let connection = try TestConnection(.unix(daemon.path))
            let request = { (method: String, target: String) in "\(method) \(target) HTTP/1.1\r\nHost: camd\r\n\r\n" }
            try connection.send(request("GET", Self.anyReadyFrame) + request("HEAD", "/v1/status") + request("GET", "/v1/status")
                                + request("HEAD", Self.anyReadyFrame) + request("GET", Self.anyReadyFrame))
            let reader = AnswerReader(connection)
            let poll = try reader.next()
            let head = try reader.next(bodyless: true)
            let status = try reader.next()
            let headPoll = try reader.next(bodyless: true)
            let last = try reader.next()
            #expect(poll.status == 200 && poll.header("content-type") == "image/jpeg")
            #expect(head.status == 200 && head.header("content-type") == "application/json" && head.header("content-length") != nil)
            #expect(status.status == 200 && (try? JSONSerialization.jsonObject(with: Data(status.body))) != nil,
                    "\(status.status) \(String(decoding: status.body.prefix(120), as: UTF8.self))")
            #expect(headPoll.status == 200 && headPoll.header("content-type") == "image/jpeg")
            #expect(last.status == 200 && last.body.starts(with: [0xFF, 0xD8]) && last.body.suffix(2) == [0xFF, 0xD9])
        }
    }

    /// A keep-alive client polling at the default age: its first poll waits on the loop for
    /// an encode, and is answered there as the router would answer it (its fields, its EXIF);
    /// the connection stays with the loop, which answers the next from a ready JPEG.
    @Test func aKeepAlivePollerStaysOnTheLoop() async throws {
        try await Self.withDaemon { daemon in
            let path = daemon.path, before = daemon.answeredBefore
            let connection = try TestConnection(.unix(path))
            let reader = AnswerReader(connection)
            let asked = Date().timeIntervalSince1970
            try connection.send("GET /v1/cameras/cam/snapshot?max_age_ms=0 HTTP/1.1\r\nHost: camd\r\n\r\n")
            let first = try reader.next()
            #expect(first.status == 200 && first.header("content-type") == "image/jpeg")
            #expect(try Self.waitedOnEventLoop(path) == daemon.waitedBefore + 1, "the poll that waited was not answered on the loop")
            let routed = try #require(daemon.warmUp)
            #expect(first.headers.map(\.name) == routed.headers.map(\.name), "\(first.headers) against \(routed.headers)")
            #expect(first.header("content-length") == String(first.body.count) && first.body.suffix(2) == [0xFF, 0xD9])
            #expect(Set(EXIFReadBack.entries(in: first.body).keys) == Set(EXIFReadBack.entries(in: routed.body).keys))
            // A frame captured after the request, as `max_age_ms=0` asks (the header's clock is the wall clock).
            #expect((Double(first.header("x-capture-time") ?? "") ?? 0) >= asked - 0.05, "\(first.headers)")
            try connection.send("GET \(Self.anyReadyFrame) HTTP/1.1\r\nHost: camd\r\n\r\n")
            let second = try reader.next()
            #expect(second.status == 200 && second.header("content-type") == "image/jpeg")
            #expect(try Self.answeredOnEventLoop(path) == before + 1, "the connection left the loop after a poll that waited")
            // A poll the router refuses (an unknown parameter) is answered, and the connection goes on.
            try connection.send("GET /v1/cameras/cam/snapshot?nonsense=1 HTTP/1.1\r\nHost: camd\r\n\r\n")
            #expect(try reader.next().status == 400)
            try connection.send("GET /v1/cameras/cam/snapshot HTTP/1.1\r\nHost: camd\r\nConnection: close\r\n\r\n")
            #expect(try reader.next().status == 200)
            _ = try connection.readToEnd(limit: 5)
        }
    }

    /// Clients that go while their poll waits on the loop for its JPEG: each wait is ended
    /// with its connection (a debug camd stops at a promise left unfulfilled), and camd goes
    /// on answering, on the loop and the router.
    @Test func aClientThatGoesWhileItsPollWaitsLeavesNothingBehind() async throws {
        try await Self.withDaemon { daemon in
            for _ in 0..<5 {
                let connection = try TestConnection(.unix(daemon.path))
                try connection.send("GET /v1/cameras/cam/snapshot?max_age_ms=0 HTTP/1.1\r\nHost: camd\r\n\r\n")
            }  // each closed as it goes out of scope, before its frame (10 a second) is encoded
            let poll = try Self.get(.unix(daemon.path), "/v1/cameras/cam/snapshot?max_age_ms=0")
            #expect(poll.status == 200 && poll.body.suffix(2) == [0xFF, 0xD9])
            #expect(try Self.get(.unix(daemon.path), "/v1/status").status == 200)
        }
    }

    /// A poll that waits on the loop for its JPEG when camd gets SIGTERM is answered before its
    /// connection closes: the cameras stop before the listener, which ends the wait, and the
    /// router answers that the camera is stopping.
    @Test func aPollWaitingOnTheLoopWhenCamdStopsIsAnswered() async throws {
        // One frame a second: the poll waits about that long for its own.
        let daemon = try RunningDaemon(tcp: false, fps: 1)
        defer { daemon.cleanUp() }
        try await daemon.waitUntilServing()
        let path = daemon.socketPath, pid = daemon.pid
        let answer = try await onOwnThread { () throws -> Answer in
            // The router's answer comes just after a frame is taken: the next is a second away.
            #expect(try Self.get(.unix(path), Self.routedPoll).status == 200)
            let connection = try TestConnection(.unix(path))
            try connection.send("GET /v1/cameras/cam/snapshot?max_age_ms=0 HTTP/1.1\r\nHost: camd\r\n\r\n")
            usleep(200_000)
            kill(pid, SIGTERM)
            return try AnswerReader(connection).next()
        }
        let body = String(decoding: answer.body, as: UTF8.self)
        #expect(answer.status == 503 && body.contains("\"stopping\""), "\(answer.status) \(body)")
        #expect(try await daemon.waitForExit(limit: 20) == 0, "\(daemon.log().suffix(1500))")
    }

    /// A camera whose image settings change the frame (here turned upside down): the loop
    /// can neither answer its polls nor wait for them, so the router answers each in a task,
    /// the connection staying with the loop, which answers nothing itself.
    @Test func aPollOnlyTheRouterCanRenderIsRoutedAndTheConnectionStays() async throws {
        try await Self.withDaemon(cameraLines: "[camera.image]\nrotate = 180\n") { daemon in
            let path = daemon.path, before = daemon.answeredBefore
            let connection = try TestConnection(.unix(path))
            let reader = AnswerReader(connection)
            for target in ["/v1/cameras/cam/snapshot?max_age_ms=0", Self.anyReadyFrame, "/v1/cameras/cam/snapshot"] {
                try connection.send("GET \(target) HTTP/1.1\r\nHost: camd\r\n\r\n")
                let answer = try reader.next()
                #expect(answer.status == 200 && answer.header("content-type") == "image/jpeg" && answer.header("x-frame-size") == "320x240")
                #expect(answer.body.starts(with: [0xFF, 0xD8]) && answer.body.suffix(2) == [0xFF, 0xD9])
            }
            let snapshots = try Self.snapshotStatus(path)
            #expect(snapshots.answeredOnEventLoop == before && snapshots.waitedOnEventLoop == daemon.waitedBefore, "\(snapshots)")
        }
    }

    /// A client that sends polls and reads no answer: the loop stops answering once the
    /// connection stops taking writes, and the router (which stops reading then) has the rest;
    /// every answer still comes, in order, once the client reads.
    @Test func aClientThatDoesNotReadIsHandedOver() async throws {
        let polls = 400
        try await Self.withDaemon { daemon in
            let path = daemon.path, before = daemon.answeredBefore
            let connection = try TestConnection(.unix(path))
            try connection.send(String(repeating: "GET \(Self.anyReadyFrame) HTTP/1.1\r\nHost: camd\r\n\r\n", count: polls))
            Thread.sleep(forTimeInterval: 1)
            let onLoop = try Self.answeredOnEventLoop(path) - before
            #expect(onLoop > 0 && onLoop < polls, "\(onLoop) of \(polls) answered on the loop to a client reading nothing")
            let reader = AnswerReader(connection)
            var sequences: [Int] = []
            for _ in 0..<polls {
                let answer = try reader.next()
                #expect(answer.status == 200)
                sequences.append(Int(answer.header("x-frame-sequence") ?? "") ?? -1)
            }
            #expect(sequences == sequences.sorted() && !sequences.contains(-1))
        }
    }

    /// A client that closes its side once its requests are sent (`nc -N`, a script's
    /// `shutdown`) is answered all of them: a poll that waits for a frame (on the loop, for its
    /// encode), then one answered on the loop at once, then, on one connection, a status (which
    /// hands the connection to Hummingbird) and on another nothing more. Then camd closes.
    @Test func aClientThatClosesItsSideAfterItsRequestsIsAnswered() async throws {
        try await Self.withDaemon { daemon in
            let request = { (target: String) in "GET \(target) HTTP/1.1\r\nHost: camd\r\n\r\n" }
            for last in ["/v1/status", nil] {
                let before = try Self.answeredOnEventLoop(daemon.path)
                let connection = try TestConnection(.unix(daemon.path))
                try connection.send(request("/v1/cameras/cam/snapshot?max_age_ms=0") + request(Self.anyReadyFrame) + (last.map(request) ?? ""))
                connection.shutdownWrite()
                let reader = AnswerReader(connection)
                var kinds: [String] = []
                for _ in 0..<(last == nil ? 2 : 3) {
                    let answer = try reader.next()
                    #expect(answer.status == 200)
                    kinds.append(answer.header("content-type") ?? "none")
                }
                #expect(kinds == ["image/jpeg", "image/jpeg"] + (last == nil ? [] : ["application/json"]), "\(kinds)")
                _ = try connection.readToEnd(limit: 5)  // throws if camd keeps the connection open
                #expect(try Self.answeredOnEventLoop(daemon.path) == before + 1, "the second poll was not answered on the loop")
            }
        }
    }

    /// A request the decoder cannot read, sent behind a poll that waits for a frame, is
    /// answered in its turn: the poll's JPEG first, then Hummingbird's 400.
    @Test func aBadRequestBehindAWaitingPollIsAnsweredAfterIt() async throws {
        try await Self.withDaemon { daemon in
            let connection = try TestConnection(.unix(daemon.path))
            try connection.send("GET /v1/cameras/cam/snapshot?max_age_ms=0 HTTP/1.1\r\nHost: camd\r\n\r\n"
                                + "GET / HTTP/1.1\r\nHost camd\r\n\r\n")
            let reader = AnswerReader(connection)
            let poll = try reader.next()
            #expect(poll.status == 200 && poll.header("content-type") == "image/jpeg")
            #expect(try reader.next().status == 400)
        }
    }

    /// A request that does not keep its connection (`Connection: close`, or HTTP/1.0 without
    /// `keep-alive`) is answered on the loop, and the connection closed after the answer.
    @Test(arguments: ["HTTP/1.1\r\nHost: camd\r\nConnection: close", "HTTP/1.0"])
    func aConnectionCloseRequestIsAnsweredAndClosed(_ version: String) async throws {
        try await Self.withDaemon { daemon in
            let path = daemon.path, before = daemon.answeredBefore
            let connection = try TestConnection(.unix(path))
            try connection.send("GET \(Self.anyReadyFrame) \(version)\r\n\r\n")
            let answer = try AnswerReader(connection).next()
            #expect(answer.status == 200 && answer.body.count == Int(answer.header("content-length") ?? "") ?? -1)
            _ = try connection.readToEnd(limit: 5)  // throws if the connection stays open
            #expect(try Self.answeredOnEventLoop(path) == before + 1)
        }
    }

    /// A keep-alive poller served on the loop that goes quiet is closed after `idle_timeout`,
    /// as Hummingbird closes the connections it has; one that keeps polling is not.
    @Test func aQuietPollerIsClosedAfterTheIdleTimeout() async throws {
        try await Self.withDaemon(daemonLines: "idle_timeout = 1\n") { daemon in
            let path = daemon.path, before = daemon.answeredBefore
            let connection = try TestConnection(.unix(path))
            let reader = AnswerReader(connection)
            let started = ContinuousClock.now
            for _ in 0..<4 {
                try connection.send("GET \(Self.anyReadyFrame) HTTP/1.1\r\nHost: camd\r\n\r\n")
                #expect(try reader.next().status == 200)
                usleep(400_000)
            }
            #expect(try Self.answeredOnEventLoop(path) == before + 4, "the polls were not answered on the loop")
            _ = try connection.readToEnd(limit: 10)  // throws if the connection stays open
            #expect(ContinuousClock.now - started > .seconds(2), "closed before the poller went quiet")
        }
    }

    /// Over TCP with `tcp_token`, a poll without credentials is refused (401) even with a JPEG
    /// ready, and one with the token is answered on the loop; a read-only token may poll too.
    @Test func theAccessRulesComeFirst() async throws {
        try await Self.withDaemon(tcp: true, daemonLines: "tcp_token = \"full-secret\"\ntcp_view_token = \"view-secret\"\n") { daemon in
            let path = daemon.path, port = try #require(daemon.tcpPort), before = daemon.answeredBefore
            let refused = try Self.get(.tcp(port), Self.anyReadyFrame)
            #expect(refused.status == 401, "a poll without credentials was answered \(refused.status)")
            let wrong = try Self.get(.tcp(port), Self.anyReadyFrame, headers: "Authorization: Bearer nope\r\n")
            #expect(wrong.status == 401)
            // Another site's page cannot make the loop answer what the router would refuse (421).
            let rebound = try Self.get(.tcp(port), Self.anyReadyFrame, host: "evil.example",
                                       headers: "Authorization: Bearer full-secret\r\n")
            #expect(rebound.status == 421)
            #expect(try Self.answeredOnEventLoop(path) == before, "a refused poll was counted as answered")
            for token in ["full-secret", "view-secret"] {
                let allowed = try Self.get(.tcp(port), Self.anyReadyFrame, headers: "Authorization: Bearer \(token)\r\n")
                #expect(allowed.status == 200 && allowed.header("content-type") == "image/jpeg")
            }
            #expect(try Self.answeredOnEventLoop(path) == before + 2)
        }
    }

    /// A camd on the synthetic source, as the tests find it once it serves.
    struct Serving: Sendable {
        var path: String
        var tcpPort: Int?
        /// The router's answer to the warm-up poll (`routedPoll`), which waited for a frame; nil without one.
        var warmUp: Answer?
        /// `snapshots.answered_on_event_loop` and `waited_on_event_loop` after the warm-up.
        var answeredBefore: Int
        var waitedBefore: Int
    }

    /// Starts camd, waits until it serves, asks for one snapshot the router encodes (so a
    /// JPEG is ready: `anyReadyFrame`) unless `warmUp` is false, and runs `body` off the
    /// cooperative pool, its client being blocking.
    static func withDaemon(tcp: Bool = false, daemonLines: String = "", cameraLines: String = "", warmUp: Bool = true,
                           _ body: @escaping @Sendable (Serving) throws -> Void) async throws {
        let daemon = try RunningDaemon(tcp: tcp, daemonLines: daemonLines, cameraLines: cameraLines)
        defer { daemon.cleanUp() }
        try await daemon.waitUntilServing()
        let path = daemon.socketPath, port = daemon.tcpPort
        try await onOwnThread {
            let first = warmUp ? try get(.unix(path), routedPoll) : nil
            let snapshots = try snapshotStatus(path)
            try body(Serving(path: path, tcpPort: port, warmUp: first, answeredBefore: snapshots.answeredOnEventLoop,
                             waitedBefore: snapshots.waitedOnEventLoop))
        }
    }

    // MARK: a small HTTP/1.1 client that keeps the body's bytes

    struct Answer: Sendable {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    }

    static func get(_ endpoint: TestConnection.Endpoint, _ target: String, host: String? = nil, headers: String = "") throws -> Answer {
        let connection = try TestConnection(endpoint)
        try connection.send("GET \(target) HTTP/1.1\r\nHost: \(host ?? endpoint.host)\r\n\(headers)Connection: close\r\n\r\n")
        return try AnswerReader(connection).next()
    }

    /// `snapshots.answered_on_event_loop` of camera `cam`, asked on the Unix socket.
    static func answeredOnEventLoop(_ path: String) throws -> Int {
        try snapshotStatus(path).answeredOnEventLoop
    }

    /// `snapshots.waited_on_event_loop` of camera `cam`.
    static func waitedOnEventLoop(_ path: String) throws -> Int {
        try snapshotStatus(path).waitedOnEventLoop
    }

    /// `snapshots` of camera `cam`, asked on the Unix socket.
    static func snapshotStatus(_ path: String) throws -> SnapshotStatus {
        let answer = try get(.unix(path), "/v1/cameras")
        let cameras = try APIJSON.decoder().decode([CameraStatus].self, from: Data(answer.body))
        guard let camera = cameras.first(where: { $0.id == "cam" }) else { throw TestFailure("no camera cam in \(cameras.map(\.id))") }
        return camera.snapshots
    }

}

/// Reads responses one after another from a connection, keeping the bytes of the next.
final class AnswerReader {
    let connection: TestConnection
    private var pending: [UInt8] = []

    init(_ connection: TestConnection) { self.connection = connection }

    /// One response: its head, then Content-Length bytes of body (none for an answer to `HEAD`).
    func next(bodyless: Bool = false) throws -> ReadySnapshotTests.Answer {
        let marker = Array("\r\n\r\n".utf8)
        while pending.firstRange(of: marker) == nil {
            guard let more = try connection.readBytes(limit: 10) else { throw TestFailure("the connection ended before a response head") }
            pending += more
        }
        let end = pending.firstRange(of: marker)!
        let lines = String(decoding: pending[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = bodyless ? 0 : Int(headers.first { $0.name == "content-length" }?.value ?? "0") ?? 0
        pending.removeSubrange(..<end.upperBound)
        while pending.count < length {
            guard let more = try connection.readBytes(limit: 10) else { throw TestFailure("the connection ended in a body") }
            pending += more
        }
        let body = Array(pending.prefix(length))
        pending.removeFirst(length)
        return ReadySnapshotTests.Answer(status: status, headers: headers, body: body)
    }
}
