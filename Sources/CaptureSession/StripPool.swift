import Foundation
import JPEG

/// The threads that encode strips of a frame beside the encoder thread that has it
/// (`JPEGStrips`): one per core beyond the first, at most three, at the encoders'
/// niceness, started with the first frame cut into strips.
///
/// One pool serves every camera's encoders. An encoder takes its own strips too, as
/// long as any is not yet started, so when the helpers are busy with another frame it
/// encodes them itself, one after another: a busy pool delays no frame past a whole encode.
public final class StripPool: StripRunner, @unchecked Sendable {  // all state is guarded by `condition`
    public static let shared = StripPool(threads: min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 4))

    public let threads: Int
    private let condition = NSCondition()
    /// Frames with strips not yet started, oldest first.
    private var pending: [Batch] = []
    private var started = false

    private final class Batch {
        let count: Int
        let body: @Sendable (Int) -> Void
        var next = 0
        var finished = 0
        init(count: Int, body: @escaping @Sendable (Int) -> Void) { (self.count, self.body) = (count, body) }
    }

    /// `threads` counts the calling encoder's: a pool of one starts none and runs strips in turn.
    public init(threads: Int) {
        self.threads = max(threads, 1)
    }

    public func run(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        guard count > 1, threads > 1 else {
            for index in 0..<count { body(index) }
            return
        }
        let batch = Batch(count: count, body: body)
        condition.lock()
        pending.append(batch)
        let startThreads = !started
        started = true
        condition.broadcast()
        condition.unlock()
        if startThreads {
            for index in 1..<threads {
                WorkerThread.start(name: "camd-strip\(index)", niceness: EncoderWorker.niceness) { [self] in serve() }
            }
        }
        while let index = claim(batch) {
            batch.body(index)
            finish(batch)
        }
        condition.lock()
        while batch.finished < batch.count { condition.wait() }
        condition.unlock()
    }

    /// The next strip of `batch` nobody has started, or nil.
    private func claim(_ batch: Batch) -> Int? {
        condition.lock()
        defer { condition.unlock() }
        return claimLocked(batch)
    }

    private func claimLocked(_ batch: Batch) -> Int? {
        guard batch.next < batch.count else { return nil }
        let index = batch.next
        batch.next += 1
        if batch.next == batch.count, let at = pending.firstIndex(where: { $0 === batch }) { pending.remove(at: at) }
        return index
    }

    private func finish(_ batch: Batch) {
        condition.lock()
        batch.finished += 1
        if batch.finished == batch.count { condition.broadcast() }
        condition.unlock()
    }

    private func serve() {
        while true {
            condition.lock()
            while pending.isEmpty { condition.wait() }
            let batch = pending[0]
            let index = claimLocked(batch)
            condition.unlock()
            if let index {
                batch.body(index)
                finish(batch)
            }
        }
    }
}
