@testable import CaptureSession
import Foundation
import Testing

@Suite struct StripPoolTests {
    /// Which strips ran, how often, on which threads, and the most at once.
    final class Tally: @unchecked Sendable {  // all state is guarded by `lock`
        private let lock = NSLock()
        private var running = 0
        private(set) var mostAtOnce = 0
        private(set) var calls: [Int: Int] = [:]
        private(set) var threads: Set<String> = []

        func enter(_ index: Int) {
            lock.lock(); defer { lock.unlock() }
            running += 1
            mostAtOnce = max(mostAtOnce, running)
            calls[index, default: 0] += 1
            threads.insert((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?")
        }

        func leave() {
            lock.lock(); defer { lock.unlock() }
            running -= 1
        }
    }

    /// Every strip runs exactly once, some on the pool's threads at the same time as the
    /// caller's, and `run` returns only after the last one.
    @Test func everyStripRunsOnceAndRunReturnsAfterAll() {
        let pool = StripPool(threads: 3)
        let tally = Tally()
        pool.run(3) { index in
            tally.enter(index)
            Thread.sleep(forTimeInterval: 0.05)
            tally.leave()
        }
        #expect(tally.calls == [0: 1, 1: 1, 2: 1])
        #expect(tally.mostAtOnce >= 2, "strips ran one after another")
        #expect(tally.threads.contains { $0.hasPrefix("camd-strip") })
    }

    /// Encoders of several cameras share the pool: each frame's strips all run, whether
    /// a helper or the encoder itself takes them.
    @Test func encodersSharingThePoolEachGetAllTheirStrips() async {
        let pool = StripPool(threads: 2)
        let tallies = (0..<4).map { _ in Tally() }
        await withTaskGroup(of: Void.self) { group in
            for tally in tallies {
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        Thread {
                            for _ in 0..<50 {
                                pool.run(4) { index in
                                    tally.enter(index)
                                    tally.leave()
                                }
                            }
                            done.resume()
                        }.start()
                    }
                }
            }
        }
        for tally in tallies { #expect(tally.calls == [0: 50, 1: 50, 2: 50, 3: 50]) }
    }

    @Test func aPoolOfOneRunsStripsInTurnOnTheCaller() {
        let pool = StripPool(threads: 1)
        let tally = Tally()
        pool.run(3) { index in
            tally.enter(index)
            tally.leave()
        }
        #expect(tally.calls == [0: 1, 1: 1, 2: 1])
        #expect(tally.mostAtOnce == 1)
        #expect(!tally.threads.contains { $0.hasPrefix("camd-strip") })
    }
}
