import CaptureSession
import ControlAPI
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// What a connection's handler asks of the listener's task group.
enum ListenerWork: Sendable {
    /// A connection handed to Hummingbird, for a task of its own.
    case connection(HTTP1Channel.Value)
    /// A snapshot poll the router answers (it waits for a frame or an encode the loop cannot
    /// wait for, or whose wait there ended without a JPEG); the answer, a single buffer, goes
    /// to `answer` and the connection stays with its handler.
    case route(HTTPRequest, any Channel, EventLoopPromise<(HTTPResponse, ByteBuffer)>)
}

/// A new connection's pipeline: `PollHeadReader`, which reads snapshot polls itself and adds
/// NIO's HTTP/1 request decoder (with the limits Hummingbird's `HTTP1Channel` gives it) for
/// anything else, and `ReadySnapshotHandler` after it. NIO's response encoder and
/// Hummingbird's own handlers (the conversion to Swift HTTP Types, `HTTPConnectionStateHandler`
/// and the `NIOAsyncChannel` with its task) are added when a request that needs the router
/// comes, and a client that only polls snapshots never needs them: each handler is set up, and
/// every event passes it, per connection (issue 16: a poll answered on the loop took 8% fewer
/// instructions without the two of Hummingbird, and about 10% fewer again without the encoder).
struct ConnectionSetup: Sendable {
    let decoderLimits: HTTP1Channel.Configuration.DecoderConfiguration
    let answers: ReadySnapshots?
    let logger: Logger
    /// Gives the listener's task group work; false when the listener has stopped taking it.
    let submit: @Sendable (ListenerWork) -> Bool
    /// The listener's loop, where every connection is served, and its connections.
    let eventLoop: any EventLoop
    let connections: NIOLoopBoundBox<ListenerConnections>

    /// A connection's setup for a listener on `eventLoop`.
    init(decoderLimits: HTTP1Channel.Configuration.DecoderConfiguration, idleTimeout: Duration, answers: ReadySnapshots?,
         logger: Logger, on eventLoop: any EventLoop, submit: @escaping @Sendable (ListenerWork) -> Bool) {
        self.decoderLimits = decoderLimits
        self.answers = answers
        self.logger = logger
        self.submit = submit
        self.eventLoop = eventLoop
        // Made off the loop, for the loop only: every access asserts it is there.
        self.connections = .makeBoxSendingValue(ListenerConnections(on: eventLoop, idleTimeout: idleTimeout), eventLoop: eventLoop)
    }

    /// A connection on another loop than the listener's, which its connections cannot keep.
    struct AnotherEventLoop: Error {}

    func setUp(_ channel: any Channel) throws {
        guard channel.eventLoop === eventLoop else { throw AnotherEventLoop() }
        // A client that closes its side after its request still gets the answer. Set here, on
        // the loop, rather than as the bootstrap's child option, which NIO sets through futures.
        try channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: true)
        let pipeline = channel.pipeline.syncOperations
        // Named: a handler without a name gets one made by string interpolation ("handler0").
        try pipeline.addHandler(PollHeadReader(limits: Self.limits(decoderLimits)), name: "poll-heads")
        try pipeline.addHandler(ReadySnapshotHandler(answers: answers, connections: connections.value, logger: logger, submit: submit),
                                name: "ready-snapshots")
    }

    /// Hummingbird's limits on request heads as NIO's decoder takes them.
    static func limits(_ limits: HTTP1Channel.Configuration.DecoderConfiguration) -> NIOHTTPDecoderLimitConfiguration {
        var nio = NIOHTTPDecoderLimitConfiguration()
        nio.maxHeaderFieldSize = limits.maxHeaderFieldSize
        nio.maxHeaderListSize = limits.maxHeaderListSize
        nio.maxHeaderFieldCount = limits.maxHeaderFieldCount
        return nio
    }
}

