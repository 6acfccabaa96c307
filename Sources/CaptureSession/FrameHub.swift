import Foundation
import JPEG
import VideoCore

/// Where the capture thread leaves frames and consumers pick them up.
///
/// Holds the newest raw frame (the latest-frame slot), the newest encoded
/// frame, snapshot waiters and stream subscribers. The capture thread only ever
/// replaces the raw frame (it never waits for anyone), and copies a frame's
/// pixels only while someone may want them (`wantsPixels`), so an idle camera
/// copies nothing and costs no encode: a V4L2 camera's newest frame stays in the
/// driver's buffer, lent while that leaves the driver its reserve (`.kept`), and
/// other sources leave theirs unread.
/// The encoder threads (a pool) take the newest raw frame each while someone
/// wants JPEGs, and deliver in capture order. A raw-frame waiter (a thumbnail
/// rendered from the camera's own planes) wakes no encoder at all. Each
/// subscriber has a small buffer that keeps the newest frames, so a slow reader
/// loses old frames instead of stalling anyone.
final class FrameHub: @unchecked Sendable {  // all state is guarded by `condition`
    private let condition = NSCondition()
    private var latestRaw: Frame?
    private var rawGeneration: UInt64 = 0
    /// The newest raw frame an encoder has taken: each frame is encoded by one encoder only.
    private var claimedGeneration: UInt64 = 0
    /// When that frame was captured (CLOCK_MONOTONIC). While it is being encoded, a snapshot
    /// that accepts a frame that old waits for it rather than have another encoder start.
    private var claimedTime = -Double.infinity
    /// The newest frame delivered: an encoder that finishes an older one late is not heard,
    /// so consumers get frames in capture order.
    private var deliveredGeneration: UInt64 = 0
    private var latestEncoded: EncodedFrame?
    private var latestEncodedGeneration: UInt64 = 0
    private var waiters: [UInt64: Waiter] = [:]
    private var rawWaiters: [UInt64: RawWaiter] = [:]
    /// When someone last wanted a frame (CLOCK_MONOTONIC), for `wantsPixels`.
    private var lastDemand = -Double.infinity
    /// When a snapshot, a save or a timelapse last asked for a frame as captured, for `wantsPlainJPEG`.
    private var lastPlainDemand = -Double.infinity
    /// Encode every frame, wanted or not (`encode_every_frame`).
    private var encodesEveryFrame = false
    private var subscribers: [UInt64: AsyncStream<EncodedFrame>.Continuation] = [:]
    /// The period at which snapshots are asked for, when they are (`SnapshotCadence`).
    private var cadence = SnapshotCadence()
    /// When an encoder should take the newest frame for the snapshot expected next, so its
    /// JPEG is ready when the request comes (CLOCK_MONOTONIC); nil when none is expected.
    private var encodeAheadAt: Double?
    /// The poll's due time `encodeAheadAt` was set for, so it is armed once per due time.
    private var armedDue: Double?
    /// `encodeAheadAt` was set since the last frame came: that frame wakes the encoders, so
    /// one waiting without a deadline gets it (`wakeEncoders(forFrame:)`).
    private var armedUnseen = false
    /// The generation of the newest JPEG made ahead of a request, whether one took it, and when
    /// its encode was due to start (`encodeAheadAt`).
    private var madeAhead: (generation: UInt64, taken: Bool, due: Double)?
    /// The encoder threads waiting in `nextFrameToEncode`, a bit each by index. A frame goes
    /// to the lowest-numbered one waiting, so under a light load (polling clients, one
    /// stream) one thread makes every JPEG and the others never touch their planes (a
    /// frame's worth each, 0.6 MiB at 640x480); under a heavy one every thread works.
    private var waitingEncoders: UInt64 = 0
    /// The video stage's run while it wants every frame; nil when no one wants video.
    private var videoRun: UInt64?
    private var nextID: UInt64 = 0
    /// Waiters given an id that are not yet added (between `freshFrame` and `addWaiter` the
    /// lock is let go), with what ended them meanwhile: a loss, a close, their timeout or a
    /// cancellation. Without it such a waiter would be added after its end and wait for
    /// nothing until its timeout, or for ever once the timer had fired.
    private var unadded: [UInt64: (any Error)?] = [:]
    private var closed = false
    /// Bumped on every open and close, so an encoder thread from a previous run exits.
    private(set) var epoch: UInt64 = 0
    private(set) var counters = Counters()
    private var rateMeter = FrameRateMeter()

    struct Waiter {
        /// The oldest CLOCK_MONOTONIC capture time the waiter accepts.
        var notBefore: Double
        /// Called once, outside the lock, with the frame or what ended the wait: a task's
        /// continuation (`frame(notBefore:timeout:poll:)`), or the listener's event loop's
        /// answer to a poll (`waitForFrame`).
        var resume: @Sendable (Result<EncodedFrame, any Error>) -> Void

