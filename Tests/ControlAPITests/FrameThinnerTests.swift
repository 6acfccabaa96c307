@testable import ControlAPI
import Testing

@Suite struct FrameThinnerTests {
    /// Frames every `gaps` seconds in turn, for `seconds`; how many the thinner lets through.
    func admitted(fps: Double?, gaps: [Double], seconds: Double, start: Double = 100) -> [Double] {
        var thinner = FrameThinner(fps: fps)
        var sent: [Double] = [], time = start, index = 0
        while time < start + seconds {
            if thinner.admits(time) { sent.append(time) }
            time += gaps[index % gaps.count]
            index += 1
        }
        return sent
    }

    @Test func unevenFramesAverageTheAskedRate() {
        // A 25 fps camera whose encoder keeps up with every second or third frame: 80 and 120 ms apart.
        let sent = admitted(fps: 5, gaps: [0.08, 0.12, 0.08, 0.08, 0.12], seconds: 20)
        #expect((98...101).contains(sent.count), "\(sent.count) frames in 20 s at 5 fps asked")
        // Each frame goes out within one source gap (at most 0.12 s) of its due time, so
        // five intervals never take less than 1 s less that gap: a late frame's catch-up
        // is bounded, and no window runs faster than that.
        for first in sent.indices.dropLast(5) { #expect(sent[first + 5] - sent[first] >= 1 - 0.12 - 1e-9) }
    }

    @Test func jitterAroundTheIntervalKeepsTheRate() {
        // 25 fps with ±3 ms of jitter, 5 fps asked: 100 in 20 s, not one frame in six.
        let sent = admitted(fps: 5, gaps: [0.037, 0.043, 0.040, 0.038, 0.042], seconds: 20)
        #expect((98...101).contains(sent.count), "\(sent.count) frames in 20 s")
    }

    @Test func sparseFramesAllPass() {
        #expect(admitted(fps: 5, gaps: [0.3], seconds: 2.95).count == 10)
        #expect(admitted(fps: nil, gaps: [0.01], seconds: 1).count == 100)
    }

    @Test func noBurstAfterAPause() {
        var thinner = FrameThinner(fps: 5)
        // The device was gone for five seconds after 10.2: the next frames come at the asked rate again.
        let times = [10.0, 10.2, 15.2, 15.24, 15.36, 15.4]
        let admitted = times.map { thinner.admits($0) }
        #expect(admitted == [true, true, true, false, false, true])
    }
}
