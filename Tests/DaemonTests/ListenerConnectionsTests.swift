@testable import Daemon
import CamdTestSupport
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A listener's connections, kept by their handlers' slots on the loop: each is told at shutdown,
/// and the sweep closes the idle ones.
@Suite struct ListenerConnectionsTests {
    /// `count` connections set up on `loop` and active.
    static func connections(_ count: Int, _ setUp: ConnectionSetup, on loop: EmbeddedEventLoop) throws -> [EmbeddedChannel] {
        try (0..<count).map { _ in
            let channel = EmbeddedChannel(loop: loop)
            try setUp.setUp(channel)
            try channel.connect(to: SocketAddress(unixDomainSocketPath: "/run/camd-test.sock")).wait()
            return channel
        }
    }

    @Test func aConnectionThatClosesGivesItsSlotBackAndTheOthersAreStillTold() throws {
        let loop = EmbeddedEventLoop()
        let setUp = ConnectionSetup.forTests(on: loop)
        let channels = try Self.connections(4, setUp, on: loop)
        let count = setUp.connections.value.count
        #expect(count == 4)
        // The first and the second-to-last: slots from the middle of the array, and its end moved into them.
        try channels[0].close().wait()
        try channels[2].close().wait()
        loop.run()  // NIO removes a closed channel's handlers in a task of its own
        #expect(setUp.connections.value.count == 2)
        setUp.connections.value.quiesce()
        loop.run()
        // Idle keep-alive connections close at once when told.
        #expect(!channels[1].isActive && !channels[3].isActive, "a connection left in the listener's slots was not told")
        #expect(setUp.connections.value.count == 0)
        // One that comes after the shutdown began is told at once, as it is set up.
        let late = EmbeddedChannel(loop: loop)
        try setUp.setUp(late)
        loop.run()
        // Closed: its handlers are gone from its pipeline, and from the listener's slots.
        #expect((try? late.pipeline.syncOperations.context(name: "ready-snapshots")) == nil,
                "a connection set up after the shutdown began was not told")
        #expect(setUp.connections.value.count == 0)
    }

    /// Waits a second of the real clock: on a thread of its own, not one of Swift's tasks' that
    /// the other tests need.
    @Test func theSweepClosesAConnectionIdleForTheTimeoutAndNotBefore() async throws {
        try await onOwnThread(Self.sweepClosesAConnectionIdleForTheTimeoutAndNotBefore)
    }

    static func sweepClosesAConnectionIdleForTheTimeoutAndNotBefore() throws {
        let loop = EmbeddedEventLoop()
        let setUp = ConnectionSetup.forTests(on: loop, idleTimeout: .seconds(1))
        let channels = try Self.connections(2, setUp, on: loop)
        // A request half sent is idle too.
        try channels[1].writeInbound(ByteBuffer(string: "GET /v1/status HTTP/1.1\r\nHo"))
        // The sweep runs, but neither has been idle for a second of the clock.
        loop.advanceTime(by: setUp.connections.value.sweepInterval)
        #expect(channels[0].isActive && channels[1].isActive, "a connection was closed before it was idle for the timeout")
        usleep(1_100_000)
        loop.advanceTime(by: setUp.connections.value.sweepInterval)
        #expect(!channels[0].isActive, "a connection idle for the timeout was not closed")
        #expect(!channels[1].isActive, "a half-sent request was not closed once idle for the timeout")
        loop.run()
        #expect(setUp.connections.value.count == 0)
    }
}

extension ConnectionSetup {
    /// A listener's connection setup on `loop`, without snapshots to answer, whose work is taken.
    static func forTests(on loop: EmbeddedEventLoop, idleTimeout: Duration = .seconds(60)) -> ConnectionSetup {
        ConnectionSetup(decoderLimits: HTTPListener.headerLimits, idleTimeout: idleTimeout, answers: nil,
                        logger: Logger(label: "test"), on: loop) { _ in true }
    }
}
