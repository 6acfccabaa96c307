import Synchronization

/// An async lock for an actor's multi-step operations: an actor lets another call in at
/// each `await`, so an operation that reads, awaits and writes (a configure that restarts
/// the device) takes a turn, and the next one waits until it ends. First come, first served.
/// Written here because neither the standard library nor camd's packages offer an async
/// lock that can be held across suspension points.
final class TurnLock: Sendable {
    private struct State {
        var held = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.held {
                    state.waiting.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if granted { continuation.resume() }
        }
    }

    /// Hands the turn to the next waiter, or frees it.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
