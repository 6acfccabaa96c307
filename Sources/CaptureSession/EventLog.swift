import Synchronization

/// camd's events, in order: camera states, photos, recordings, the disk, reloads.
///
/// Publishing takes a lock for a few appends and never waits: it is called on capture
/// paths (the session's actor, the photo output's) and must not slow them. The log keeps
/// the last `backlogCapacity` events, so a client that reconnects resumes where it was.
/// Each subscriber has its own queue of at most `subscriberCapacity` unread events; one
/// that falls further behind is dropped, its queue ending with a `dropped` event, and the
/// others and the publishers go on as if it had never been there.
public final class EventLog: Sendable {
    public let backlogCapacity: Int
    public let subscriberCapacity: Int
    let state: Mutex<State>

    struct State: ~Copyable {
        var lastID: UInt64 = 0
        var backlog: [DaemonEvent] = []
        var subscribers: [UInt64: EventSubscription] = [:]
        var nextSubscriber: UInt64 = 0
        var droppedSubscribers = 0
    }

    public init(backlogCapacity: Int = 1000, subscriberCapacity: Int = 1000) {
        self.backlogCapacity = max(1, backlogCapacity)
        self.subscriberCapacity = max(1, subscriberCapacity)
        state = Mutex(State())
    }

    /// The id of the newest event; 0 before the first.
    public var lastID: UInt64 { state.withLock { $0.lastID } }

    /// Subscribers dropped for falling behind since start.
    public var droppedSubscribers: Int { state.withLock { $0.droppedSubscribers } }

    /// Adds an event with the next id and the current time, and hands it to every subscriber.
    @discardableResult
    public func publish(_ payload: EventPayload, time: Double = PhotoOutput.currentTime()) -> DaemonEvent {
        let capacity = backlogCapacity, perSubscriber = subscriberCapacity
        let (event, wakeUps) = state.withLock { state -> (DaemonEvent, [EventSubscription.WakeUp]) in
            state.lastID += 1
            let event = DaemonEvent(id: state.lastID, time: time, payload: payload)
            state.backlog.append(event)
            if state.backlog.count > capacity { state.backlog.removeFirst(state.backlog.count - capacity) }
            var wakeUps: [EventSubscription.WakeUp] = []
            for (id, subscriber) in state.subscribers {
                let outcome = subscriber.offer(event, capacity: perSubscriber)
                if let wakeUp = outcome.wakeUp { wakeUps.append(wakeUp) }
                if outcome.dropped {
                    state.subscribers[id] = nil
                    state.droppedSubscribers += 1
                }
            }
            return (event, wakeUps)
        }
        // Outside the lock: a woken reader may run at once and must not find it held.
        for wakeUp in wakeUps { wakeUp() }
        return event
    }

    /// A new subscriber. With `after`, it first gets the backlog's events after that id (a
    /// `gap` first when the backlog no longer reaches back to it), then the live ones.
    public func subscribe(after: UInt64? = nil, filter: EventFilter = EventFilter()) -> EventSubscription {
        let capacity = backlogCapacity
        return state.withLock { state -> EventSubscription in
            state.nextSubscriber += 1
            var replay: [DaemonEvent] = []
            if let after {
                let oldest = state.backlog.first?.id ?? state.lastID + 1
                let wanted = min(after, state.lastID) + 1
                if wanted < oldest {
                    let lost = oldest - wanted
                    replay.append(DaemonEvent(id: min(after, state.lastID), time: PhotoOutput.currentTime(), payload: .gap(.init(
                        lost: lost,
                        message: "\(lost) events after \(after) are no longer kept (the backlog holds the last \(capacity)); the stream goes on from event \(oldest)"))))
                }
                replay += state.backlog.lazy.filter { $0.id > after && filter.matches($0) }
            }
            let subscription = EventSubscription(log: self, id: state.nextSubscriber, filter: filter, replay: replay, lastID: state.lastID)
            state.subscribers[state.nextSubscriber] = subscription
            return subscription
        }
    }

    /// Ends every subscription (their readers get what is queued, then the end), so streams
    /// to clients finish when camd shuts down. Events published later are still kept.
    public func endSubscriptions() {
        let ended = state.withLock { state -> [EventSubscription] in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscription in ended { subscription.end() }
    }

    /// Ends a subscription: its reader gets what is queued, then the end.
    func unsubscribe(_ id: UInt64) {
        let subscription = state.withLock { $0.subscribers.removeValue(forKey: id) }
        subscription?.end()
    }
}
