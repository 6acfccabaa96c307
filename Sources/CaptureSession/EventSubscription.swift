import Synchronization

/// One reader of the event log: a bounded queue of the events it asked for, read with `next()`.
///
/// The log appends without waiting; the reader takes them in order. A reader with more
/// than the log's `subscriberCapacity` events unread is dropped: it reads what is queued,
/// then a `dropped` event, then the end.
public final class EventSubscription: Sendable {
    /// What `next()` gives.
    public enum Item: Sendable, Hashable {
        case event(DaemonEvent)
        /// `nudge()` was called while the reader waited with nothing to read.
        case nudged
    }

    typealias WakeUp = @Sendable () -> Void

    private let log: EventLog
    private let id: UInt64
    private let filter: EventFilter
    /// Replayed events count beyond the bound: at most the backlog, they always fit.
    private let replayed: Int
    private let queue: Mutex<Queue>

    struct Queue: ~Copyable {
        var events: [DaemonEvent]
        var head = 0
        var ended = false
        var lastQueued: UInt64
        var waiter: CheckedContinuation<Item?, Never>?

        var count: Int { events.count - head }

        mutating func pop() -> DaemonEvent? {
            guard head < events.count else { return nil }
            let event = events[head]
            head += 1
            if head > 64 && head * 2 > events.count {
                events.removeFirst(head)
                head = 0
            }
            return event
        }
    }

    init(log: EventLog, id: UInt64, filter: EventFilter, replay: [DaemonEvent], lastID: UInt64) {
        self.log = log
        self.id = id
        self.filter = filter
        replayed = replay.count
        queue = Mutex(Queue(events: replay, lastQueued: lastID))
    }

    /// Called by the log under its lock: queues `event` if it matches, or drops this reader.
    func offer(_ event: DaemonEvent, capacity: Int) -> (wakeUp: WakeUp?, dropped: Bool) {
        guard filter.matches(event) else { return (nil, false) }
        let limit = capacity + replayed
        return queue.withLock { queue -> (WakeUp?, Bool) in
            guard !queue.ended else { return (nil, true) }
            if let waiter = queue.waiter {
                queue.waiter = nil
                queue.lastQueued = event.id
                return ({ waiter.resume(returning: .event(event)) }, false)
            }
            guard queue.count < limit else {
                let last = queue.lastQueued
                queue.events.append(DaemonEvent(id: last, time: event.time, payload: .dropped(.init(
                    message: "this client read too slowly: \(queue.count) events waited unread (at most \(capacity)); reconnect with Last-Event-ID \(last) to resume from the backlog"))))
                queue.ended = true
                return (nil, true)
            }
            queue.events.append(event)
            queue.lastQueued = event.id
            return (nil, false)
        }
    }

    /// The next event, waiting for one; nil once the subscription has ended and its queue is read.
    public func next() async -> Item? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Item?, Never>) in
                let ready = queue.withLock { queue -> Item?? in
                    if let event = queue.pop() { return .some(.event(event)) }
                    if queue.ended { return .some(nil) }
                    queue.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Wakes a reader waiting in `next()` with `.nudged` (a stream's keep-alive); does nothing
    /// when the reader is busy or has events to read.
    public func nudge() {
        let waiter = queue.withLock { queue -> CheckedContinuation<Item?, Never>? in
            defer { queue.waiter = nil }
            return queue.waiter
        }
        waiter?.resume(returning: .nudged)
    }

    /// Stops the subscription: the log forgets it, and `next()` returns what is queued, then nil.
    public func cancel() {
        log.unsubscribe(id)
        end()
    }

    func end() {
        let waiter = queue.withLock { queue -> CheckedContinuation<Item?, Never>? in
            queue.ended = true
            defer { queue.waiter = nil }
            return queue.waiter
        }
        waiter?.resume(returning: nil)
    }
}
