import CaptureSession
import ControlAPI
import Hummingbird
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// Serves the control API over HTTP/1.1 on the Unix socket (a path camd binds,
/// or the socket systemd passes) and, when configured, on TCP.
///
/// Hummingbird's own server cannot adopt an inherited socket, so this runs
/// Hummingbird's HTTP/1 channel on NIO listeners it sets up itself. A connection starts
/// with camd's own handlers on NIO (`ConnectionSetup`: its polls' heads read by `PollHeadReader`,
/// anything else by NIO's HTTP/1 decoder): snapshot polls are answered there, on the event loop, from
/// a ready JPEG or once their JPEG is made, and those the loop cannot wait for by the router in
/// a task (`ReadySnapshotHandler`); the connection becomes Hummingbird's, with a task of its
/// own, at its first other request (issue 16).
public struct HTTPListener: Service {
    public enum Endpoint: Sendable, CustomStringConvertible {
        /// A listening socket passed by systemd (LISTEN_FDS).
        case inherited(Int32)
        /// A path camd binds, then gives `mode` and `group`.
        case unixSocket(path: String, mode: UInt32, group: String?)
        case tcp(host: String, port: Int)

        public var description: String {
            switch self {
            case .inherited(let fd): return "the socket systemd passed (fd \(fd))"
            case .unixSocket(let path, _, _): return path
            case .tcp(let host, let port): return "\(host):\(port)"
            }
        }
    }

    let endpoints: [Endpoint]
    let responder: RouterResponder<CamdRequestContext>
    let logger: Logger
    let onListening: @Sendable () async -> Void
    /// Snapshot polls answered on the event loop; nil: the router answers every request.
    let readySnapshots: ReadySnapshots?
    /// A group given connect access to the Unix socket by an ACL entry (read-only API users).
    let readOnlyGroup: String?
    /// How long a connection may sit without a request before camd closes it; a
    /// response under way (a live stream) is never cut by it.
    let idleTimeout: Duration

    /// Limits on request heads; bodies are limited per route (64 KiB of JSON).
    static let headerLimits = HTTP1Channel.Configuration.DecoderConfiguration(
        maxHeaderFieldSize: 8 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100)

