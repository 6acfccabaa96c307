import Foundation
import JPEG

/// The threads that render snapshots and thumbnails with image options, contact
/// sheets and thumbnails of saved photos: a fixed number of them, each with its
/// own `ImagePipeline` (TurboJPEG handles, filter tables and scratch planes kept
/// from job to job), at the encoders' priority.
///
/// A burst of requests queues here instead of starting a thread and a full-size
/// set of scratch planes per request, so memory stays bounded by `threads` ×
/// the largest render, whatever the number of clients.
public final class RenderPool: @unchecked Sendable {  // all state is guarded by `condition`
    /// The daemon's pool: one thread per core, at most 4.
    public static let shared = RenderPool(threads: min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 4))

    public let threads: Int
    private let condition = NSCondition()
    private var jobs: [@Sendable (ImagePipeline) -> Void] = []
    private var started = false

    public init(threads: Int) {
        self.threads = max(threads, 1)
    }

    /// Runs `work` on one of the pool's threads with that thread's pipeline, once a thread
    /// is free; jobs start in the order they were asked for.
    public func run<Value: Sendable>(
        _ work: @escaping @Sendable (ImagePipeline) throws(ImageError) -> Value
    ) async throws(ImageError) -> Value {
        let result: Result<Value, ImageError> = await withCheckedContinuation { continuation in
            enqueue { pipeline in
                continuation.resume(returning: Result { () throws(ImageError) -> Value in try work(pipeline) })
            }
        }
        return try result.get()
    }

    private func enqueue(_ job: @escaping @Sendable (ImagePipeline) -> Void) {
        condition.lock()
        jobs.append(job)
        let startThreads = !started
        started = true
        condition.signal()
        condition.unlock()
        // The threads start with the first job: a process that never renders has none.
        if startThreads {
            for index in 0..<threads {
                WorkerThread.start(name: "camd-render\(index)", niceness: EncoderWorker.niceness) { [self] in serve() }
            }
        }
    }

    private func serve() {
        let pipeline = ImagePipeline()
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job(pipeline)
        }
    }
}
