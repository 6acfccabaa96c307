@testable import CaptureSession
import Foundation
import JPEG
import Testing

@Suite struct RenderPoolTests {
    /// Counts jobs running at once and the pipelines they were given.
    final class Tally: @unchecked Sendable {  // all state is guarded by `lock`
        private let lock = NSLock()
        private var running = 0
        private(set) var mostAtOnce = 0
        private(set) var pipelines: Set<ObjectIdentifier> = []

        func enter(_ pipeline: ImagePipeline) {
            lock.lock(); defer { lock.unlock() }
            running += 1
            mostAtOnce = max(mostAtOnce, running)
            pipelines.insert(ObjectIdentifier(pipeline))
        }

        func leave() {
            lock.lock(); defer { lock.unlock() }
            running -= 1
        }
    }

    /// A burst of 12 requests runs two at a time on two threads, each keeping its pipeline.
    @Test func aBurstRunsOnTheFixedThreadsWithTheirOwnPipelines() async throws {
        let pool = RenderPool(threads: 2)
        let tally = Tally()
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for job in 0..<12 {
                group.addTask {
                    try await pool.run { (pipeline) throws(ImageError) -> Int in
                        tally.enter(pipeline)
                        defer { tally.leave() }
                        Thread.sleep(forTimeInterval: 0.02)
                        return job
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.sorted() == Array(0..<12))
        #expect(tally.mostAtOnce <= 2, "never more renders at once than threads: \(tally.mostAtOnce)")
        #expect(tally.pipelines.count <= 2, "each thread reuses its pipeline: \(tally.pipelines.count) pipelines")
    }

    @Test func anImageErrorReachesTheCaller() async {
        let pool = RenderPool(threads: 1)
        do {
            _ = try await pool.run { (_) throws(ImageError) -> Int in throw .invalidParameter(name: "crop", message: "crop is outside") }
            Issue.record("the error was lost")
        } catch {
            #expect(error.parameter == "crop")
        }
    }
}
