import Foundation
import JPEG
import VideoCore

/// Where the capture thread leaves frames and consumers pick them up.
///
/// Holds the newest raw frame (the latest-frame slot), the newest encoded
/// frame, snapshot waiters and stream subscribers. The capture thread only ever
/// replaces the raw frame (it never waits for anyone); the encoder thread
/// encodes the newest raw frame only while someone wants one, so an idle camera
/// costs no encoding. Each subscriber has a small buffer that keeps the newest
/// frames, so a slow reader loses old frames instead of stalling anyone.
final class FrameHub: @unchecked Sendable {  // all state is guarded by `condition`
    private let condition = NSCondition()
    private var latestRaw: Frame?
    private var rawGeneration: UInt64 = 0
    private var encodedGeneration: UInt64 = 0
    private var latestEncoded: EncodedFrame?
    private var waiters: [UInt64: Waiter] = [:]
    private var subscribers: [UInt64: AsyncStream<EncodedFrame>.Continuation] = [:]
    private var nextID: UInt64 = 0
    private var closed = false
    /// Bumped on every open and close, so an encoder thread from a previous run exits.
    private(set) var epoch: UInt64 = 0
    private(set) var counters = Counters()
    private var rateMeter = FrameRateMeter()

    struct Waiter {
        /// The oldest CLOCK_MONOTONIC capture time the waiter accepts.
        var notBefore: Double
        var continuation: CheckedContinuation<EncodedFrame, any Error>
    }

    /// Frames buffered per stream client before the oldest are dropped.
    static let subscriberBuffer = 2

    struct Counters: Sendable {
        var framesCaptured = 0
        var framesEncoded = 0
        var brokenFrames = 0
        /// Frames the device flagged broken or never delivered (sequence gaps).
        var deviceDrops = 0
        var encodeSeconds: [Double] = []
        var lastFrameMonotonic: Double?
        /// Frames captured per second over the last few seconds (`FrameRateMeter`), filled in by `snapshot`.
        var measuredFPS: Double = 0
        var encodeHistogram = EncodeHistogram()
    }

    // MARK: capture thread

    /// Replaces the latest raw frame (called by the capture thread; never blocks on consumers).
    func publish(_ frame: Frame) {
        condition.lock()
        rateMeter.record(frame.monotonicTime)
        counters.lastFrameMonotonic = frame.monotonicTime
        counters.framesCaptured += 1
        latestRaw = frame
        rawGeneration &+= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Counts frames the device dropped since the last call.
    func addDeviceDrops(_ count: Int) {
        guard count > 0 else { return }
        condition.lock()
        counters.deviceDrops += count
        condition.unlock()
    }

    /// The device is gone: forget every frame so none is served as if it were new,
    /// and tell waiting snapshots at once.
    func deviceLost(_ error: SessionError) {
        condition.lock()
        latestRaw = nil
        latestEncoded = nil
        counters.lastFrameMonotonic = nil
        rateMeter.reset()
        let failed = waiters.values
        waiters.removeAll()
        condition.unlock()
        for waiter in failed { waiter.continuation.resume(throwing: error) }
    }

    // MARK: encoder thread

    /// Blocks until there is a raw frame newer than the last one encoded and someone
    /// wants it; returns nil once the hub is closed.
    func nextFrameToEncode(epoch runEpoch: UInt64) -> (Frame, UInt64)? {
        condition.lock()
        defer { condition.unlock() }
        while !closed && epoch == runEpoch {
            let wanted = !subscribers.isEmpty || !waiters.isEmpty
            if wanted, rawGeneration > encodedGeneration, let frame = latestRaw { return (frame, rawGeneration) }
            condition.wait()
        }
        return nil
    }

    /// Hands an encoded frame to everyone waiting for it. A frame from an earlier run
    /// (an encoder that finished after a restart) is dropped: it was made with other settings.
    func deliver(_ encoded: EncodedFrame?, generation: UInt64, epoch runEpoch: UInt64) {
        condition.lock()
        guard runEpoch == epoch else {
            condition.unlock()
            return
        }
        encodedGeneration = max(encodedGeneration, generation)
        guard let encoded else {
            counters.brokenFrames += 1
            condition.unlock()
            return
        }
        counters.framesEncoded += 1
        counters.encodeSeconds.append(encoded.encodeSeconds)
        counters.encodeHistogram.record(encoded.encodeSeconds)
        if counters.encodeSeconds.count > 256 { counters.encodeSeconds.removeFirst(128) }
        latestEncoded = encoded
        var ready: [CheckedContinuation<EncodedFrame, any Error>] = []
        for (id, waiter) in waiters where encoded.monotonicTime >= waiter.notBefore {
            ready.append(waiter.continuation)
            waiters[id] = nil
        }
        for subscriber in subscribers.values { subscriber.yield(encoded) }
        condition.unlock()
        for continuation in ready { continuation.resume(returning: encoded) }
    }

    // MARK: consumers

    /// The newest encoded frame captured at or after `notBefore` (CLOCK_MONOTONIC),
    /// waiting for the encoder if there is none yet; fails after `timeout`.
    func frame(notBefore: Double, timeout: Duration) async throws -> EncodedFrame {
        let id: UInt64
        switch freshFrame(notBefore: notBefore) {
        case .ready(let encoded): return encoded
        case .closed: throw SessionError.shuttingDown
        case .wait(let waiterID): id = waiterID
        }

        let timer = Task {
            try await Task.sleep(for: timeout)
            self.cancelWaiter(id, with: SessionError.timeout("no frame arrived within \(timeout)"))
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                addWaiter(id, Waiter(notBefore: notBefore, continuation: continuation))
            }
        } onCancel: {
            self.cancelWaiter(id, with: CancellationError())
        }
    }