/// Serves a connection's snapshot polls on the event loop: those a ready JPEG answers
/// (`ReadySnapshots`) at once, those that must wait for their encode once it is made
/// (`CaptureSession.waitForSnapshot`), and those the loop cannot wait for through the router in
/// a task, the connection staying here, so a keep-alive poller is answered at once from its
/// next poll on. At the first other request it adds Hummingbird's handlers after itself (as
/// `HTTP1Channel` adds them), wraps the connection in a `NIOAsyncChannel`, gives it to
/// Hummingbird and passes that request and everything after it on, so requests are answered in
/// order. A client that reads nothing while it sends polls is handed over too, at the first poll
/// that finds the connection not writable: NIOAsyncChannel stops reading then, this handler
/// does not.
/// Until then it does what `HTTPConnectionStateHandler` does once Hummingbird has the
/// connection: it closes one idle for the idle timeout (never while a poll waits for its answer;
/// `ListenerConnections` sweeps), and at shutdown (`ChannelShouldQuiesceEvent`) closes an idle
/// connection at once and a busy one after its answer. It writes its answers as bytes
/// (`ByteBuffer.writeSnapshotAnswer`, `writeAnswerHead`); NIO's response encoder comes with
/// Hummingbird's handlers.
final class ReadySnapshotHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    private enum State {
        /// Between requests.
        case idle
        /// Reading a request it answers: the answer is written at the request's end.
        case answering(RenderedSnapshot, close: Bool)
        /// A poll waits for its JPEG (`snapshotWait`) or the router's answer; parts that come
        /// meanwhile wait in `held`.
        case waiting(close: Bool)
        /// It answered a request with `Connection: close`: nothing more is read.
        case closing
        /// The connection is Hummingbird's.
        case handedOver
    }

    private let answers: ReadySnapshots?
    private let submit: @Sendable (ListenerWork) -> Bool
    /// The listener's connections, this one among them while it is in the pipeline.
    private let connections: ListenerConnections
    /// Its place in `connections`.
    var slot: Int?
    /// Its place in the pipeline, for the idle sweep and the shutdown.
    private var context: ChannelHandlerContext?
    private let logger: Logger
    private var state = State.idle
    /// Whether the connection came over TCP; nil when its address is unknown (then the
    /// router answers, which looks at the connection itself).
    private var overTCP: Bool?
    /// Requests sent behind a poll that waits, passed on once it is answered.
    private var held: [HTTPServerRequestPart] = []
    /// The last answer written, so a close waits for it to be sent.
    private var lastWrite: EventLoopFuture<Void>?
    /// The router's answer to a poll it answers. Kept, and failed if the connection goes
    /// first: a listener cancelled with the poll still queued drops it unanswered, and NIO
    /// stops a debug build that lets an unfulfilled promise go.
    private var routerAnswer: EventLoopPromise<(HTTPResponse, ByteBuffer)>?
    /// The poll's wait for its JPEG on the loop, and when it gives up for the router; cancelled
    /// if the connection goes first.
    private var snapshotWait: CaptureSession.SnapshotWait?
    private var waitLimit: Scheduled<Void>?
    /// `waitForSnapshot` is registering for the wait's end.
    private var starting = false
    /// The client closed its side (`ChannelEvent.inputClosed`): once every request it sent is
    /// answered, the connection closes.
    private var inputClosed = false
    /// A request the decoder could not read behind a poll that waits: answered in its turn,
    /// after the poll's answer (Hummingbird answers it 400 and closes).
    private var heldError: (any Error)?
    /// The daemon is stopping: the connection closes after the answer under way.
    private var quiescing = false
    /// When the connection last read a request's part or wrote an answer, for the idle timeout.
    private var lastActive = NIODeadline.now()

    init(answers: ReadySnapshots?, connections: ListenerConnections, logger: Logger, submit: @escaping @Sendable (ListenerWork) -> Bool) {
        self.answers = answers
        self.connections = connections
        self.logger = logger
        self.submit = submit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        switch context.channel.localAddress {
        case .unixDomainSocket: overTCP = false
        case .v4, .v6: overTCP = true
        case nil: overTCP = nil
        }
        self.context = context
        connections.add(self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        state = .closing
        connections.remove(self)
        self.context = nil
        routerAnswer?.fail(ChannelError.ioOnClosedChannel)
        routerAnswer = nil
        waitLimit?.cancel()
        waitLimit = nil
        snapshotWait?.cancel()
        snapshotWait = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .handedOver = state { return context.fireChannelRead(data) }
        lastActive = .now()
        read(unwrapInboundIn(data), context: context)
    }

    private func read(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch (state, part) {
        case (.handedOver, _):
            context.fireChannelRead(wrapInboundOut(part))
        case (.closing, _):
            break
        case (.waiting, _):
            held.append(part)
        case (.idle, .head(let head)):
            let close = !head.isKeepAlive
            switch answerable(head, context) {
            case .answered(let shot):
                state = .answering(shot, close: close)
            case .waits(let wait):
                waitForSnapshot(wait, close: close, context)
            case .other:
                guard handToHummingbird(context) else { return }
                context.fireChannelRead(wrapInboundOut(part))
                // Told after the request, which Hummingbird's state handler then lets finish.
                if quiescing { context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
            }
        case (.answering(let shot, let close), .end):
            var answer = context.channel.allocator.buffer(capacity: ByteBuffer.answerHeadCapacity + shot.jpeg.count)
            answer.writeSnapshotAnswer(shot)
            send(answer, close: close, context)
        case (.answering, _), (.idle, .body), (.idle, .end):
            // A body with a snapshot's GET is read and dropped, as the router drops it; the
            // decoder never gives a head before the previous request's end, nor parts without a head.
            break
        }
    }

    /// What becomes of a request: the answer at once, a wait for its JPEG, or the connection
    /// handed over. A client that is not reading its answers is handed over.
    private func answerable(_ head: HTTPRequestHead, _ context: ChannelHandlerContext) -> ReadySnapshots.Outcome {
        guard let answers, let overTCP, context.channel.isWritable, head.method == .GET,
              head.uri.utf8.starts(with: ReadySnapshots.prefixBytes) else { return .other }
        return answers.answer(target: head.uri, authority: head.headers["Host"].first, fields: UnconvertedFields(headers: head.headers),
                              overTCP: overTCP) {
            HTTPRequest(originFormGET: head)
        }
    }

    /// Has a poll wait here for its JPEG, answered once it is made, without the router's task
    /// and its turns of the camera's actor (issue 16: a poll that comes while its JPEG made
    /// ahead is still being encoded, and a new poll's first requests). The router answers it
    /// when the loop cannot wait, and when the wait ends without a JPEG (the camera stopped
    /// or was lost, its settings changed, `SnapshotWait.patience`); the poll is then counted
    /// again in the learning of its period, a second request that, coming between two of the
    /// poll's, is taken for another client's.
    private func waitForSnapshot(_ wait: ReadySnapshots.Wait, close: Bool, _ context: ChannelHandlerContext) {
        let made = context.eventLoop.makePromise(of: RenderedSnapshot?.self)
        switch wait.start({ made.succeed($0) }) {
        case .ready(let shot):
            made.succeed(nil)  // never called back: the promise is still completed, as NIO wants
            state = .answering(shot, close: close)
        case .unavailable:
            made.succeed(nil)
            route(wait.request, close: close, context)
        case .waiting(let pending):
            snapshotWait = pending
            holdReading(close: close, context)
            waitLimit = context.eventLoop.scheduleTask(in: TimeAmount(pending.patience)) { pending.cancel() }
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            starting = true
            made.futureResult.whenSuccess { shot in
                let (handler, context) = loopBound.value
                // A JPEG delivered before this was registered calls back at once, inside the read
                // of this request (perhaps one `answered` passes on): answered after that read.
                guard handler.starting else { return handler.made(shot, wait.request, context) }
                context.eventLoop.execute { handler.made(shot, wait.request, context) }
            }
            starting = false
        }
    }

    private func made(_ shot: RenderedSnapshot?, _ request: HTTPRequest, _ context: ChannelHandlerContext) {
        waitLimit?.cancel()
        waitLimit = nil
        snapshotWait = nil
        guard case .waiting(let close) = state else { return }  // the connection went meanwhile
        guard let shot else { return route(request, close: close, context) }
        var answer = context.channel.allocator.buffer(capacity: ByteBuffer.answerHeadCapacity + shot.jpeg.count)
        answer.writeSnapshotAnswer(shot)
        answered(answer, close: close, context)
    }

    /// Nothing more is read until the poll's answer is written: what came in the same read waits in `held`.
    private func holdReading(close: Bool, _ context: ChannelHandlerContext) {
        state = .waiting(close: close)
        context.channel.setAutoRead(false)
    }

    /// Has the router answer a poll in the listener's task group; the request's end and
    /// anything after it are held until the answer is written.
    private func route(_ request: HTTPRequest, close: Bool, _ context: ChannelHandlerContext) {
        let promise = context.eventLoop.makePromise(of: (HTTPResponse, ByteBuffer).self)
        guard submit(.route(request, context.channel, promise)) else {
            promise.fail(ChannelError.ioOnClosedChannel)
            return closing(context)
        }
        routerAnswer = promise
        holdReading(close: close, context)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        promise.futureResult.whenComplete { result in
            let (handler, context) = loopBound.value
            handler.routed(result, context)
        }
    }

    private func routed(_ result: Result<(HTTPResponse, ByteBuffer), any Error>, _ context: ChannelHandlerContext) {
        routerAnswer = nil
        guard case .waiting(let close) = state else { return }
        guard case .success(let (head, body)) = result else { return closing(context) }
        var answer = context.channel.allocator.buffer(capacity: ByteBuffer.answerHeadCapacity + body.readableBytes)
        if answer.writeAnswerHead(head, bodyLength: body.readableBytes) { answer.writeImmutableBuffer(body) }
        answered(answer, close: close, context)
    }

    /// Sends the answer of the poll that waited, and passes on what came behind it.
    private func answered(_ answer: ByteBuffer, close: Bool, _ context: ChannelHandlerContext) {
        context.channel.setAutoRead(true)
        // The poll's own end was held with anything sent after it: drop the end, pass the rest.
        var rest = held
        held = []
        if let end = rest.firstIndex(where: { if case .end = $0 { true } else { false } }) {
            rest.removeSubrange(...end)
        }
        send(answer, close: close, context)
        for part in rest { read(part, context: context) }
        // Passed on outside a read: Hummingbird's handler takes them at the end of one.
        if case .handedOver = state, !rest.isEmpty { context.fireChannelReadComplete() }
        if let error = heldError {
            heldError = nil
            errorCaught(context: context, error: error)
        }
        if inputClosed { endOfInput(context) }
    }

    /// Writes an answer, its head and body in one buffer, and closes after it when the request asked to.
    private func send(_ answer: ByteBuffer, close: Bool, _ context: ChannelHandlerContext) {
        let written = context.writeAndFlush(wrapOutboundOut(answer))
        lastWrite = written
        lastActive = .now()
        if close || quiescing {
            // As Hummingbird ends a `Connection: close` exchange: read nothing more, send the
            // answer, close the output, and let the client close.
            state = .closing
            let channel = context.channel
            written.whenComplete { _ in channel.close(mode: .output, promise: nil) }
        } else {
            state = .idle
        }
    }

    private func closing(_ context: ChannelHandlerContext) {
        state = .closing
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch state {
        case .handedOver:
            context.fireErrorCaught(error)
        case .idle:
            // A request the decoder cannot read: Hummingbird answers it (400) and closes.
            if handToHummingbird(context) { context.fireErrorCaught(error) }
        case .waiting where heldError == nil:
            heldError = error
        case .answering, .waiting, .closing:
            closing(context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handedOver = state {
            return context.fireUserInboundEventTriggered(event)
        }
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputClosed = true
            return endOfInput(context)
        }
        if event is ChannelShouldQuiesceEvent {
            // As `HTTPConnectionStateHandler`: closed now when idle, after its answer when busy.
            quiescing = true
            if case .idle = state { closing(context) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Closes the connection if it has been idle since before `deadline`, as
    /// `HTTPConnectionStateHandler` closes one idle for its timeout (`ListenerConnections`'
    /// sweep): a request half sent is idle too, a poll that waits for its answer is not, nor a
    /// connection Hummingbird has (its own handler times it out).
    func closeIfIdle(since deadline: NIODeadline) {
        guard let context, lastActive <= deadline else { return }
        switch state {
        case .idle, .answering: closing(context)
        case .handedOver, .closing, .waiting: break
        }
    }

    /// The daemon is stopping (`ListenerConnections.quiesce`): told as NIO's
    /// `ServerQuiescingHelper` tells a connection, through its whole pipeline.
    func quiesce() {
        context?.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    }

    /// The client will send nothing more. Every request it sent is still answered: a poll that
    /// waits, and the requests held behind it, which `answered` passes on before it comes here
    /// again; Hummingbird, given the connection by one of them, is told in turn and
    /// closes after its answers. Otherwise the connection closes once the answers written are sent.
    private func endOfInput(_ context: ChannelHandlerContext) {
        switch state {
        case .waiting, .closing:
            break
        case .handedOver:
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        case .idle, .answering:
            let channel = context.channel
            (lastWrite ?? context.eventLoop.makeSucceededVoidFuture()).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// Wraps the connection for Hummingbird and gives it over; false (the connection closed)
    /// when that fails or the listener no longer takes connections.
    private func handToHummingbird(_ context: ChannelHandlerContext) -> Bool {
        state = .handedOver
        if context.channel.isActive, let value = try? hummingbirdsHandlers(after: context),
           submit(.connection(value)) {
            return true
        }
        context.close(promise: nil)
        return false
    }

    /// NIO's response encoder and Hummingbird's handlers after this one, as `HTTP1Channel.setup`
    /// adds them after NIO's codec, and the connection wrapped for its task. Its
    /// `HTTPConnectionStateHandler` keeps the idle timeout from now on.
    ///
    /// The encoder is not paired with the decoder as `configureHTTPServerPipeline` pairs them,
    /// so `HeadAnswerFramer` keeps answers to `HEAD` without a body.
    private func hummingbirdsHandlers(after context: ChannelHandlerContext) throws -> HTTP1Channel.Value {
        let pipeline = context.pipeline.syncOperations
        try pipeline.addHandlers([HTTPResponseEncoder(configuration: .init()), HeadAnswerFramer(), HTTP1ToHTTPServerCodec(secure: false),
                                  HTTPConnectionStateHandler(idleTimeout: connections.idleTimeout, logger: logger)],
                                 position: .after(self))
        return try HTTP1Channel.Value(wrappingChannelSynchronously: context.channel,
                                      configuration: .init(isOutboundHalfClosureEnabled: true))
    }
}

extension HTTPRequest {
    /// A `GET` whose target is in origin form (it starts with `/`) in Swift HTTP Types, as
    /// `HTTPRequest(head, secure: false, splitCookie: false)` converts it for the router
    /// (`HTTP1ToHTTPServerCodec`); nil for any other request. That conversion reads the target
    /// with Foundation's `URLComponents`, to take an absolute-form target (`http://host/path`)
    /// apart; a target starting with `/` has no scheme and comes back as it was, and reading
    /// it was half the conversion's cost on the poll path (4,600 instructions).
    init?(originFormGET head: HTTPRequestHead) {
        guard head.method == .GET, head.uri.utf8.first == UInt8(ascii: "/") else { return nil }
        self.init(method: .get, scheme: "http", authority: head.headers["Host"].first, path: head.uri,
                  headerFields: HTTPFields(head.headers, splitCookie: false))
    }
}

extension Channel {
    /// Sets `autoRead` on the channel's own event loop.
    fileprivate func setAutoRead(_ on: Bool) {
        try? syncOptions?.setOption(ChannelOptions.autoRead, value: on)
    }
}
