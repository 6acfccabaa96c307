@testable import CaptureSession
import CamdTestSupport
import Foundation
import JPEG
import Testing
import VideoCore

@Suite struct StripPoolTests {
    /// Which strips ran, how often, on which threads, and the most at once.
    final class Tally: @unchecked Sendable {  // all state is guarded by `lock`
        private let lock = NSLock()
        private(set) var running = 0
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
    /// caller's, and `run` returns only after the last one: the helpers' strips take longer
    /// than the caller's, so a `run` that returned after its own would leave them running.
    @Test func everyStripRunsOnceAndRunReturnsAfterAll() async throws {
        let pool = StripPool(threads: 3)
        let tally = Tally()
        // Blocking, as an encoder thread is: off the cooperative pool. `running` is read on that thread.
        let runningAtReturn = try await onOwnThread {
            pool.run(3) { index in
                tally.enter(index)
                let helper = ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").hasPrefix("camd-strip")
                Thread.sleep(forTimeInterval: helper ? 0.2 : 0.01)
                tally.leave()
            }
            return tally.running
        }
        #expect(runningAtReturn == 0, "run returned with strips still running")
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
        for tally in tallies {
            #expect(tally.calls == [0: 50, 1: 50, 2: 50, 3: 50])
            #expect(tally.running == 0)
        }
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

    /// An encoder thread's `FrameEncoder` on the daemon's own kind of pool: a 720p frame in
    /// three strips, which decodes to the pixels of the frame encoded whole.
    @Test func anEncoderOnThePoolMakesTheJPEGOfTheWholeFrame() async throws {
        let layout = FrameLayout(format: .yuyv, size: FrameSize(width: 1280, height: 720), bytesPerLine: 2560, range: .limited)
        let pool = StripPool(threads: 3)
        let (striped, whole, same) = try await onOwnThread {
            var state: UInt32 = 7
            let frame = (0..<(2560 * 720)).map { index -> UInt8 in
                state = state &* 1_664_525 &+ 1_013_904_223
                return UInt8(truncatingIfNeeded: index / 11 % 180 + Int(state >> 28))
            }
            let striped = try frame.withUnsafeBytes { try FrameEncoder(quality: 80, stripRunner: pool).encode($0, layout: layout) }
            let whole = try frame.withUnsafeBytes { try FrameEncoder(quality: 80).encode($0, layout: layout) }
            let decoder = try JPEGDecoder()
            return (striped, whole, try decoder.decodeRGB(striped).pixels == decoder.decodeRGB(whole).pixels)
        }
        #expect(striped != whole)
        #expect(zip(striped, striped.dropFirst()).contains { $0 == 0xFF && $1 == 0xDD }, "no restart interval: encoded whole")
        #expect(same, "the strips decode to other pixels")
    }
}
