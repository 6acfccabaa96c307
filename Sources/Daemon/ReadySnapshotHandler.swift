import ControlAPI
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// A new connection's pipeline, as Hummingbird's `HTTP1Channel` sets it up (the same codec,
/// limits, idle timeout and keep-alive handling), with `ReadySnapshotHandler` last instead of
/// the `NIOAsyncChannel` and the task per connection: those are added when the first request
/// that needs the router comes, and a client that only polls snapshots never needs them.
struct ConnectionSetup: Sendable {
    let decoderLimits: HTTP1Channel.Configuration.DecoderConfiguration
    let idleTimeout: Duration
    let answers: ReadySnapshots?
    let logger: Logger
    /// Takes a connection handed to Hummingbird (the listener gives it a task); false when
    /// the listener has stopped taking connections.
    let handOver: @Sendable (HTTP1Channel.Value) -> Bool

    func setUp(_ channel: any Channel) throws {
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
        try pipeline.addHandler(ReadySnapshotHandler(answers: answers, handOver: handOver))
    }
}

/// Answers snapshot polls that `ReadySnapshots` can answer at once, on the event loop, until
/// a request needs the router: then wraps the connection in a `NIOAsyncChannel` (its handler
/// goes after this one), gives it to Hummingbird (`handOver`) and passes that request and
/// everything after it on, so requests are still answered in order.
/// `HTTPConnectionStateHandler` is before it, so the idle timeout, the end of a keep-alive
/// connection at shutdown and its request count see this handler's requests and answers too.
final class ReadySnapshotHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private enum State {
        /// Between requests, or reading one it will pass on.
        case idle
        /// Reading a request it answers: the answer is written at the request's end.
        case answering(HTTPResponse, ByteBuffer, close: Bool)
        /// The connection is Hummingbird's.
        case handedOver
    }

    private let answers: ReadySnapshots?
    private let handOver: @Sendable (HTTP1Channel.Value) -> Bool
    private var state = State.idle
    private var overTCP = false
    /// The last answer written, so a close waits for it to be sent.
    private var lastWrite: EventLoopFuture<Void>?

    init(answers: ReadySnapshots?, handOver: @escaping @Sendable (HTTP1Channel.Value) -> Bool) {
        self.answers = answers
        self.handOver = handOver
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if case .unixDomainSocket = context.channel.localAddress { overTCP = false } else { overTCP = true }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (state, unwrapInboundIn(data)) {
        case (.handedOver, _):
            context.fireChannelRead(data)
        case (.idle, .head(let request)):
            if let (head, body) = answers?.answer(request, overTCP: overTCP) {
                state = .answering(head, body, close: request.headerFields[.connection]?.lowercased() == "close")
            } else if handToHummingbird(context) {
                context.fireChannelRead(data)
            }
        case (.answering(let head, let body, let close), .end):
            state = .idle
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(body)), promise: nil)
            let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            lastWrite = written
            if close { closeAfter(written, context) }
        case (.answering, .body), (.answering, .head), (.idle, .body), (.idle, .end):
            // A body with a snapshot's GET is read and dropped, as the router drops it; the
            // decoder never gives a head before the previous request's end, nor parts without a head.
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A request the decoder cannot read: Hummingbird answers it (400) and closes.
        if case .handedOver = state {
            context.fireErrorCaught(error)
        } else if handToHummingbird(context) {
            context.fireErrorCaught(error)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handedOver = state {
            return context.fireUserInboundEventTriggered(event)
        }
        // The client will send nothing more: close once the answers written are sent.
        if let event = event as? ChannelEvent, event == .inputClosed {
            return closeAfter(lastWrite ?? context.eventLoop.makeSucceededVoidFuture(), context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Wraps the connection for Hummingbird and gives it over; false (the connection closed)
    /// when that fails or the listener no longer takes connections.
    private func handToHummingbird(_ context: ChannelHandlerContext) -> Bool {
        state = .handedOver
        do {
            let value = try HTTP1Channel.Value(wrappingChannelSynchronously: context.channel,
                                               configuration: .init(isOutboundHalfClosureEnabled: true))
            if handOver(value) { return true }
        } catch {}
        context.close(promise: nil)
        return false
    }

    private func closeAfter(_ written: EventLoopFuture<Void>, _ context: ChannelHandlerContext) {
        let channel = context.channel
        written.whenComplete { _ in channel.close(promise: nil) }
    }
}
