#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOHTTP1
import NIOPosix

/// A failure to talk to camd.
public struct ClientError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// One HTTP response from camd.
public struct DaemonReply: Sendable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: [UInt8]

    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// A blocking client for camd's Unix socket: what a command-line tool needs (one request per
/// connection). HTTP/1.1 itself is SwiftNIO's (`NIOHTTP1`, the codec camd's server runs on),
/// so the bytes are framed and parsed by a well-kept library; camctl waits on the answer.
/// AsyncHTTPClient (which speaks `http+unix://`) was not taken: it would bring swift-nio-ssl's
/// BoringSSL and HTTP/2 into a tool that speaks plain HTTP/1.1 to a local socket, and make
/// every camctl command async for one request.
public struct DaemonClient: Sendable {
    public let socketPath: String

    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// Where camd listens, in the order camctl looks: an explicit path, $CAMD_SOCKET,
    /// the system socket, then the user's.
    public static func candidatePaths(explicit: String?) -> [String] {
        if let explicit { return [explicit] }
        var paths: [String] = []
        if let env = getenv("CAMD_SOCKET") { paths.append(String(cString: env)) }
        paths.append("/run/camd.sock")
        if let runtime = getenv("XDG_RUNTIME_DIR") { paths.append(String(cString: runtime) + "/camd.sock") }
        paths.append("/tmp/camd-\(geteuid()).sock")
        return paths
    }

    /// The first daemon that answers, or nil when none runs (or none lets this user connect).
    public static func locate(explicit: String? = nil) -> DaemonClient? {
        for path in candidatePaths(explicit: explicit) {
            guard let channel = try? DaemonClient(socketPath: path).connect(collector: nil) else { continue }
            try? channel.close().wait()
            return DaemonClient(socketPath: path)
        }
        return nil
    }

    public func request(_ method: String, _ path: String, body: [UInt8]? = nil, timeout seconds: Double = 60) throws(ClientError) -> DaemonReply {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let reply = loop.makePromise(of: DaemonReply.self)
        let channel: any Channel
        do {
            channel = try connect(collector: reply)
        } catch {
            reply.fail(error)  // a promise must be completed, even one nobody waits for
            throw error
        }
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path)
        head.headers = ["Host": "camd", "Connection": "close", "User-Agent": "camctl"]
        if let body { head.headers.add(contentsOf: [("Content-Type", "application/json"), ("Content-Length", String(body.count))]) }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        let timer = channel.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
            reply.fail(ClientError("camd did not answer within \(Int(seconds)) s"))
            channel.close(promise: nil)
        }
        defer {
            timer.cancel()
            channel.close(promise: nil)
        }
        do {
            return try reply.futureResult.wait()
        } catch let error as ClientError {
            throw error
        } catch {
            throw ClientError("reading from \(socketPath): \(error)")
        }
    }

    /// A connected channel with NIO's HTTP/1.1 client codec, and `collector` reading the answer.
    private func connect(collector: EventLoopPromise<DaemonReply>?) throws(ClientError) -> any Channel {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).channelInitializer { channel in
            guard let collector else { return channel.eventLoop.makeSucceededVoidFuture() }
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHTTPClientHandlers()
                try channel.pipeline.syncOperations.addHandler(ReplyCollector(reply: collector))
            }
        }
        do {
            return try bootstrap.connect(unixDomainSocketPath: socketPath).wait()
        } catch let error as IOError where error.errnoCode == EACCES {
            throw ClientError("cannot connect to \(socketPath): permission denied (the socket is for group video; see `ls -l \(socketPath)`)")
        } catch let error as IOError {
            throw ClientError("cannot connect to \(socketPath): \(String(cString: strerror(error.errnoCode)))")
        } catch {
            throw ClientError("cannot connect to \(socketPath): \(error)")
        }
    }
}

/// Gathers one response from NIO's decoder into a `DaemonReply`; the connection closing
/// before the end of the response is an error.
private final class ReplyCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let reply: EventLoopPromise<DaemonReply>
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []

    init(reply: EventLoopPromise<DaemonReply>) {
        self.reply = reply
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body(let buffer): body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head else { return reply.fail(ClientError("camd sent a body without a status line")) }
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            reply.succeed(DaemonReply(status: Int(head.status.code), headers: headers, body: body))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        reply.fail(ClientError("camd sent a malformed response: \(error)"))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        reply.fail(ClientError(head == nil ? "camd closed the connection without answering" : "camd's response was cut short"))
    }
}