        init(notBefore: Double, resume: @escaping @Sendable (Result<EncodedFrame, any Error>) -> Void) {
            self.notBefore = notBefore
            self.resume = resume
        }

        init(notBefore: Double, continuation: CheckedContinuation<EncodedFrame, any Error>) {
            self.init(notBefore: notBefore) { continuation.resume(with: $0) }
        }
    }

    struct RawWaiter {
        var notBefore: Double
        var continuation: CheckedContinuation<Frame, any Error>
    }

    /// Frames buffered per stream client before the oldest are dropped.
    static let subscriberBuffer = 2
    /// How long pixels are still copied after the last demand, so a burst of snapshots
    /// finds the newest frame already there instead of waiting for the next one.
    static let warmSeconds = 2.0

    struct Counters: Sendable {
        var framesCaptured = 0
        var framesEncoded = 0
        var brokenFrames = 0
        /// Frames the device flagged broken or never delivered (sequence gaps).
        var deviceDrops = 0
        /// Frames copied out of the device's buffers because consumers held every one it could lend.
        var framesCopied = 0
        var encodeSeconds: [Double] = []
        /// The encode times since the poll followed was learned: its requests' own, and for the
        /// JPEGs made ahead of them the time from when the encode was due to start until the
        /// JPEG was there.
        var pollEncodeSeconds = PollSamples()
        /// How much earlier than its due time each of the poll's requests came since it was
        /// learned (one late counts 0): a client's requests each leave when its timer fires and
        /// its machine lets it, so one due a period after a late one comes early.
        var pollEarliness = PollSamples()
        var lastFrameMonotonic: Double?
        /// Frames captured per second over the last few seconds (`FrameRateMeter`), filled in by `snapshot`.
        var measuredFPS: Double = 0
        var encodeHistogram = EncodeHistogram()
        /// Frames an encoder finished too late to send: another encoder of the pool had
        /// delivered a newer one, or the device was lost meanwhile.
        var framesOutrun = 0
        /// Snapshots answered at once from a JPEG already made (ahead of a poll, for a
        /// stream, or for another snapshot), without waiting for an encode.
        var snapshotsReady = 0
        /// Of those, the polls answered on the listener's event loop (`readyFrame`).
        var snapshotsOnLoop = 0
        /// Polls that waited on the listener's event loop for their JPEG, with no task, and
        /// were given it there once it was made (`countWaitedOnLoop`).
        var snapshotsWaitedOnLoop = 0
        /// JPEGs made ahead of a poll expected at the learned period (`SnapshotCadence`),
        /// and those of them no request took (the client stopped, or came too late).
        var encodesAhead = 0
        var encodesAheadUnused = 0
        /// The period snapshots come at while they come steadily, filled in by `snapshot`.
        var pollPeriod: Double?
        /// How long before that poll is due its JPEG is started (`aheadLead`), while one is made
        /// ahead of it, filled in by `snapshot`.
        var pollLead: Double?

        /// The mean of the recent encode times, in seconds; nil before the first encode.
        var meanEncodeSeconds: Double? {
            encodeSeconds.isEmpty ? nil : encodeSeconds.reduce(0, +) / Double(encodeSeconds.count)
        }

        /// How long an encode made ahead of a poll is given, in seconds: the second slowest of
        /// the last 20 encode times (of a JPEG made ahead, from its due start to its delivery),
        /// so one slow encode (a cold cache, a burst of other work) does not age every
        /// snapshot. Of steady encodes, the next is slower than the second slowest of the twenty
        /// before it two times in twenty-one, so about one poll in ten still comes before its JPEG
        /// and waits for the rest of the encode: in the emulated VM 13-20 of 234 polls every 0.5 s
        /// in three runs (issue 16). Given a quarter more, 9 did in the one run that tried it,
        /// against 13 for this rule, and every 2 s as many (8 of 84): not worth a frame older by
        /// that much at every poll. A frame is as old at the request as its encode was given, so
        /// it is given the spread the encodes really have, not a fixed half again of the mean.
        /// When the encodes made for the poll followed are slower (a poll at another period, or
        /// whose requests fall when other work takes the cores), theirs are given instead: the
        /// times of earlier traffic would start its JPEGs late. Nil before the first encode.
        var aheadEncodeAllowance: Double? {
            guard let recent = Self.secondSlowest(encodeSeconds.suffix(20)) else { return nil }
            return max(recent, pollEncodeSeconds.allowance ?? 0)
        }

        /// How much earlier than its due time a request of the poll followed is taken to come:
        /// all but one of its recent ones came no earlier. Nil before the tenth.
        var pollEarlinessAllowance: Double? { pollEarliness.allowance }

        /// The second largest of `times` (of twenty, the 95th percentile; of one, that one); nil for none.
        private static func secondSlowest(_ times: some Collection<Double>) -> Double? {
            guard !times.isEmpty else { return nil }
            let sorted = times.sorted()
            return sorted[max(sorted.count - 2, 0)]
        }

