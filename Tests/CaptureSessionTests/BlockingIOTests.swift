@testable import CaptureSession
import CamdTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// Blocking work runs off the threads of Swift's tasks: a camera slow to open, a slow disk,
/// must not hold back the API's tasks and the cameras' actors.
@Suite struct BlockingIOTests {
    /// Jobs that block until a task lets them go. Run where Swift's tasks run (a concurrent
    /// dispatch queue, as before, shares those threads on Linux), they took every thread
    /// that task needed, and each job gave up after its time. That time is long (30 s), so that
    /// a machine loaded with other tests, slow to run the task, does not fail it too.
    @Test func jobsThatBlockLeaveTasksRunning() async throws {
        let io = BlockingIO(label: "camd.test.blocking", concurrent: true)
        let count = max(2 * BlockingIO.concurrentLanes, 4 * ProcessInfo.processInfo.activeProcessorCount)
        let release = DispatchSemaphore(value: 0)
        let started = Counter()
        async let released: [Bool] = withTaskGroup(of: Bool.self) { group in
            for _ in 0..<count {
                group.addTask {
                    await io.run {
                        started.add(1)
                        return release.wait(timeout: .now() + 30) == .success
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        // Every lane busy, blocked: a task still runs, and lets them go.
        try await waitUntil { started.value >= BlockingIO.concurrentLanes }
        await Task.detached { for _ in 0..<count { release.signal() } }.value
        let outcomes = await released
        #expect(outcomes.count == count && outcomes.allSatisfy { $0 },
                "\(outcomes.filter { !$0 }.count) of \(count) jobs were not let go: the task that would have was held back")
    }

    /// A serial one runs its jobs one at a time, however many come at once.
    @Test func aSerialOneRunsOneJobAtATime() async throws {
        let io = BlockingIO(label: "camd.test.serial")
        let running = Counter(), most = Counter(), done = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    await io.run {
                        most.raise(to: running.add(1))
                        usleep(1000)
                        running.add(-1)
                        done.add(1)
                    }
                }
            }
        }
        #expect(most.value == 1 && done.value == 20)
    }
}

private final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    @discardableResult func add(_ amount: Int) -> Int { count.withLock { $0 += amount; return $0 } }
    func raise(to amount: Int) { count.withLock { $0 = max($0, amount) } }
}