    private enum Freshness { case ready(EncodedFrame), closed, wait(UInt64) }

    private func freshFrame(notBefore: Double) -> Freshness {
        condition.lock()
        defer { condition.unlock() }
        if let encoded = latestEncoded, encoded.monotonicTime >= notBefore { return .ready(encoded) }
        if closed { return .closed }
        nextID &+= 1
        return .wait(nextID)
    }

    private func addWaiter(_ id: UInt64, _ waiter: Waiter) {
        condition.lock()
        waiters[id] = waiter
        condition.broadcast()  // the encoder now has demand
        condition.unlock()
    }

    private func cancelWaiter(_ id: UInt64, with error: any Error) {
        condition.lock()
        let waiter = waiters.removeValue(forKey: id)
        condition.unlock()
        waiter?.continuation.resume(throwing: error)
    }

    /// A stream of encoded frames for one live client, dropping the oldest when it falls behind.
    func subscribe() -> AsyncStream<EncodedFrame> {
        let (stream, continuation) = AsyncStream.makeStream(of: EncodedFrame.self,
                                                            bufferingPolicy: .bufferingNewest(Self.subscriberBuffer))
        condition.lock()
        nextID &+= 1
        let id = nextID
        if closed {
            condition.unlock()
            continuation.finish()
            return stream
        }
        subscribers[id] = continuation
        condition.broadcast()
        condition.unlock()
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.condition.lock()
            self.subscribers[id] = nil
            self.condition.unlock()
        }
        return stream
    }

    var subscriberCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return subscribers.count
    }

    var snapshot: Counters {
        condition.lock()
        defer { condition.unlock() }
        var now = counters
        now.measuredFPS = rateMeter.rate
        return now
    }

    /// Opens the hub for a new run of the session.
    @discardableResult
    func reopen() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        closed = false
        epoch &+= 1
        // Frames from before a restart were made with other settings: never serve them.
        latestRaw = nil
        latestEncoded = nil
        // Generations keep counting across runs, so nothing from an earlier run looks newer.
        encodedGeneration = rawGeneration
        // The new run may have another rate; the pause of a restart is not part of either.
        rateMeter.reset()
        condition.broadcast()
        return epoch
    }

    /// Ends every stream and wait and wakes the encoder thread so it exits.
    func close() {
        condition.lock()
        closed = true
        epoch &+= 1
        rateMeter.reset()
        counters.lastFrameMonotonic = nil
        let failed = waiters.values
        waiters.removeAll()
        let streams = subscribers.values
        subscribers.removeAll()
        latestRaw = nil
        latestEncoded = nil
        condition.broadcast()
        condition.unlock()
        for waiter in failed { waiter.continuation.resume(throwing: SessionError.shuttingDown) }
        for stream in streams { stream.finish() }
    }
}
