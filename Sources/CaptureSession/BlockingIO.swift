import Dispatch

/// Runs blocking work (file writes, fsync, directory scans, opening a device) on
/// a dispatch queue of its own, so it never holds a thread of the cooperative
/// pool or an actor's turn while the disk or a device is slow.
public struct BlockingIO: Sendable {
    private let queue: DispatchQueue

    /// - Parameter concurrent: false gives a serial queue, which runs jobs one at
    ///   a time in submission order: what makes "is this name free? then write it" safe.
    public init(label: String, concurrent: Bool = false) {
        queue = DispatchQueue(label: label, attributes: concurrent ? [.concurrent] : [])
    }

    /// Runs `work` on the queue and returns its result or its error.
    public func run<Value: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let result: Result<Value, Failure> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(Failure) -> Value in try work() }) }
        }
        return try result.get()
    }

    /// A shared concurrent queue for one-off blocking jobs that need no ordering.
    public static let shared = BlockingIO(label: "camd.blocking-io", concurrent: true)

    /// Runs `work` on the shared queue.
    public static func run<Value: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        try await shared.run(work)
    }
}
