@testable import CaptureSession
import Foundation
import Testing
import VideoCore

/// JPEG encoding happens only while someone wants frames: a running camera
/// with no consumer captures but does not encode.
@Suite struct EncodingOnDemandTests {
    @Test func aCameraWithNoConsumerDoesNotEncode() async throws {
        let session = CaptureSession(settings: CameraSettings(id: "idle", device: FrameSources.syntheticName,
                                                              size: FrameSize(width: 320, height: 240), fps: 30))
        await session.start()
        let before = await session.status()
        try await Task.sleep(for: .milliseconds(700))
        let idle = await session.status()
        #expect(idle.framesCaptured > before.framesCaptured, "the camera captures while running")
        #expect(idle.framesEncoded == before.framesEncoded, "no consumer, yet \(idle.framesEncoded - before.framesEncoded) frames encoded")

        let stream = try await session.subscribe()
        var received = 0
        for await _ in stream {
            received += 1
            if received == 5 { break }
        }
        let streaming = await session.status()
        #expect(streaming.framesEncoded >= idle.framesEncoded + 5)
        await session.stop()
    }

    /// Three stream clients and snapshots share each frame's one encode: the clients get the
    /// same JPEG for the same frame, and the camera encodes no more frames than it captures.
    @Test func streamClientsAndSnapshotsShareOneEncodePerFrame() async throws {
        let session = CaptureSession(settings: CameraSettings(id: "shared", device: FrameSources.syntheticName,
                                                              size: FrameSize(width: 320, height: 240), fps: 30))
        await session.start()
        let streams = [try await session.subscribe(), try await session.subscribe(), try await session.subscribe()]
        let before = await session.status()
        let received = await withTaskGroup(of: [UInt32: [UInt8]].self) { group in
            for stream in streams {
                group.addTask {
                    var frames: [UInt32: [UInt8]] = [:]
                    for await frame in stream {
                        frames[frame.sequence] = frame.jpegForStream
                        if frames.count == 15 { break }
                    }
                    return frames
                }
            }
            group.addTask {
                for _ in 0..<5 { _ = try? await session.snapshot() }
                return [:]
            }
            return await group.reduce(into: []) { $0.append($1) }.filter { !$0.isEmpty }
        }
        let after = await session.status()
        await session.stop()

        #expect(received.count == 3)
        let common = received.map { Set($0.keys) }.reduce(Set(received[0].keys)) { $0.intersection($1) }
        #expect(common.count >= 5, "the clients saw the same frames: \(common.count) in common")
        for sequence in common {
            #expect(received[0][sequence] == received[1][sequence] && received[1][sequence] == received[2][sequence])
        }
        let encoded = after.framesEncoded - before.framesEncoded, captured = after.framesCaptured - before.framesCaptured
        #expect(encoded <= captured + CameraSettings.defaultEncoderThreads, "\(encoded) encodes for \(captured) frames captured: one per frame, not one per consumer")
    }

    /// `encode_every_frame`: with nobody asking, every frame is still encoded, so a
    /// snapshot finds a JPEG already made.
    @Test func encodeEveryFrameEncodesWithNoConsumer() async throws {
        let session = CaptureSession(settings: CameraSettings(id: "always", device: FrameSources.syntheticName,
                                                              size: FrameSize(width: 320, height: 240), fps: 30,
                                                              encodeEveryFrame: true))
        await session.start()
        let before = await session.status()
        try await Task.sleep(for: .milliseconds(700))
        let after = await session.status()
        #expect(after.framesEncoded >= before.framesEncoded + 5, "only \(after.framesEncoded - before.framesEncoded) frames encoded")
        // The newest JPEG is at most a frame old: this one is served as it is, with no new encode for it.
        let frame = try await session.snapshot(maxAge: 1)
        #expect(frame.size == FrameSize(width: 320, height: 240))
        await session.stop()
    }

    /// By default a snapshot's frame is at most one interval old; with every frame encoded,
    /// the newest finished JPEG is an encode older than the newest capture, and still served.
    @Test func theDefaultFrameAgeAllowsForTheEncodeOnlyWhenEveryFrameIsEncoded() {
        #expect(FrameHub.defaultSnapshotAge(interval: 0.04, encodeEveryFrame: false, meanEncode: 0.1, lead: nil) == 0.04)
        #expect(abs(FrameHub.defaultSnapshotAge(interval: 0.04, encodeEveryFrame: true, meanEncode: 0.1, lead: nil) - 0.24) < 1e-9)
        #expect(FrameHub.defaultSnapshotAge(interval: 0.04, encodeEveryFrame: true, meanEncode: 0, lead: nil) == 0.04)
    }

    /// While a poll's JPEGs are made ahead, a snapshot's frame may be as old as an interval, the
    /// lead the encode was started with and 20 ms: with steady encodes twice the mean, with a
    /// few slow ones among the last twenty the lead (all but the slowest encode), so the JPEG made
    /// for the poll is not too old for it and encoded a second time.
    @Test func thePollsJPEGIsNeverTooOldForTheDefaultAge() {
        let steady = FrameHub.defaultSnapshotAge(interval: 0.04, encodeEveryFrame: false, meanEncode: 0.01, lead: 0.015)
        #expect(abs(steady - 0.08) < 1e-9)
        var counters = FrameHub.Counters()
        counters.encodeSeconds = Array(repeating: 0.008, count: 17) + Array(repeating: 0.04, count: 3)
        let lead = (counters.aheadEncodeAllowance ?? 0) + FrameHub.aheadMargin
        let mean = counters.meanEncodeSeconds ?? 0
        let age = FrameHub.defaultSnapshotAge(interval: 0.04, encodeEveryFrame: false, meanEncode: mean, lead: lead)
        // Frame captured just before the encode started, request 15 ms late.
        #expect(0.04 + lead + 0.015 <= age, "lead \(lead), mean \(mean), age \(age)")
    }
}
