@testable import CaptureSession
import Testing
import VideoCore

@Suite struct FrameHubTests {
    func frame(_ sequence: UInt32, at time: Double, size: FrameSize = FrameSize(width: 2, height: 2)) -> Frame {
        Frame(layout: FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited),
              bytes: [UInt8](repeating: 128, count: size.area * 2), sequence: sequence, monotonicTime: time, captureTime: time)
    }

    func encoded(_ frame: Frame) -> EncodedFrame {
        EncodedFrame(jpeg: [0xFF, 0xD8], sequence: frame.sequence, captureTime: frame.captureTime,
                     monotonicTime: frame.monotonicTime, size: frame.layout.size, sourceFormat: .yuyv, encodeSeconds: 0)
    }

    /// An encoder from before a restart that finishes late must neither block the new
    /// run's frames nor hand out a frame made with the old settings.
    @Test func aLateDeliveryFromAnEarlierRunIsIgnored() async throws {
        let hub = FrameHub()
        let first = hub.reopen()
        for n in 1...50 { hub.publish(frame(UInt32(n), at: Double(n))) }
        let stale = frame(50, at: 50, size: FrameSize(width: 4, height: 4))
        let second = hub.reopen()
        hub.deliver(encoded(stale), generation: 50, epoch: first)

        hub.publish(frame(1, at: 100))
        let waiter = Task { try await hub.frame(notBefore: 99, timeout: .seconds(5)) }
        guard let (next, generation) = hub.nextFrameToEncode(epoch: second) else {
            Issue.record("the new run's frame was never offered to the encoder"); return
        }
        #expect(next.monotonicTime == 100)
        hub.deliver(encoded(next), generation: generation, epoch: second)
        let got = try await waiter.value
        #expect(got.size == FrameSize(width: 2, height: 2))
        #expect(got.monotonicTime == 100)
    }

    @Test func aLostDeviceFailsWaitersAtOnce() async {
        let hub = FrameHub()
        _ = hub.reopen()
        let waiter = Task { try await hub.frame(notBefore: 0, timeout: .seconds(30)) }
        try? await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        hub.deviceLost(.waitingForDevice("gone"))
        do {
            _ = try await waiter.value
            Issue.record("a waiter got a frame from a lost device")
        } catch {
            #expect(error as? SessionError == .waitingForDevice("gone"))
        }
        #expect(ContinuousClock.now - started < .seconds(1))
    }
}
