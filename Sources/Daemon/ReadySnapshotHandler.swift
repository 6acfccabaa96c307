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
    /// A snapshot poll the router answers (it waits for a frame or an encode); the answer,
    /// a single buffer, goes to `answer` and the connection stays with its handler.
    case route(HTTPRequest, any Channel, EventLoopPromise<(HTTPResponse, ByteBuffer)>)
}

/// A new connection's pipeline, as Hummingbird's `HTTP1Channel` sets it up (the same codec,
/// limits, idle timeout and keep-alive handling), with `ReadySnapshotHandler` last instead of
/// the `NIOAsyncChannel` and the task per connection: those are added when a request that
/// needs the router comes, and a client that only polls snapshots never needs them.
struct ConnectionSetup: Sendable {
    let decoderLimits: HTTP1Channel.Configuration.DecoderConfiguration
    let idleTimeout: Duration
    let answers: ReadySnapshots?
    let logger: Logger
    /// Gives the listener's task group work; false when the listener has stopped taking it.
    let submit: @Sendable (ListenerWork) -> Bool

    func setUp(_ channel: any Channel) throws {
        // A client that closes its side after its request still gets the answer. Set here, on
        // the loop, rather than as the bootstrap's child option, which NIO sets through futures.
        try channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: true)
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = decoderLimits.maxHeaderFieldSize
        limits.maxHeaderListSize = decoderLimits.maxHeaderListSize
        limits.maxHeaderFieldCount = decoderLimits.maxHeaderFieldCount
        let pipeline = channel.pipeline.syncOperations
        try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false,
                                                 withOutboundHeaderValidation: false, withEncoderConfiguration: .init(),
                                                 withDecoderLimitConfiguration: limits)
        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
        try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: idleTimeout, logger: logger))
        try pipeline.addHandler(ReadySnapshotHandler(answers: answers, submit: submit))
    }
}

