@testable import Daemon
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import Testing

/// `ConnectionAcceptor` sets an accepted connection up where NIO's `ServerBootstrap` would, and
/// passes it on from the bootstrap's handler's place; otherwise it leaves it to that handler.
/// A listener's pipeline here: the acceptor, a stand-in named as the bootstrap names its
/// handler, and the pipeline's end, where the server channel registers what reaches it.
@Suite struct ConnectionAcceptorTests {
    /// Records the connections that reach it, and passes them on.
    final class Seen: ChannelInboundHandler {
        typealias InboundIn = any Channel
        var channels: [ObjectIdentifier] = []

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            channels.append(ObjectIdentifier(unwrapInboundIn(data)))
            context.fireChannelRead(data)
        }
    }

    /// An active listener on `loop`: the acceptor, then `standIn` under `name`.
    static func listener(_ loop: EmbeddedEventLoop, standIn: Seen, name: String, active: Bool = true) throws -> EmbeddedChannel {
        let server = EmbeddedChannel(loop: loop)
        try server.pipeline.syncOperations.addHandler(ConnectionAcceptor(.forTests(on: loop)))
        try server.pipeline.syncOperations.addHandler(standIn, name: name)
        if active { try server.connect(to: SocketAddress(unixDomainSocketPath: "/run/camd-test.sock")).wait() }
        return server
    }

    /// What an accepted connection's pipeline has of `ConnectionSetup`'s handlers.
    static func setUpHandlers(_ channel: EmbeddedChannel) -> [String] {
        ["poll-heads", "ready-snapshots"].filter { (try? channel.pipeline.syncOperations.context(name: $0)) != nil }
    }

    @Test func aConnectionIsSetUpAndPassedOnPastTheBootstrapsHandler() throws {
        let loop = EmbeddedEventLoop()
        let bootstrap = Seen()
        let server = try Self.listener(loop, standIn: bootstrap, name: ConnectionAcceptor.bootstrapHandlerName)
        let accepted = EmbeddedChannel(loop: loop)
        try server.writeInbound(accepted as any Channel)
        #expect(Self.setUpHandlers(accepted) == ["poll-heads", "ready-snapshots"])
        #expect(bootstrap.channels.isEmpty, "the bootstrap's handler saw the connection, and would set it up again")
        let reached = try #require(try server.readInbound(as: (any Channel).self))
        #expect(reached === accepted)
        // The next is set up too: the bootstrap's handler was looked up once and kept.
        let second = EmbeddedChannel(loop: loop)
        try server.writeInbound(second as any Channel)
        #expect(Self.setUpHandlers(second) == ["poll-heads", "ready-snapshots"] && bootstrap.channels.isEmpty)
        _ = try server.finish()
    }

    /// Without a handler of the bootstrap's name the connection goes the bootstrap's way, as
    /// it does when it is on another event loop: untouched, to the handler after the acceptor.
    @Test func otherwiseTheBootstrapsHandlerHasTheConnection() throws {
        let loop = EmbeddedEventLoop()
        let unnamed = Seen()
        let server = try Self.listener(loop, standIn: unnamed, name: "something-else")
        let accepted = EmbeddedChannel(loop: loop)
        try server.writeInbound(accepted as any Channel)
        #expect(Self.setUpHandlers(accepted).isEmpty)
        #expect(unnamed.channels == [ObjectIdentifier(accepted as any Channel)])

        let bootstrap = Seen()
        let named = try Self.listener(loop, standIn: bootstrap, name: ConnectionAcceptor.bootstrapHandlerName)
        let elsewhere = EmbeddedChannel(loop: EmbeddedEventLoop())
        try named.writeInbound(elsewhere as any Channel)
        #expect(Self.setUpHandlers(elsewhere).isEmpty)
        #expect(bootstrap.channels == [ObjectIdentifier(elsewhere as any Channel)])
        _ = try server.finish()
        _ = try named.finish()
    }

    /// A listener no longer active sets nothing up: the bootstrap's handler has the connection,
    /// and closes it.
    @Test func anInactiveListenerLeavesTheConnectionToTheBootstrap() throws {
        let loop = EmbeddedEventLoop()
        let bootstrap = Seen()
        let server = try Self.listener(loop, standIn: bootstrap, name: ConnectionAcceptor.bootstrapHandlerName, active: false)
        let accepted = EmbeddedChannel(loop: loop)
        try server.writeInbound(accepted as any Channel)
        #expect(Self.setUpHandlers(accepted).isEmpty)
        #expect(bootstrap.channels == [ObjectIdentifier(accepted as any Channel)])
    }
}
