@testable import CaptureSession
import Foundation
import Testing
import VideoCore

/// Polling clients are answered from a JPEG made just before their request is due.
@Suite struct SnapshotCadenceTests {
    @Test func aSteadyPeriodIsLearnedFromFourRequests() {
        var cadence = SnapshotCadence()
        for time in [10.0, 10.5, 11.0] { cadence.record(time) }
        #expect(cadence.nextDue == nil, "three requests are two periods: not yet believed")
        cadence.record(11.52)
        #expect(cadence.period == 0.5)
        #expect(abs((cadence.nextDue ?? 0) - 12.02) < 1e-9)
        // Requests that come together (two clients at once) count as one.
        cadence.record(11.53)
        #expect(cadence.period == 0.5)
    }

    @Test func requestsAtNoSteadyPeriodGiveNoPrediction() {
        var irregular = SnapshotCadence()
        for time in [0.0, 0.5, 1.6, 1.9] { irregular.record(time) }
        #expect(irregular.nextDue == nil)
        var tooFast = SnapshotCadence()
        for time in [0.0, 0.03, 0.06, 0.09] { tooFast.record(time) }
        #expect(tooFast.nextDue == nil, "a burst is not a poll")
        var tooSlow = SnapshotCadence()
        for time in [0.0, 700, 1400, 2100] { tooSlow.record(time) }
        #expect(tooSlow.nextDue == nil)
    }

    /// A client polling every 0.5 s: after the period is learned, requests are answered
    /// from the JPEG made just before them, whose frame is at most about an interval and an
    /// encode old; once the client stops, nothing more is encoded but the one JPEG made
    /// for the request that never came.
    ///
    /// Whether one JPEG made ahead is finished before its request comes depends on the
    /// encoder thread being scheduled in time: with the whole suite in parallel on two cores
    /// a CI run once saw eight requests in a row find theirs still encoding. So the client
    /// polls until one is answered from a ready JPEG, for at most 40 requests (20 s); without
    /// the cadence none ever is, and on a quiet machine the first after the four that teach
    /// the period is.
    @Test func aPollingClientIsAnsweredFromAJPEGMadeAheadAndAStoppedOneCostsNothing() async throws {
        let session = CaptureSession(settings: CameraSettings(id: "poll", device: FrameSources.syntheticName,
                                                              size: FrameSize(width: 640, height: 480), fps: 30))
        await session.start()
        let period = 0.5, interval = 1.0 / 30
        let start = FrameHub.monotonicNow() + 0.1
        var ages: [Double] = []
        var polled = await session.status()
        for index in 0..<40 {
            let due = start + Double(index) * period
            let wait = due - FrameHub.monotonicNow()
            if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
            let asked = FrameHub.monotonicNow()
            let frame = try await session.snapshot()
            if index >= 6 { ages.append(asked - frame.monotonicTime) }
            polled = await session.status()
            let served = polled.snapshots.madeAhead - polled.snapshots.madeAheadUnused
            if index >= 11, polled.snapshots.answeredReady >= 1, served >= 1 { break }
        }
        // The period the status reports, when one is believed, is within the cadence's tolerance.
        #expect(polled.snapshots.pollPeriod.map { abs($0 - period) <= SnapshotCadence.tolerance * period } ?? true, "\(polled.snapshots)")
        try await Task.sleep(for: .seconds(1.5))
        let after = await session.status()
        await session.stop()

        #expect(polled.snapshots.madeAhead - polled.snapshots.madeAheadUnused >= 1, "\(polled.snapshots)")
        #expect(polled.snapshots.answeredReady >= 1, "requests answered from a JPEG made before they came: \(polled.snapshots)")
        let encode = (polled.encodeMilliseconds ?? 0) / 1000
        #expect(ages.allSatisfy { $0 <= interval + 3 * encode + 0.03 }, "frame ages at the request: \(ages)")
        #expect(after.framesEncoded - polled.framesEncoded <= 1, "the stopped client cost at most the JPEG made for it")
        // Only what came after the client stopped: under load a late request may already have
        // left a JPEG unused while it was polling.
        #expect(after.snapshots.madeAhead - polled.snapshots.madeAhead <= 1, "\(polled.snapshots) -> \(after.snapshots)")
    }
}