/// Serves a connection's snapshot polls on the event loop: those a ready JPEG answers
/// (`ReadySnapshots`) at once, those that must wait for a frame through the router in a task,
/// the connection staying here, so a keep-alive poller is answered at once from its next poll
/// on. At the first other request it wraps the connection in a `NIOAsyncChannel` (whose handler
/// goes after this one), gives it to Hummingbird and passes that request and everything after
/// it on, so requests are answered in order. A client that reads nothing while it sends polls
/// is handed over too, at the first poll that finds the connection not writable: NIOAsyncChannel
/// stops reading then, this handler does not.
/// `HTTPConnectionStateHandler` is before it, so the idle timeout, the end of a keep-alive
/// connection at shutdown and its request count see this handler's requests and answers too.
final class ReadySnapshotHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private enum State {
        /// Between requests.
        case idle
        /// Reading a request it answers: the answer is written at the request's end.
        case answering(HTTPResponse, ByteBuffer, close: Bool)
        /// The router is answering a poll; parts that come meanwhile wait in `held`.
        case routing(close: Bool)
        /// It answered a request with `Connection: close`: nothing more is read.
        case closing
        /// The connection is Hummingbird's.
        case handedOver
    }

    private let answers: ReadySnapshots?
    private let submit: @Sendable (ListenerWork) -> Bool
    private var state = State.idle
    /// Whether the connection came over TCP; nil when its address is unknown (then the
    /// router answers, which looks at the connection itself).
    private var overTCP: Bool?
    /// Requests sent behind a poll the router is answering, passed on once it is answered.
    private var held: [HTTPRequestPart] = []
    /// The last answer written, so a close waits for it to be sent.
    private var lastWrite: EventLoopFuture<Void>?
    /// The router's answer to the poll being routed. Kept, and failed if the connection goes
    /// first: a listener cancelled with the poll still queued drops it unanswered, and NIO
    /// stops a debug build that lets an unfulfilled promise go.
    private var routerAnswer: EventLoopPromise<(HTTPResponse, ByteBuffer)>?
    /// The client closed its side (`ChannelEvent.inputClosed`): once every request it sent is
    /// answered, the connection closes.
    private var inputClosed = false
    /// A request the decoder could not read behind a poll being routed: answered in its turn,
    /// after the poll's answer (Hummingbird answers it 400 and closes).
    private var heldError: (any Error)?

    init(answers: ReadySnapshots?, submit: @escaping @Sendable (ListenerWork) -> Bool) {
        self.answers = answers
        self.submit = submit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        switch context.channel.localAddress {
        case .unixDomainSocket: overTCP = false
        case .v4, .v6: overTCP = true
        case nil: overTCP = nil
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        state = .closing
        routerAnswer?.fail(ChannelError.ioOnClosedChannel)
        routerAnswer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        read(unwrapInboundIn(data), context: context)
    }

    private func read(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        switch (state, part) {
        case (.handedOver, _):
            context.fireChannelRead(wrapInboundOut(part))
        case (.closing, _):
            break
        case (.routing, _):
            held.append(part)
        case (.idle, .head(let request)):
            let close = request.headerFields[.connection]?.lowercased() == "close"
            switch answerable(request, context) {
            case .answered(let head, let body):
                state = .answering(head, body, close: close)
            case .waits:
                route(request, close: close, context)
            case .other:
                if handToHummingbird(context) { context.fireChannelRead(wrapInboundOut(part)) }
            }
        case (.answering(let head, let body, let close), .end):
            write(head, body, close: close, context)
        case (.answering, _), (.idle, .body), (.idle, .end):
            // A body with a snapshot's GET is read and dropped, as the router drops it; the
            // decoder never gives a head before the previous request's end, nor parts without a head.
            break
        }
    }

    /// What becomes of a request: the answer at once, the router's answer in a task, or the
    /// connection handed over. A client that is not reading its answers is handed over.
    private func answerable(_ request: HTTPRequest, _ context: ChannelHandlerContext) -> ReadySnapshots.Outcome {
        guard let answers, let overTCP, context.channel.isWritable else { return .other }
        return answers.answer(request, overTCP: overTCP)
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
        state = .routing(close: close)
        // Nothing more is read until the answer is written: what came in the same read waits in `held`.
        context.channel.setAutoRead(false)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        promise.futureResult.whenComplete { result in
            let (handler, context) = loopBound.value
            handler.routed(result, context)
        }
    }

    private func routed(_ result: Result<(HTTPResponse, ByteBuffer), any Error>, _ context: ChannelHandlerContext) {
        routerAnswer = nil
        guard case .routing(let close) = state else { return }
        context.channel.setAutoRead(true)
        guard case .success(let (head, body)) = result else { return closing(context) }
        // The poll's own end was held with anything sent after it: drop the end, pass the rest.
        var rest = held
        held = []
        if let end = rest.firstIndex(where: { if case .end = $0 { true } else { false } }) {
            rest.removeSubrange(...end)
        }
        write(head, body, close: close, context)
        for part in rest { read(part, context: context) }
        // Passed on outside a read: Hummingbird's handler takes them at the end of one.
        if case .handedOver = state, !rest.isEmpty { context.fireChannelReadComplete() }
        if let error = heldError {
            heldError = nil
            errorCaught(context: context, error: error)
        }
        if inputClosed { endOfInput(context) }
    }

    private func write(_ head: HTTPResponse, _ body: ByteBuffer, close: Bool, _ context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        lastWrite = written
        if close {
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
        case .routing where heldError == nil:
            heldError = error
        case .answering, .routing, .closing:
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
        context.fireUserInboundEventTriggered(event)
    }

    /// The client will send nothing more. Every request it sent is still answered: a poll the
    /// router is answering, and the requests held behind it, which `routed` passes on before it
    /// comes here again; Hummingbird, given the connection by one of them, is told in turn and
    /// closes after its answers. Otherwise the connection closes once the answers written are sent.
    private func endOfInput(_ context: ChannelHandlerContext) {
        switch state {
        case .routing, .closing:
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
        if context.channel.isActive, let value = try? HTTP1Channel.Value(
            wrappingChannelSynchronously: context.channel, configuration: .init(isOutboundHalfClosureEnabled: true)),
           submit(.connection(value)) {
            return true
        }
        context.close(promise: nil)
        return false
    }
}

extension Channel {
    /// Sets `autoRead` on the channel's own event loop.
    fileprivate func setAutoRead(_ on: Bool) {
        try? syncOptions?.setOption(ChannelOptions.autoRead, value: on)
    }
}
