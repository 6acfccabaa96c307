import NIOCore

/// Sets up each connection a listener accepts (`ConnectionSetup`) as NIO's `ServerBootstrap`
/// does, without the futures its accept handler chains for each one.
///
/// The bootstrap's handler, the last in a listener's pipeline, applies the child channel
/// options, runs the child channel initializer and passes the connection on, each step a
/// future, though every connection of camd's listeners is accepted and set up on one event
/// loop; the server channel registers the connection once it reaches the pipeline's end. In
/// callgrind that machinery was about 12,000 instructions of a snapshot poll's 128,000, all
/// of them between the client's connect and its answer (issue 16). This handler, just before
/// the bootstrap's, sets the connection up at once and passes it on from the bootstrap's
/// handler's place, so the server channel registers it as before. NIO offers no public way
/// to set up an accepted connection without that handler (it is internal to NIOPosix, and
/// cannot be removed), hence this one.
///
/// A connection on another event loop, a listener whose bootstrap handler is not where it
/// is looked for, and one not active any more take the bootstrap's own way: its child channel
/// initializer is the same `ConnectionSetup`.
final class ConnectionAcceptor: ChannelInboundHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    /// The name `ServerBootstrap` gives its accept handler.
    static let bootstrapHandlerName = "AcceptHandler"

    private let connections: ConnectionSetup
    /// The bootstrap's accept handler's place in the listener's pipeline, looked up at the first
    /// connection (the bootstrap adds its handler after the server channel's initializer).
    private var bootstrapHandler: ChannelHandlerContext?
    private var lookedUp = false

    init(_ connections: ConnectionSetup) {
        self.connections = connections
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        bootstrapHandler = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let accepted = unwrapInboundIn(data)
        guard accepted.eventLoop === context.eventLoop, context.channel.isActive, let next = bootstrapHandler(context) else {
            return context.fireChannelRead(data)
        }
        do {
            try connections.setUp(accepted)
        } catch {
            // As the bootstrap's handler ends a connection it could not set up.
            accepted.close(promise: nil)
            return context.fireErrorCaught(error)
        }
        // Past the bootstrap's handler: at the pipeline's end the server channel registers it.
        next.fireChannelRead(data)
    }

    private func bootstrapHandler(_ context: ChannelHandlerContext) -> ChannelHandlerContext? {
        if !lookedUp {
            lookedUp = true
            bootstrapHandler = try? context.pipeline.syncOperations.context(name: Self.bootstrapHandlerName)
        }
        return bootstrapHandler
    }
}
