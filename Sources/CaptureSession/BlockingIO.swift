import Dispatch
import Synchronization

/// Runs blocking work (file writes, fsync, directory scans, opening a device) off the threads
/// that run Swift's tasks, so it never holds one of them, or an actor's turn, while the disk
/// or a device is slow.
///
/// Every job runs on a serial dispatch queue, which libdispatch serves from threads it adds as
/// others block (its overcommit pool). Not on a concurrent queue, nor `DispatchQueue.global()`:
/// on Linux those run on the very threads of Swift's cooperative pool, and a task queued behind
/// jobs that block there waits for them. Measured on 2 cores: a task waited 3.9 s behind ten
/// 3-second jobs on a concurrent queue, and 0.1 ms with the same jobs on ten serial queues.
public final class BlockingIO: Sendable {
    /// One queue when serial; when concurrent, `concurrentLanes`, each job going to the one
    /// with the fewest jobs queued or running.
    private let lanes: [DispatchQueue]
    /// Jobs queued or running on each lane (concurrent only).
    private let jobs: Mutex<[Int]>

    /// How many jobs a concurrent `BlockingIO` runs at once. Idle lanes cost no thread:
    /// libdispatch starts one when a job comes and ends it when idle.
    static let concurrentLanes = 8

    /// - Parameter concurrent: false gives one serial queue, which runs jobs one at a time in
    ///   submission order: what makes "is this name free? then write it" safe.
    public init(label: String, concurrent: Bool = false) {
        let count = concurrent ? Self.concurrentLanes : 1
        lanes = (0..<count).map { DispatchQueue(label: count == 1 ? label : "\(label).\($0)") }
        jobs = Mutex([Int](repeating: 0, count: count))
    }

    /// Runs `work` on a lane and returns its result or its error.
    public func run<Value: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let lane = lanes.count == 1 ? 0 : jobs.withLock { jobs in
            let lane = jobs.indices.min { jobs[$0] < jobs[$1] } ?? 0
            jobs[lane] += 1
            return lane
        }
        let result: Result<Value, Failure> = await withCheckedContinuation { continuation in
            lanes[lane].async { [self] in
                let result = Result { () throws(Failure) -> Value in try work() }
                if lanes.count > 1 { jobs.withLock { $0[lane] -= 1 } }
                continuation.resume(returning: result)
            }
        }
        return try result.get()
    }

    /// A shared concurrent `BlockingIO` for one-off blocking jobs that need no ordering.
    public static let shared = BlockingIO(label: "camd.blocking-io", concurrent: true)

    /// Runs `work` on the shared one.
    public static func run<Value: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        try await shared.run(work)
    }
}
