import Foundation

/// A camera's live H.264 as HLS (RFC 8216, with Apple's low-latency extension): the same
/// fragments the live clients get, grouped into parts of about half a second and into
/// segments that start at keyframes, the last few of each kept in memory for players
/// that fetch them.
///
/// It is fed by one live client of its own, joined while players ask for the playlist;
/// after `idleSeconds` without a request it leaves, and the encoder stops if nobody else
/// wants video. Media sequence numbers only grow, across restarts too.
public final class HLSWindow: @unchecked Sendable {  // mutable state is guarded by `lock`
    public struct Part: Sendable {
        public var bytes: [UInt8]
        /// Whether it starts with a keyframe: a player can begin decoding at it.
        public var independent: Bool
        /// When its first frame was captured: CLOCK_MONOTONIC and wall-clock seconds.
        var firstTime: Double
        var captureTime: Double
        /// Seconds; set when the next part starts.
        public var duration: Double?
    }

    public struct Segment: Sendable {
        public var sequence: Int
        public var parts: [Part]
        public var isComplete: Bool
        public var duration: Double { parts.reduce(0) { $0 + ($1.duration ?? 0) } }
        public var bytes: [UInt8] { parts.reduce(into: []) { $0 += $1.bytes } }
        var captureTime: Double { parts.first?.captureTime ?? 0 }
    }

    /// Target length of a part, seconds (`EXT-X-PART-INF:PART-TARGET`).
    public static let partTarget = 0.5
    /// A segment ends at the first keyframe after at least this many seconds.
    static let shortestSegment = 1.0
    /// Complete segments kept (and listed) besides the one being filled.
    static let keptSegments = 5
    /// Seconds without a request after which the window stops taking video.
    static let idleSeconds = 30.0

    private let lock = NSLock()
    private var start: LiveStreamStart?
    private var segments: [Segment] = []
    private var nextSequence = 0
    private var client: LiveVideoClient?
    private var lastRequest = ContinuousClock.now
    private var waiters: [Waiter] = []
    /// The segment length the playlist promises (`EXT-X-TARGETDURATION`): the keyframe interval.
    private var targetDuration: Int

    private struct Waiter {
        var sequence: Int
        var part: Int?
        var continuation: CheckedContinuation<Void, Never>
    }

    init(keyframeInterval: Double) {
        targetDuration = Self.targetDuration(keyframeInterval)
    }

    func setKeyframeInterval(_ seconds: Double) {
        lock.lock()
        targetDuration = Self.targetDuration(seconds)
        lock.unlock()
    }

    private static func targetDuration(_ keyframeInterval: Double) -> Int { max(1, Int(keyframeInterval.rounded(.up))) }

    /// Whether a live client feeds the window; if not, `feed(from:)` should be called.
    var isFed: Bool {
        lock.lock()
        defer { lock.unlock() }
        lastRequest = .now
        return client != nil
    }

    /// Takes fragments from `client` until it ends or players stop asking.
    func feed(from client: LiveVideoClient) {
        lock.lock()
        self.client = client
        lock.unlock()
        Task.detached { [self] in
            let watch = Task.detached { [self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    if isIdle { client.finish() }
                }
            }
            if let start = await client.waitForStart(timeout: .seconds(30)) {
                begin(start)
                for await fragments in client { add(fragments) }
            }
            watch.cancel()
            ended(client)
        }
    }

    private var isIdle: Bool {
        lock.withLock { ContinuousClock.now - lastRequest > .seconds(Self.idleSeconds) }
    }

    /// The feeding client ended: waiting requests are answered with what there is.
    private func ended(_ client: LiveVideoClient) {
        lock.lock()
        if self.client === client { self.client = nil }
        let waiting = waiters
        waiters = []
        lock.unlock()
        for waiter in waiting { waiter.continuation.resume() }
    }

    private func begin(_ start: LiveStreamStart) {
        lock.lock()
        self.start = start
        // A new stream (another format, or after a pause): its segments follow the old numbers.
        segments.removeAll()
        lock.unlock()
    }