        /// Times of the poll followed since it was learned, the last `kept`, which set the lead
        /// from the `counted`-th on: of fewer, two slow first times (a period learned while
        /// other work took the cores) could give a lead as long as the period, so no JPEG would
        /// be made ahead until they aged out.
        struct PollSamples: Sendable {
            private(set) var times: [Double]
            static let kept = 20
            static let counted = 10

            init(_ times: [Double] = []) {
                self.times = Array(times.suffix(Self.kept))
            }

            mutating func append(_ time: Double) {
                times.append(time)
                if times.count > Self.kept { times.removeFirst() }
            }

            mutating func removeAll() { times.removeAll() }

            /// What all but the slowest of them did not exceed; nil before the `counted`-th.
            var allowance: Double? { times.count >= Self.counted ? Counters.secondSlowest(times) : nil }
        }
    }

    // MARK: capture thread

    /// Whether the capture thread should read the pixels of the frame that has just come:
    /// someone streams or waits for a frame, or did within `warmSeconds`. Otherwise the frame
    /// is kept where the driver wrote it when its buffer can be lent (a V4L2 camera's
    /// `.kept`, published as any other), or goes back to the driver unread (`publishUnread`).
    func wantsPixels(now: Double = FrameHub.monotonicNow()) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        // Whoever a published frame wakes wants its pixels (an encode ahead from `pixelLead`
        // before it is due), and so do raw-frame waiters and the warm seconds after a demand.
        return wantsFrameWoken(now: now) || !rawWaiters.isEmpty || now - lastDemand < Self.warmSeconds
            || encodeAheadAt.map { now >= $0 - pixelLead } == true
    }

    /// How long before an encode ahead of a poll the capture thread starts keeping pixels,
    /// so the newest frame is there when the encoder comes for it: two frame intervals.
    /// Must be called with `condition` held.
    private var pixelLead: Double {
        let rate = rateMeter.rate
        return rate > 0 ? max(0.1, 2 / rate) : 0.5
    }

    /// Replaces the latest raw frame (called by the capture thread; never blocks on consumers).
    func publish(_ frame: Frame) {
        condition.lock()
        count(frame.monotonicTime)
        latestRaw = frame
        rawGeneration &+= 1
        var ready: [CheckedContinuation<Frame, any Error>] = []
        for (id, waiter) in rawWaiters where frame.monotonicTime >= waiter.notBefore {
            ready.append(waiter.continuation)
            rawWaiters[id] = nil
        }
        if !ready.isEmpty { lastDemand = frame.monotonicTime }
        // The encoder threads and the video stage wait on `condition`: woken for a frame
        // none of them takes (pixels kept in the warm seconds after a snapshot, or just
        // before an encode ahead is due), each would switch in, look and sleep again, two
        // threads at every frame of a polled camera.
        wakeEncoders(forFrame: wantsFrameWoken(now: Self.monotonicNow()))
        condition.unlock()
        for continuation in ready { continuation.resume(returning: frame) }
    }

    /// Whether a frame just published is for an encoder or the video stage: someone streams
    /// or waits, every frame is encoded, the video stage runs, or an encode ahead of a poll
    /// is due. `wantsPixels` keeps pixels for these and a few more. Must be called with
    /// `condition` held.
    private func wantsFrameWoken(now: Double) -> Bool {
        encodesEveryFrame || !subscribers.isEmpty || !waiters.isEmpty || videoRun != nil
            || encodeAheadAt.map { now >= $0 } == true
    }

    /// Lets go of the newest raw frame for the capture thread, which fills its box with the
    /// next frame when every other box is held (`FrameRecycler.takeBackNewest`). Until the
    /// next `publish`, a copy's time later, there is no newest frame: whoever comes for one
    /// waits for the next, as after `publishUnread`. A frame already taken (an encoder, a
    /// render) is theirs still; only the hub's reference goes.
    func releaseNewestRaw() {
        condition.lock()
        latestRaw = nil
        condition.unlock()
    }

    /// Counts a frame nobody wanted, whose pixels were left in the driver's buffer. The
    /// previous frame is forgotten too: it is no longer the newest, so never served as such.
    func publishUnread(monotonicTime: Double) {
        condition.lock()
        count(monotonicTime)
        latestRaw = nil
        wakeEncoders(forFrame: false)
        condition.unlock()
    }

    /// Wakes the encoders at a frame: for the frame when one of them takes it (`forFrame`), and
    /// for an encode ahead armed since the last frame, so one waiting without a deadline now
    /// waits until it. The capture thread does the latter at its next frame, not the poll that
    /// armed it: that poll is answered on the event loop, where two encoder threads woke, took
    /// the lock and slept again between reading the poll and writing its answer. The next frame
    /// usually comes long before the deadline; one that comes after it wakes the encoders
    /// anyway (`wantsFrameWoken`), and the encode takes that newer frame. Must be called with
    /// `condition` held.
    private func wakeEncoders(forFrame: Bool) {
        guard forFrame || armedUnseen else { return }
        armedUnseen = false
        condition.broadcast()
    }

    private func count(_ monotonicTime: Double) {
        rateMeter.record(monotonicTime)
        counters.lastFrameMonotonic = monotonicTime
        counters.framesCaptured += 1
    }

    /// Counts frames the device dropped, and frames the source copied out of the device's
    /// buffers, since the last call.
    func addSourceCounts(dropped: Int, copied: Int) {
        guard dropped > 0 || copied > 0 else { return }
        condition.lock()
        counters.deviceDrops += max(dropped, 0)
        counters.framesCopied += max(copied, 0)
        condition.unlock()
    }

    /// The device is gone: forget every frame so none is served as if it were new,
    /// and tell waiting snapshots at once.
    func deviceLost(_ error: SessionError) {
        condition.lock()
        latestRaw = nil
        latestEncoded = nil
        // A frame still being encoded was captured before the loss: it must not reach a
        // stream after it (an emulated or slow machine may take seconds to encode).
        claimedGeneration = rawGeneration
        deliveredGeneration = rawGeneration
        counters.lastFrameMonotonic = nil
        rateMeter.reset()
        let failed = waiters.values.map(\.resume), failedRaw = rawWaiters.values.map(\.continuation)
        waiters.removeAll()
        rawWaiters.removeAll()
        endUnadded(with: error)
        condition.unlock()
        for resume in failed { resume(.failure(error)) }
        for continuation in failedRaw { continuation.resume(throwing: error) }
    }

    // MARK: encoder threads

    /// Whether an encoder drawing the stream overlay must also make the plain JPEG: someone
    /// waits for a frame as captured, or asked within `warmSeconds` (so a burst of snapshots
    /// finds one ready), or every frame is encoded anyway. Otherwise only stream clients want
    /// the frame, and its overlaid copy is the only encode (`EncodedFrame.overlaidOnly`).
    func wantsPlainJPEG(now: Double = FrameHub.monotonicNow()) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return encodesEveryFrame || !waiters.isEmpty || now - lastPlainDemand < Self.warmSeconds
    }

    /// The indices of the encoder threads waiting for a frame now (for tests).
    var encodersWaiting: Set<Int> {
        condition.lock()
        defer { condition.unlock() }
        return Set((0..<64).filter { waitingEncoders & (1 << UInt64($0)) != 0 })
    }

    /// Blocks until there is a raw frame no encoder has taken yet and someone wants
    /// JPEGs, then takes it; returns nil once the hub is closed or moved to another run.
    /// `worker` is the encoder thread's index: a frame is left to a lower one that waits.
    func nextFrameToEncode(epoch runEpoch: UInt64, worker: Int = 0) -> (Frame, UInt64)? {
        condition.lock()
        defer { condition.unlock() }
        let bit: UInt64 = worker < 64 ? 1 << UInt64(worker) : 0
        waitingEncoders |= bit
        defer { waitingEncoders &= ~bit }
        while !closed && epoch == runEpoch {
            let now = Self.monotonicNow()
            // A snapshot the encode in flight will answer asks for nothing more: one request, one encode.
            let inFlight = claimedGeneration > deliveredGeneration
            let waiting = waiters.values.contains { !inFlight || $0.notBefore > claimedTime }
            let asked = encodesEveryFrame || !subscribers.isEmpty || waiting
            let ahead = encodeAheadAt.map { now >= $0 } == true
            // Every frame wakes every encoder (broadcast), so a lower one waiting takes this one.
            let lowest = waitingEncoders & (bit &- 1) == 0
            if lowest, asked || ahead, rawGeneration > claimedGeneration, let frame = latestRaw {
                claimedGeneration = rawGeneration
                claimedTime = frame.monotonicTime
                if let due = encodeAheadAt, ahead {
                    encodeAheadAt = nil
                    if !asked {
                        counters.encodesAhead += 1
                        if madeAhead?.taken == false { counters.encodesAheadUnused += 1 }
                        madeAhead = (rawGeneration, false, due)
                    }
                }
                return (frame, rawGeneration)
            }
            // Only the lowest waiting encoder waits for an encode ahead to be due: it is the one
            // that takes it (a frame after it wakes them all, `wantsFrameWoken`).
            if lowest, let due = encodeAheadAt, due > now {
                _ = condition.wait(until: Date(timeIntervalSinceNow: due - now))
            } else {
                condition.wait()
            }
        }
        return nil
    }

    /// Whether the frame of `generation` was taken to be encoded ahead of a poll, for nobody
    /// who asked (`nextFrameToEncode`): its encoder tags a snapshot's copy of it.
    func isMadeAhead(_ generation: UInt64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return madeAhead?.generation == generation
    }

    /// Hands an encoded frame to everyone waiting for it. A frame from an earlier run
    /// (an encoder that finished after a restart) is dropped: it was made with other
    /// settings; so is one older than a frame already delivered (another encoder of the
    /// pool was quicker), so streams never go back in time.
    func deliver(_ encoded: EncodedFrame?, generation: UInt64, epoch runEpoch: UInt64) {
        condition.lock()
        guard runEpoch == epoch, generation > deliveredGeneration else {
            if runEpoch == epoch, encoded != nil { counters.framesOutrun += 1 }
            condition.unlock()
            return
        }
        deliveredGeneration = generation
        guard let encoded else {
            counters.brokenFrames += 1
            condition.broadcast()  // the snapshots that waited for this frame want another now
            condition.unlock()
            return
        }
        counters.framesEncoded += 1
        counters.encodeSeconds.append(encoded.encodeSeconds)
        counters.encodeHistogram.record(encoded.encodeSeconds)
        if counters.encodeSeconds.count > 256 { counters.encodeSeconds.removeFirst(128) }
        let now = Self.monotonicNow()
        if cadence.period != nil {
            // A JPEG made ahead counts from when its encode was due to start, not from when the
            // encode began: the encoder's wake-up after its deadline, and taking the frame, are as
            // much in the request's way as the encode.
            let ahead = madeAhead.flatMap { $0.generation == generation ? $0.due : nil }
            counters.pollEncodeSeconds.append(ahead.map { max(now - $0, encoded.encodeSeconds) } ?? encoded.encodeSeconds)
        }
        latestEncoded = encoded
        latestEncodedGeneration = generation
        var ready: [@Sendable (Result<EncodedFrame, any Error>) -> Void] = []
        for (id, waiter) in waiters where encoded.monotonicTime >= waiter.notBefore && !encoded.overlaidOnly {
            ready.append(waiter.resume)
            waiters[id] = nil
        }
        if !ready.isEmpty, madeAhead?.generation == generation { madeAhead?.taken = true }
        lastDemand = now
        for subscriber in subscribers.values { subscriber.yield(encoded) }
        // A snapshot this frame did not answer (a stream-only frame) waited for it: now it asks.
        if !waiters.isEmpty { condition.broadcast() }
        condition.unlock()
        for resume in ready { resume(.success(encoded)) }
    }

    // MARK: consumers

    /// The newest encoded frame captured at or after `notBefore` (CLOCK_MONOTONIC),
    /// waiting for the encoder if there is none yet; fails after `timeout`.
    /// `poll` marks a client's snapshot request, whose period is learned (`SnapshotCadence`).
    func frame(notBefore: Double, timeout: Duration, poll: Bool = false) async throws -> EncodedFrame {
        let id: UInt64
        switch freshFrame(notBefore: notBefore, poll: poll) {
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

    enum Freshness { case ready(EncodedFrame), closed, wait(UInt64) }

    /// The newest raw frame captured at or after `notBefore` (CLOCK_MONOTONIC), pixels as
    /// the camera sent them; waits for the capture thread if there is none yet, without
    /// asking the encoders for anything; fails after `timeout`.
    func rawFrame(notBefore: Double, timeout: Duration) async throws -> Frame {
        let id: UInt64
        switch freshRawFrame(notBefore: notBefore) {
        case .ready(let frame): return frame
        case .closed: throw SessionError.shuttingDown
        case .wait(let waiterID): id = waiterID
        }

        let timer = Task {
            try await Task.sleep(for: timeout)
            self.cancelRawWaiter(id, with: SessionError.timeout("no frame arrived within \(timeout)"))
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                addRawWaiter(id, RawWaiter(notBefore: notBefore, continuation: continuation))
            }
        } onCancel: {
            self.cancelRawWaiter(id, with: CancellationError())
        }
    }

    private enum RawFreshness { case ready(Frame), closed, wait(UInt64) }

    private func freshRawFrame(notBefore: Double) -> RawFreshness {
        condition.lock()
        defer { condition.unlock() }
        if let frame = latestRaw, frame.monotonicTime >= notBefore {
            lastDemand = Self.monotonicNow()
            return .ready(frame)
        }
        if closed { return .closed }
        nextID &+= 1
        unadded.updateValue(nil, forKey: nextID)
        return .wait(nextID)
    }

    private func addRawWaiter(_ id: UInt64, _ waiter: RawWaiter) {
        condition.lock()
        if let ended = endedBeforeAdded(id) {
            condition.unlock()
            return waiter.continuation.resume(throwing: ended)
        }
        rawWaiters[id] = waiter
        condition.unlock()
    }

    /// Ends the waiters given an id and not yet added (see `unadded`). Must be called with `condition` held.
    private func endUnadded(with error: any Error) {
        for id in unadded.keys { endBeforeAdded(id, with: error) }
    }

    /// Ends waiter `id` if it was given its id and is not yet added, and not already ended
    /// (the first end wins, as for an added waiter). Must be called with `condition` held.
    private func endBeforeAdded(_ id: UInt64, with error: any Error) {
        if let ended = unadded[id], ended == nil { unadded.updateValue(error, forKey: id) }
    }

    /// What ended waiter `id` before it was added, if anything; it is no longer unadded
    /// either way. Must be called with `condition` held.
    private func endedBeforeAdded(_ id: UInt64) -> (any Error)? {
        unadded.removeValue(forKey: id) ?? nil
    }

    private func cancelRawWaiter(_ id: UInt64, with error: any Error) {
        condition.lock()
        let waiter = rawWaiters.removeValue(forKey: id)
        if waiter == nil { endBeforeAdded(id, with: error) }
        condition.unlock()
        waiter?.continuation.resume(throwing: error)
    }

    func freshFrame(notBefore: Double, poll: Bool) -> Freshness {
        condition.lock()
        defer { condition.unlock() }
        return freshFrameLocked(notBefore: notBefore, poll: poll, now: Self.monotonicNow())
    }

    /// `freshFrame(notBefore:poll:)`. Must be called with `condition` held.
    private func freshFrameLocked(notBefore: Double, poll: Bool, now: Double) -> Freshness {
        lastPlainDemand = now
        if poll { anticipateNextPoll(after: now) }
        if let encoded = readyEncoded(notBefore: notBefore) {
            if poll { counters.snapshotsReady += 1 }
            if madeAhead?.generation == latestEncodedGeneration { madeAhead?.taken = true }
            return .ready(encoded)
        }
        if closed { return .closed }
        nextID &+= 1
        unadded.updateValue(nil, forKey: nextID)
        return .wait(nextID)
    }

    /// A poll's JPEG when one is ready now: what `freshFrame(notBefore:poll: true)` answers
    /// at once, the poll recorded as it records it. `maxAge` nil is the default age for a
    /// frame `interval` apart (nil: the measured rate's). Nil, with nothing recorded, when the
    /// poll would have to wait: the caller then asks `frame(notBefore:timeout:poll:)` as
    /// usual. For an answer on the listener's event loop (`CaptureSession.readySnapshot`),
    /// which must not wait. `now` is when the poll came (a test sets it).
    func readyFrame(maxAge: Double?, interval: Double?, now: Double = FrameHub.monotonicNow()) -> EncodedFrame? {
        condition.lock()
        defer { condition.unlock() }
        let age = snapshotAgeLocked(maxAge: maxAge, interval: interval)
        guard !closed, let encoded = readyEncoded(notBefore: now - age) else { return nil }
        lastPlainDemand = now
        anticipateNextPoll(after: now)
        counters.snapshotsReady += 1
        counters.snapshotsOnLoop += 1
        if madeAhead?.generation == latestEncodedGeneration { madeAhead?.taken = true }
        return encoded
    }

    /// A poll's JPEG for the listener's event loop, which must not wait: `readyFrame`'s when
    /// one is ready now, else the wait's id, and `resume` is called with the JPEG once one new
    /// enough is made (on the encoder's thread), or with what ended the wait (a loss, a close,
    /// `cancelWaiter`). The poll is recorded as `freshFrame` records it, and the JPEG asked of
    /// the encoders as for a task's `frame(notBefore:timeout:poll:)`, which has no time limit
    /// here: the caller cancels the wait when it has waited long enough.
    func waitForFrame(maxAge: Double?, interval: Double?, now: Double = FrameHub.monotonicNow(),
                      resume: @escaping @Sendable (Result<EncodedFrame, any Error>) -> Void) -> Freshness {
        condition.lock()
        defer { condition.unlock() }
        let age = snapshotAgeLocked(maxAge: maxAge, interval: interval)
        let fresh = freshFrameLocked(notBefore: now - age, poll: true, now: now)
        if case .ready = fresh { counters.snapshotsOnLoop += 1 }
        guard case .wait(let id) = fresh else { return fresh }
        unadded[id] = nil  // added under the same lock: nothing can have ended it
        insertWaiter(id, Waiter(notBefore: now - age, resume: resume), now: now)
        return fresh
    }

    /// How old a poll's frame may be: `maxAge`, else the default for a frame `interval` apart
    /// (nil: the measured rate's). Must be called with `condition` held.
    private func snapshotAgeLocked(maxAge: Double?, interval: Double?) -> Double {
        maxAge ?? defaultSnapshotAgeLocked(interval: frameIntervalLocked(configured: interval))
    }

    /// Counts a poll given its JPEG on the listener's event loop after a wait (`waitForFrame`).
    func countWaitedOnLoop() {
        condition.lock()
        counters.snapshotsWaitedOnLoop += 1
        condition.unlock()
    }

    /// Snapshots waiting for a JPEG, a task's or the event loop's.
    var waiterCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiters.count
    }

    /// The time between frames, seconds: the device's `configured` interval, else the measured
    /// rate's, else 0.2 s.
    func frameInterval(configured: Double?) -> Double {
        condition.lock()
        defer { condition.unlock() }
        return frameIntervalLocked(configured: configured)
    }

    /// `frameInterval(configured:)`. Must be called with `condition` held.
    private func frameIntervalLocked(configured: Double?) -> Double {
        if let configured { return configured }
        let rate = rateMeter.rate
        return rate > 0 ? 1 / rate : 0.2
    }

    /// The newest JPEG if it is of a frame captured at or after `notBefore` and shows the
    /// frame as captured. Must be called with `condition` held.
    private func readyEncoded(notBefore: Double) -> EncodedFrame? {
        guard let encoded = latestEncoded, encoded.monotonicTime >= notBefore, !encoded.overlaidOnly else { return nil }
        return encoded
    }

    /// Learns the period of snapshot requests and, when they come steadily, has the next
    /// one's JPEG made just before it is due: an encode (as long as all but the slowest recent
    /// one, `aheadEncodeAllowance`) and as much as its requests come early (`aheadLead`). While
    /// frames are encoded anyway (streams, `encode_every_frame`) there is nothing to make
    /// ahead. Must be called with `condition` held.
    private func anticipateNextPoll(after now: Double) {
        let learned = cadence.learned, wasDue = cadence.nextDue
        cadence.record(now)
        if cadence.learned != learned {
            // A poll learned: the encodes made for the one before it, and when its requests came,
            // say nothing of its own.
            counters.pollEncodeSeconds.removeAll()
            counters.pollEarliness.removeAll()
        } else if let wasDue, cadence.nextDue != wasDue {
            // The poll's own request (another client's leaves its due time as it was).
            counters.pollEarliness.append(max(0, wasDue - now))
        }
        guard let due = cadence.nextDue, makesAhead else {
            encodeAheadAt = nil
            armedDue = nil
            return
        }
        // Another client's request leaves the poll's due time, and its encode, as they were:
        // armed again, an encode already made for the poll would be made twice. A due time not
        // armed yet (a stream ended, the camera restarted) is armed by any request before it.
        guard due != armedDue, due > now else { return }
        armedDue = due
        encodeAheadAt = due - aheadLead
        armedUnseen = true  // the next frame wakes an encoder waiting without a deadline
    }

    /// Whether a JPEG is made ahead of a poll: not while frames are encoded anyway (streams,
    /// `encode_every_frame`). Must be called with `condition` held.
    private var makesAhead: Bool { !encodesEveryFrame && subscribers.isEmpty }

    /// Whether a poll is followed and its JPEGs made ahead of it, each `aheadLead` before it is
    /// due. Must be called with `condition` held.
    private var followsPoll: Bool { cadence.period != nil && makesAhead }

    /// How long before a poll is due its JPEG is started: what all but the slowest recent
    /// encode took, and as much as all but one of the poll's requests came early, at least a
    /// few milliseconds. Must be called with `condition` held.
    private var aheadLead: Double {
        (counters.aheadEncodeAllowance ?? 0.01) + max(Self.aheadMargin, counters.pollEarlinessAllowance ?? 0)
    }

    /// How much earlier than needed a JPEG ahead of a poll is made, for the request's jitter,
    /// while the poll's own is not known (`pollEarlinessAllowance`), and at least.
    static let aheadMargin = 0.005

    /// How old a snapshot's frame may be when the request does not say: one frame interval,
    /// so a snapshot shows what the camera sees now. With `encode_every_frame` the JPEG
    /// of the newest frame is only ready an encode after its capture; allowing for that
    /// (twice the mean encode, for jitter) lets the snapshot be answered from it at once.
    ///
    /// While a poll's JPEGs are made ahead of it (`anticipateNextPoll`), the JPEG is started
    /// `aheadLead` before the poll is due: its frame is then up to an interval and that lead
    /// old, and the request may come a little late (20 ms are allowed for that). The lead is
    /// what all but the slowest recent encode took, which a slow one can put above twice the
    /// mean: the larger of the two is allowed, so the JPEG made ahead is never too old for it.
    func defaultSnapshotAge(interval: Double) -> Double {
        condition.lock()
        defer { condition.unlock() }
        return defaultSnapshotAgeLocked(interval: interval)
    }

    /// `defaultSnapshotAge(interval:)`. Must be called with `condition` held.
    private func defaultSnapshotAgeLocked(interval: Double) -> Double {
        let steady = followsPoll
        return Self.defaultSnapshotAge(interval: interval, encodeEveryFrame: encodesEveryFrame,
                                       meanEncode: steady || encodesEveryFrame ? counters.meanEncodeSeconds ?? 0 : 0,
                                       lead: steady ? aheadLead : nil)
    }

    /// The rule of `defaultSnapshotAge(interval:)`; `lead` is nil unless a poll's JPEGs are made ahead.
    static func defaultSnapshotAge(interval: Double, encodeEveryFrame: Bool, meanEncode: Double, lead: Double?) -> Double {
        if encodeEveryFrame { return interval + 2 * meanEncode }
        guard let lead else { return interval }
        return interval + max(2 * meanEncode, lead) + 0.02
    }

    func addWaiter(_ id: UInt64, _ waiter: Waiter) {
        condition.lock()
        if let ended = endedBeforeAdded(id) {
            condition.unlock()
            return waiter.resume(.failure(ended))
        }
        insertWaiter(id, waiter, now: Self.monotonicNow())
        condition.unlock()
    }

    /// Adds a waiter and wakes the encoders, which now have demand. Must be called with `condition` held.
    private func insertWaiter(_ id: UInt64, _ waiter: Waiter, now: Double) {
        waiters[id] = waiter
        lastDemand = now
        condition.broadcast()
    }

    func cancelWaiter(_ id: UInt64, with error: any Error) {
        condition.lock()
        let waiter = waiters.removeValue(forKey: id)
        if waiter == nil { endBeforeAdded(id, with: error) }
        condition.unlock()
        waiter?.resume(.failure(error))
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
            self.lastDemand = Self.monotonicNow()
            self.condition.unlock()
        }
        return stream
    }

    // MARK: the video stage

    /// Starts a run of the video stage: from now on every frame's pixels are kept for it.
    func startVideo(run: UInt64) {
        condition.lock()
        videoRun = run
        condition.unlock()
    }

    /// Ends the video stage's run `run`: its thread's wait returns nil.
    func stopVideo(run: UInt64) {
        condition.lock()
        if videoRun == run { videoRun = nil }
        condition.broadcast()
        condition.unlock()
    }

    /// The newest raw frame after `generation`, for the video stage's run `run`: waits for
    /// the capture thread (across stops and restarts of the camera) and returns nil once
    /// the run is over. Frames that came while the stage was busy are skipped; their
    /// timestamps say so to the encoder.
    func nextVideoFrame(after generation: UInt64, run: UInt64) -> (Frame, UInt64)? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            guard videoRun == run else { return nil }
            if rawGeneration > generation, let frame = latestRaw { return (frame, rawGeneration) }
            condition.wait()
        }
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
        now.pollPeriod = cadence.period
        now.pollLead = followsPoll ? aheadLead : nil
        return now
    }

    /// Opens the hub for a new run of the session; with `encodeEveryFrame`, every frame
    /// is encoded whether anyone wants it or not.
    @discardableResult
    func reopen(encodeEveryFrame: Bool = false) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        closed = false
        encodesEveryFrame = encodeEveryFrame
        epoch &+= 1
        // Frames from before a restart were made with other settings: never serve them.
        latestRaw = nil
        latestEncoded = nil
        encodeAheadAt = nil
        armedDue = nil
        madeAhead = nil
        // Generations keep counting across runs, so nothing from an earlier run looks newer.
        claimedGeneration = rawGeneration
        deliveredGeneration = rawGeneration
        // The new run may have another rate; the pause of a restart is not part of either.
        rateMeter.reset()
        condition.broadcast()
        return epoch
    }

    /// Starts a new run of encoders on the running capture (new quality, threads, image
    /// defaults): the current ones exit after the frame they hold, whose JPEG is no longer
    /// delivered, and JPEGs made with the old settings are never served. Raw frames,
    /// streams and waiting snapshots carry on; the next frame is encoded by the new run.
    func renewEncoders(encodeEveryFrame: Bool) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        encodesEveryFrame = encodeEveryFrame
        epoch &+= 1
        latestEncoded = nil
        claimedGeneration = rawGeneration
        deliveredGeneration = rawGeneration
        condition.broadcast()
        return epoch
    }

    /// Ends every stream and wait and wakes the encoder thread so it exits.
    func close() {
        condition.lock()
        closed = true
        epoch &+= 1
        encodeAheadAt = nil
        armedDue = nil
        rateMeter.reset()
        counters.lastFrameMonotonic = nil
        let failed = waiters.values.map(\.resume), failedRaw = rawWaiters.values.map(\.continuation)
        waiters.removeAll()
        rawWaiters.removeAll()
        endUnadded(with: SessionError.shuttingDown)
        let streams = subscribers.values
        subscribers.removeAll()
        latestRaw = nil
        latestEncoded = nil
        condition.broadcast()
        condition.unlock()
        for resume in failed { resume(.failure(SessionError.shuttingDown)) }
        for continuation in failedRaw { continuation.resume(throwing: SessionError.shuttingDown) }
        for stream in streams { stream.finish() }
    }

    /// CLOCK_MONOTONIC in seconds, the clock of the driver's frame timestamps.
    static func monotonicNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
