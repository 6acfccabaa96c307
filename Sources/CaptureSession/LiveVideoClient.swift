import Foundation

/// One frame of a camera's live H.264, cut into an MP4 fragment once for every client.
public struct LiveFragment: Sendable {
    public var bytes: [UInt8]
    public var isKeyframe: Bool
    /// When the frame was captured: wall-clock seconds since 1970, and CLOCK_MONOTONIC seconds.
    public var captureTime: Double
    public var monotonicTime: Double
}

/// How a live client's stream starts: what goes before its first fragment.
public struct LiveStreamStart: Sendable {
    public var initSegment: [UInt8]
    /// `video/mp4; codecs="avc1.…"`: the response's `Content-Type`, which a Media Source needs.
    public var contentType: String
    public var width: Int
    public var height: Int
}

/// One HTTP client of a camera's live video: a bounded queue of fragments between the
/// video stage's thread, which must never wait for a client, and the connection.
///
/// A client that falls behind (its queue holds more than `maxQueuedSeconds` of video or
/// `maxQueuedBytes`) loses what it has queued and waits for the next keyframe, from which
/// it decodes again: it costs the others and the capture nothing, and its picture is at
/// most about a second behind the camera's.
public final class LiveVideoClient: AsyncSequence, @unchecked Sendable {  // mutable state is guarded by `lock`
    public typealias Element = [LiveFragment]

    public let id: UInt64
    /// When the client connected, seconds since 1970.
    public let since: Double
    private let lock = NSLock()
    private var start: LiveStreamStart?
    private var startWaiter: CheckedContinuation<LiveStreamStart?, Never>?
    private var queue: [LiveFragment] = []
    private var queuedBytes = 0
    private var waiter: CheckedContinuation<[LiveFragment]?, Never>?
    private var waitingForKeyframe = true
    private var finished = false
    private var failureReason: String?
    private var counters = Counters()
    private let onFinish: @Sendable (LiveVideoClient) -> Void

    static let maxQueuedSeconds = 1.0
    static let maxQueuedBytes = 8 << 20

    /// What status shows of a client.
    public struct Counters: Sendable, Hashable {
        public var framesSent = 0
        public var bytesSent = 0
        /// Times the client fell behind and lost its queue.
        public var drops = 0
        public var framesDropped = 0
    }

    init(id: UInt64, onFinish: @escaping @Sendable (LiveVideoClient) -> Void) {
        self.id = id
        since = Date().timeIntervalSince1970
        self.onFinish = onFinish
    }

    /// Whether the client's stream has begun (its init segment is chosen).
    var hasStarted: Bool {
        lock.lock()
        defer { lock.unlock() }
        return start != nil
    }

    public var snapshot: Counters {
        lock.lock()
        defer { lock.unlock() }
        return counters
    }

    /// Waits for the stream's first keyframe: the init segment and type go before it.
    /// Nil when the client ends first (the camera stopped, or `timeout` passed).
    public func waitForStart(timeout: Duration) async -> LiveStreamStart? {
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { self?.finish() }
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<LiveStreamStart?, Never>) in
                lock.lock()
                if let start {
                    lock.unlock()
                    continuation.resume(returning: start)
                } else if finished {
                    lock.unlock()
                    continuation.resume(returning: nil)
                } else {
                    startWaiter = continuation
                    lock.unlock()
                }
            }
        } onCancel: { finish() }
    }

    /// The fragments queued since the last call, waiting for one if none is; nil once the
    /// stream has ended. Cancelling the waiting task ends the client.
    public func next() async -> [LiveFragment]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[LiveFragment]?, Never>) in
                lock.lock()
                if !queue.isEmpty {
                    let batch = takeQueue()
                    lock.unlock()
                    continuation.resume(returning: batch)
                } else if finished {
                    lock.unlock()
                    continuation.resume(returning: nil)
                } else {
                    waiter = continuation
                    lock.unlock()
                }
            }
        } onCancel: { finish() }
    }

    /// Must be called with `lock` held.
    private func takeQueue() -> [LiveFragment] {
        let batch = queue
        queue.removeAll(keepingCapacity: true)
        counters.framesSent += batch.count
        counters.bytesSent += queuedBytes
        queuedBytes = 0
        return batch
    }

    /// A keyframe of a stream that starts `start`: the client's stream begins here if it
    /// has not yet. Called on the video stage's thread.
    func offer(_ fragment: LiveFragment, start: LiveStreamStart) {
        lock.lock()
        guard !finished else { return lock.unlock() }
        if self.start == nil {
            guard fragment.isKeyframe else { return lock.unlock() }
            self.start = start
        }
        if waitingForKeyframe {
            guard fragment.isKeyframe else {
                counters.framesDropped += 1
                return lock.unlock()
            }
            waitingForKeyframe = false
        }
        if let oldest = queue.first, fragment.monotonicTime - oldest.monotonicTime > Self.maxQueuedSeconds
            || queuedBytes + fragment.bytes.count > Self.maxQueuedBytes {
            counters.drops += 1
            counters.framesDropped += queue.count
            queue.removeAll(keepingCapacity: false)
            queuedBytes = 0
            if !fragment.isKeyframe {
                counters.framesDropped += 1
                waitingForKeyframe = true
                return lock.unlock()
            }
        }
        queue.append(fragment)
        queuedBytes += fragment.bytes.count
        let startWaiter = self.startWaiter, waiter = self.waiter
        self.startWaiter = nil
        self.waiter = nil
        let batch = waiter == nil ? nil : takeQueue()
        let start = self.start
        lock.unlock()
        startWaiter?.resume(returning: start)
        waiter?.resume(returning: batch)
    }

    /// Why the stream ended early (the camera's H.264 encoder could not open); nil otherwise.
    public var failure: String? {
        lock.lock()
        defer { lock.unlock() }
        return failureReason
    }

    /// Ends the stream: what is queued is still taken, then `next()` answers nil.
    public func finish() {
        finish(failure: nil)
    }

    /// Ends the stream, with `failure` as the reason when the stage failed.
    func finish(failure: String?) {
        lock.lock()
        guard !finished else { return lock.unlock() }
        finished = true
        failureReason = failure
        let startWaiter = self.startWaiter, waiter = self.waiter
        self.startWaiter = nil
        self.waiter = nil
        // A waiting reader gets what is queued; otherwise the next `next()` takes it.
        let batch = waiter == nil || queue.isEmpty ? nil : takeQueue()
        lock.unlock()
        startWaiter?.resume(returning: nil)
        waiter?.resume(returning: batch)
        onFinish(self)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let client: LiveVideoClient
        public mutating func next() async -> [LiveFragment]? { await client.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(client: self) }
}