    private func add(_ fragments: [LiveFragment]) {
        lock.lock()
        for fragment in fragments { add(fragment) }
        let ready = waiters.filter { has(sequence: $0.sequence, part: $0.part) }
        waiters.removeAll { has(sequence: $0.sequence, part: $0.part) }
        lock.unlock()
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Must be called with `lock` held.
    private func add(_ fragment: LiveFragment) {
        let newPart = Part(bytes: fragment.bytes, independent: fragment.isKeyframe, firstTime: fragment.monotonicTime,
                           captureTime: fragment.captureTime)
        guard var current = segments.last, !current.isComplete else {
            guard fragment.isKeyframe else { return }
            segments.append(Segment(sequence: nextSequence, parts: [newPart], isComplete: false))
            nextSequence += 1
            return
        }
        let last = current.parts.count - 1
        let segmentAge = fragment.monotonicTime - current.parts[0].firstTime
        let partAge = fragment.monotonicTime - current.parts[last].firstTime
        if fragment.isKeyframe && segmentAge >= Self.shortestSegment {
            current.parts[last].duration = partAge
            current.isComplete = true
            segments[segments.count - 1] = current
            segments.append(Segment(sequence: nextSequence, parts: [newPart], isComplete: false))
            nextSequence += 1
            if segments.count > Self.keptSegments + 1 { segments.removeFirst(segments.count - Self.keptSegments - 1) }
        } else if fragment.isKeyframe || partAge >= Self.partTarget - 0.001 {
            current.parts[last].duration = partAge
            current.parts.append(newPart)
            segments[segments.count - 1] = current
        } else {
            current.parts[last].bytes += fragment.bytes
            segments[segments.count - 1] = current
        }
    }

    /// Whether segment `sequence` (complete) or its part `part` (complete) is there. Must be called with `lock` held.
    private func has(sequence: Int, part: Int?) -> Bool {
        guard let segment = segments.first(where: { $0.sequence == sequence }) else {
            return segments.contains { $0.sequence > sequence }
        }
        guard let part else { return segment.isComplete }
        return segment.isComplete || segment.parts.count > part + 1
    }

    /// Waits until segment `sequence` (or its part `part`) is complete, at most `timeout`;
    /// a player's blocking playlist reload (`_HLS_msn`, `_HLS_part`).
    public func wait(sequence: Int, part: Int?, timeout: Duration) async {
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.releaseWaiters(sequence: sequence, part: part)
        }
        defer { timer.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if has(sequence: sequence, part: part) || client == nil {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append(Waiter(sequence: sequence, part: part, continuation: continuation))
                lock.unlock()
            }
        }
    }

    private func releaseWaiters(sequence: Int, part: Int?) {
        lock.lock()
        let released = waiters.filter { $0.sequence == sequence && $0.part == part }
        waiters.removeAll { $0.sequence == sequence && $0.part == part }
        lock.unlock()
        for waiter in released { waiter.continuation.resume() }
    }

    /// Waits until the first segment is complete, so the first playlist a player gets can
    /// play: players without the low-latency extension see only whole segments.
    public func waitForFirstSegment(timeout: Duration) async {
        let first = lock.withLock { segments.first?.sequence ?? nextSequence }
        await wait(sequence: first, part: nil, timeout: timeout)
    }

    public var initSegment: [UInt8]? {
        lock.lock()
        defer { lock.unlock() }
        return start?.initSegment
    }

    /// The bytes of segment `sequence`, or of its part `part`, while they are kept.
    public func media(sequence: Int, part: Int?) -> [UInt8]? {
        lock.lock()
        defer { lock.unlock() }
        guard let segment = segments.first(where: { $0.sequence == sequence }) else { return nil }
        guard let part else { return segment.isComplete ? segment.bytes : nil }
        guard part < segment.parts.count, segment.parts[part].duration != nil else { return nil }
        return segment.parts[part].bytes
    }

    /// The media playlist: the kept segments, the parts of the last three target durations,
    /// and where to ask for the next part. Nil before the first segment is complete.
    public func playlist() -> String? {
        lock.lock()
        defer { lock.unlock() }
        guard start != nil, let first = segments.first, first.isComplete else { return nil }
        let longest = segments.filter(\.isComplete).map { Int($0.duration.rounded()) }.max() ?? 0
        var text = """
        #EXTM3U
        #EXT-X-VERSION:9
        #EXT-X-TARGETDURATION:\(max(targetDuration, longest))
        #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=\(Self.format(3 * Self.partTarget))
        #EXT-X-PART-INF:PART-TARGET=\(Self.format(Self.partTarget))
        #EXT-X-MEDIA-SEQUENCE:\(first.sequence)
        #EXT-X-MAP:URI="init.mp4"

        """
        // Parts are listed for the segments of about the last three target durations.
        let partsFrom = segments.count - 3
        for (index, segment) in segments.enumerated() {
            text += "#EXT-X-PROGRAM-DATE-TIME:\(Date(timeIntervalSince1970: segment.captureTime).formatted(Self.dateStyle))\n"
            if index >= partsFrom {
                for (number, part) in segment.parts.enumerated() {
                    guard let duration = part.duration else { break }
                    text += "#EXT-X-PART:DURATION=\(Self.format(duration)),URI=\"\(segment.sequence).\(number).m4s\""
                        + (part.independent ? ",INDEPENDENT=YES" : "") + "\n"
                }
            }
            if segment.isComplete {
                text += "#EXTINF:\(Self.format(segment.duration)),\n\(segment.sequence).m4s\n"
            } else {
                let next = segment.parts.count - 1
                text += "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"\(segment.sequence).\(next).m4s\"\n"
            }
        }
        return text
    }

    /// The newest media sequence number and part (for a blocking request's bounds).
    public var newest: (sequence: Int, part: Int)? {
        lock.lock()
        defer { lock.unlock() }
        guard let last = segments.last else { return nil }
        return (last.sequence, last.parts.count - 1)
    }

    private static func format(_ seconds: Double) -> String { String(format: "%.3f", seconds) }

    private static let dateStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}
