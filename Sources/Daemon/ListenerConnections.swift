import NIOCore

/// The connections a listener serves, all on its one event loop, for what concerns them
/// together: at shutdown each is told to finish (`ChannelShouldQuiesceEvent`), and one sweep
/// closes those that have been idle for `idleTimeout`.
///
/// Each connection's `ReadySnapshotHandler` takes a slot here when it is added and gives it
/// back when removed, on the loop. NIOExtras' `ServerQuiescingHelper`, which kept them before,
/// puts a handler in each listener's pipeline that casts every connection it accepts to
/// `Channel`, keeps it in a dictionary under a lock and chains a callback on its close future;
/// and the idle timeout was a callback scheduled for each connection (2,200 instructions to
/// set, 1,300 to cancel). All of that ran in every snapshot poll, most of it before the answer
/// (issue 16). The sweep runs every quarter of `idleTimeout` while there are connections, so a
/// connection is closed between `idleTimeout` and 1.25 × it after its last request.
final class ListenerConnections: NIOScheduledCallbackHandler {
    let eventLoop: any EventLoop
    let idleTimeout: Duration
    private var handlers: [ReadySnapshotHandler] = []
    private var sweep: NIOScheduledCallback?
    /// A connection came since the last sweep: the next one is due even if it has gone, so a
    /// client that polls with a new connection each time does not set the sweep each time.
    private var cameSinceSweep = false
    /// Shutdown began: a connection added after it is told at once.
    private var quiescing = false

    init(on eventLoop: any EventLoop, idleTimeout: Duration) {
        self.eventLoop = eventLoop
        self.idleTimeout = idleTimeout
    }

    /// How often the sweep looks: a quarter of the idle timeout.
    var sweepInterval: TimeAmount { TimeAmount(idleTimeout / 4) }

    func add(_ handler: ReadySnapshotHandler) {
        handler.slot = handlers.count
        handlers.append(handler)
        cameSinceSweep = true
        if sweep == nil { scheduleSweep() }
        if quiescing { handler.quiesce() }
    }

    func remove(_ handler: ReadySnapshotHandler) {
        guard let slot = handler.slot else { return }
        handler.slot = nil
        let last = handlers.removeLast()
        if slot < handlers.count {
            handlers[slot] = last
            last.slot = slot
        }
    }

    /// Tells every connection to finish: those idle close now, the others after their answer.
    func quiesce() {
        quiescing = true
        // A copy: a connection that closes at once leaves `handlers` meanwhile.
        for handler in handlers { handler.quiesce() }
    }

    var count: Int { handlers.count }

    func handleScheduledCallback(eventLoop: some EventLoop) {
        sweep = nil
        let idleSince = NIODeadline.now() - TimeAmount(idleTimeout)
        for handler in handlers { handler.closeIfIdle(since: idleSince) }
        if !handlers.isEmpty || cameSinceSweep { scheduleSweep() }
        cameSinceSweep = false
    }

    private func scheduleSweep() {
        sweep = try? eventLoop.assumeIsolated().scheduleCallback(in: sweepInterval, handler: self)
    }
}