    public init(endpoints: [Endpoint], router: Router<CamdRequestContext>, logger: Logger, readOnlyGroup: String? = nil,
                idleTimeout: Duration = .seconds(60), readySnapshots: ReadySnapshots? = nil,
                onListening: @escaping @Sendable () async -> Void = {}) {
        self.endpoints = endpoints
        self.readySnapshots = readySnapshots
        self.readOnlyGroup = readOnlyGroup
        self.idleTimeout = idleTimeout
        self.responder = router.buildResponder()
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let responder = self.responder
        let logger = self.logger
        let http = HTTP1Channel(responder: { request, writer, channel in
            let response = await Self.respond(to: request, on: channel, responder, logger)
            try await writer.write(response: response.head, body: response.body)
        })
        // A connection gets a task only when a request needs the router: snapshot polls are
        // answered on the event loop, and those the loop cannot wait for by the router in a task
        // of their own (`ReadySnapshotHandler`).
        let (work, submit) = AsyncStream.makeStream(of: ListenerWork.self)
        // Every listener and every connection on one event loop. With the group's loops, a
        // connection accepted on one loop was registered on the next, and the two loops woke
        // each other four times before its request was read.
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        // Under SCHED_BATCH, a client that connects or closes is not preempted by the loop it
        // wakes (`ThreadScheduling`).
        loop.execute {
            let refused = ThreadScheduling.batchCurrentThread()
            if refused != 0 { logger.notice("event loop left under the default scheduling policy: \(String(cString: strerror(refused)))") }
        }
        let setUp = ConnectionSetup(decoderLimits: Self.headerLimits, idleTimeout: idleTimeout, answers: readySnapshots,
                                    logger: logger, on: loop) { item in
            if case .terminated = submit.yield(item) { return false }
            return true
        }
        var servers: [any Channel] = []
        for endpoint in endpoints {
            let bootstrap = ServerBootstrap(group: loop)
                .serverChannelOption(ChannelOptions.backlog, value: 256)
                // One accept per wake-up: NIO's default (four) ends every accept with one more
                // that fails with EAGAIN, a system call in each poll's way. The listening socket
                // is level-triggered, so a burst of connections is accepted one turn each.
                .serverChannelOption(ChannelOptions.maxMessagesPerRead, value: 1)
                .serverChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ConnectionAcceptor(setUp))
                    }
                }
                // Where `ConnectionAcceptor` leaves a connection to the bootstrap.
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try setUp.setUp(channel) }
                }
            do {
                servers.append(try await bind(endpoint, bootstrap))
            } catch {
                for server in servers { try? await server.close() }
                throw error
            }
            logger.info("listening on \(endpoint)")
        }
        await onListening()
        let listening = servers
        // The listeners closed (SIGTERM), no connection is handed over any more.
        EventLoopFuture.andAllComplete(listening.map(\.closeFuture), on: loop).whenComplete { _ in submit.finish() }
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await withDiscardingTaskGroup { group in
                    for await item in work {
                        switch item {
                        case .connection(let connection):
                            group.addTask { await http.handle(value: connection, logger: logger) }
                        case .route(let request, let channel, let answer):
                            group.addTask { answer.completeWith(await Self.route(request, on: channel, responder, logger)) }
                        }
                    }
                }
            } onCancel: {
                for server in listening { server.close(promise: nil) }
            }
        } onGracefulShutdown: {
            // On SIGTERM every listener closes, and every connection is told to finish: idle
            // keep-alive ones close at once, the others after their response (live streams end
            // when the cameras stop first). Bounded by the service group's shutdown_timeout;
            // then the connections are cancelled.
            let tracked = setUp.connections
            loop.execute {
                for server in listening { server.close(promise: nil) }
                tracked.value.quiesce()
            }
        }
        for case .unixSocket(let path, _, _) in endpoints { unlink(path) }
    }

    /// The router's answer to `request`; an error it let through is logged and answered 500.
    private static func respond(to request: Request, on channel: any Channel, _ responder: RouterResponder<CamdRequestContext>,
                                _ logger: Logger) async -> Response {
        let context = CamdRequestContext(source: .init(channel: channel, logger: logger))
        do {
            return try await responder.respond(to: request, context: context)
        } catch {
            logger.error("unhandled error for \(request.method) \(request.uri.path): \(error)")
            return Response(status: .internalServerError)
        }
    }

    /// The router's answer to a snapshot poll taken off a connection (`ListenerWork.route`): a
    /// JPEG or an error, gathered into one buffer.
    private static func route(_ head: HTTPRequest, on channel: any Channel, _ responder: RouterResponder<CamdRequestContext>,
                              _ logger: Logger) async -> Result<(HTTPResponse, ByteBuffer), any Error> {
        let response = await respond(to: Request(head: head, body: RequestBody(buffer: ByteBuffer())), on: channel, responder, logger)
        var answer = response.head
        let body = GatheredBody()
        do {
            try await response.body.write(body)
        } catch {
            return .failure(error)
        }
        if answer.headerFields[.contentLength] == nil { answer.headerFields[.contentLength] = String(body.storage.buffer.readableBytes) }
        return .success((answer, body.storage.buffer))
    }

    private func bind(_ endpoint: Endpoint, _ bootstrap: ServerBootstrap) async throws -> any Channel {
        switch endpoint {
        case .inherited(let fd):
            if let readOnlyGroup, let path = SocketFile.boundPath(of: fd) {
                var info = stat()
                if stat(path, &info) == 0 { try SocketFile.grantGroup(path, group: readOnlyGroup, mode: UInt32(info.st_mode & 0o777)) }
            }
            return try await bootstrap.withBoundSocket(fd).get()
        case .tcp(let host, let port):
            do {
                return try await bootstrap.bind(host: host, port: port).get()
            } catch let error as IOError {
                throw TCPListenError(host: host, port: port, code: error.errnoCode)
            }
        case .unixSocket(let path, let mode, let group):
            try SocketFile.prepare(path)
            let server = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false).get()
            try SocketFile.setAccess(path, mode: mode, group: group)
            if let readOnlyGroup { try SocketFile.grantGroup(path, group: readOnlyGroup, mode: mode) }
            return server
        }
    }
}

/// A response body written into one buffer (`HTTPListener.route`: a snapshot or an error).
private struct GatheredBody: ResponseBodyWriter {
    final class Storage {
        var buffer = ByteBuffer()
    }
    let storage = Storage()

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        storage.buffer.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
