import CamdTestSupport
import Foundation
import Testing
import Video
import VideoCore
@testable import CaptureSession

/// The live H.264's clients on the synthetic source: one encode for all, a keyframe for
/// each one that joins, bounded queues that drop to a keyframe, and streams that end when
/// the camera stops or changes format.
@Suite struct LiveVideoTests {
    /// Keyframes come only when asked for (or every 30 s), so a test sees which were asked for.
    func session() -> CaptureSession {
        CaptureSession(settings: CameraSettings(id: "cam", device: FrameSources.syntheticName, size: FrameSize(width: 160, height: 120),
                                                fps: 20, video: VideoSettings(encoder: VideoEncoderSettings(encoder: .libx264, keyframeInterval: 30))))
    }

    /// The fragments a client gets within `seconds`.
    func read(_ client: LiveVideoClient, for seconds: Double) async -> [LiveFragment] {
        let reader = Task { () -> [LiveFragment] in
            var got: [LiveFragment] = []
            let end = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < end, let batch = await client.next() { got += batch }
            return got
        }
        try? await Task.sleep(for: .seconds(seconds))
        // A read that waits past the deadline ends when the next frame comes.
        return await reader.value
    }

    @Test func clientsShareOneEncodeAndEachStartsAtAKeyframeAskedForWhenItJoins() async throws {
        let camera = session()
        await camera.start()
        let first = try await camera.liveVideo()
        let start = try #require(await first.waitForStart(timeout: .seconds(10)))
        #expect(start.width == 160 && start.height == 120)
        #expect(start.contentType.hasPrefix("video/mp4; codecs=\"avc1."))
        #expect(start.initSegment.count > 100)
        let early = await read(first, for: 0.5)
        #expect(early.first?.isKeyframe == true)

        let second = try await camera.liveVideo()
        let joined = ContinuousClock.now
        #expect(await second.waitForStart(timeout: .seconds(10)) != nil)
        let waited = ContinuousClock.now - joined
        #expect(waited < .seconds(5), "a keyframe asked for, not one 30 s away: \(waited)")
        let fromSecond = await read(second, for: 0.5)
        #expect(fromSecond.first?.isKeyframe == true)

        let video = await camera.status().video
        #expect(video.consumers == 1, "one consumer of the encoder for every live client")
        #expect(video.keyframesRequested >= 2)
        #expect(video.live.clients.count == 2)
        #expect(video.live.clients.allSatisfy { $0.framesSent > 0 && $0.bytesSent > 0 })

        first.finish()
        second.finish()
        var running = true
        try await waitUntil(limit: .seconds(5), every: .milliseconds(100)) {
            running = await camera.status().video.running
            return !running
        }
        #expect(!running, "the last client gone, the encoder stops")
        let after = await camera.status().video.live
        #expect(after.clients.isEmpty && after.framesSent >= early.count + fromSecond.count, "the totals keep what departed clients took")
        await camera.stop()
    }

    @Test func stoppingTheCameraEndsTheStreams() async throws {
        let camera = session()
        await camera.start()
        let client = try await camera.liveVideo()
        #expect(await client.waitForStart(timeout: .seconds(10)) != nil)
        await camera.stop()
        var ended = false
        for _ in 0..<100 where !ended {
            ended = await client.next() == nil
        }
        #expect(ended)
    }

    @Test func anotherSizeEndsTheStreamAndTheNextClientGetsTheNewOne() async throws {
        let camera = session()
        await camera.start()
        let client = try await camera.liveVideo()
        #expect(await client.waitForStart(timeout: .seconds(10))?.width == 160)
        _ = try await camera.configure { current in
            var new = current
            new.size = FrameSize(width: 320, height: 240)
            return new
        }
        var ended = false
        let deadline = ContinuousClock.now + .seconds(10)
        while !ended && ContinuousClock.now < deadline {
            ended = await client.next() == nil
        }
        #expect(ended, "the init segment changed, so the stream ends and the player connects again")
        let next = try await camera.liveVideo()
        #expect(await next.waitForStart(timeout: .seconds(10))?.width == 320)
        next.finish()
        await camera.stop()
    }
}

/// One client's queue, fed as the video stage feeds it.
@Suite struct LiveVideoClientTests {
    static let start = LiveStreamStart(initSegment: [1, 2, 3], contentType: "video/mp4", width: 16, height: 16)

    static func fragment(_ index: Int, keyframeEvery: Int = 30) -> LiveFragment {
        LiveFragment(bytes: [UInt8](repeating: UInt8(index & 0xFF), count: 100), isKeyframe: index % keyframeEvery == 0,
                     captureTime: 1_700_000_000 + Double(index) / 30, monotonicTime: Double(index) / 30)
    }

    @Test func aClientThatStopsReadingLosesItsQueueAndGoesOnFromTheNextKeyframe() async {
        let client = LiveVideoClient(id: 1) { _ in }
        // Joined between keyframes: nothing until the first keyframe.
        for index in 25..<30 { client.offer(Self.fragment(index), start: Self.start) }
        #expect(!client.hasStarted)
        client.offer(Self.fragment(30), start: Self.start)
        #expect(await client.waitForStart(timeout: .seconds(1)) != nil)
        // Two seconds of frames while nobody reads: more than the queue holds.
        for index in 31..<95 { client.offer(Self.fragment(index), start: Self.start) }
        let counters = client.snapshot
        #expect(counters.drops >= 1)
        let batch = await client.next() ?? []
        #expect(batch.first?.isKeyframe == true, "the queue starts again at a keyframe")
        #expect(batch.first.map { Int($0.monotonicTime * 30 + 0.5) } == 90)
        #expect(batch.count == 5)
        #expect(client.snapshot.framesDropped == 60, "frames 30 to 89 never reached the client")
        #expect(client.snapshot.framesSent == 5)
        client.finish()
        #expect(await client.next() == nil)
    }

    @Test func whatIsQueuedIsStillTakenAfterTheStreamEnds() async {
        let client = LiveVideoClient(id: 1) { _ in }
        for index in 0..<3 { client.offer(Self.fragment(index), start: Self.start) }
        client.finish()
        #expect(await client.next()?.count == 3)
        #expect(await client.next() == nil)
    }
}

/// HLS from a client's fragments: parts, segments at keyframes, a bounded window.
@Suite struct HLSWindowTests {
    @Test func segmentsStartAtKeyframesPartsStayWithinTheTargetAndOnlyTheNewestAreKept() async throws {
        let window = HLSWindow(keyframeInterval: 2)
        let client = LiveVideoClient(id: 1) { _ in }
        window.feed(from: client)
        // 16 s at 30 fps, a keyframe every 2 s, and one asked for 0.2 s into the fourth segment.
        for index in 0..<480 {
            var fragment = LiveVideoClientTests.fragment(index, keyframeEvery: 60)
            if index == 186 { fragment.isKeyframe = true }
            client.offer(fragment, start: LiveVideoClientTests.start)
            // The window reads as a player would, well within the client's queue of 1 s: the
            // feed waits for it to take each 10 frames before going on (a fixed pause was not
            // always enough for its task to be scheduled on a loaded machine).
            // Bounded: a window that stopped reading (its feed ended) would keep the loop, and the
            // whole test run, waiting for ever. It asks whether the window is fed as a player's
            // playlist request does: a window nobody asks for 30 s lets its feed go, and a loaded
            // machine (a suite run once hung here) may hold this loop's task that long.
            if index % 10 == 9 {
                let deadline = ContinuousClock.now + .seconds(30)
                var fed = window.isFed
                while client.snapshot.framesSent < index - 9, client.snapshot.drops == 0, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(2))
                    fed = window.isFed
                }
                if client.snapshot.framesSent < index - 9, client.snapshot.drops == 0 {
                    Issue.record("the window took \(client.snapshot.framesSent) of \(index + 1) fragments in 30 s; fed: \(fed)")
                    break
                }
            }
        }
        await window.waitForFirstSegment(timeout: .seconds(5))
        await window.wait(sequence: 7, part: 2, timeout: .seconds(5))
        let playlist = try #require(window.playlist())
        let lines = playlist.split(separator: "\n")
        #expect(lines.contains("#EXT-X-TARGETDURATION:2"))
        #expect(lines.contains("#EXT-X-MEDIA-SEQUENCE:2"), "five whole segments and the one being filled: \(playlist)")
        let segments = lines.filter { $0.hasSuffix(".m4s") && !$0.hasPrefix("#") }
        #expect(segments == ["2.m4s", "3.m4s", "4.m4s", "5.m4s", "6.m4s"])
        let durations = lines.filter { $0.hasPrefix("#EXTINF:") }.compactMap { Double($0.dropFirst(8).dropLast()) }
        #expect(durations.allSatisfy { abs($0 - 2) < 0.01 }, "a keyframe asked for 0.2 s in does not cut a segment: \(durations)")
        let parts = lines.filter { $0.hasPrefix("#EXT-X-PART:") }
        let partDurations = parts.compactMap { $0.split(separator: ",").first?.split(separator: "=").last.flatMap { Double($0) } }
        #expect(!parts.isEmpty && partDurations.allSatisfy { $0 <= HLSWindow.partTarget + 0.001 })
        #expect(parts.filter { $0.contains("INDEPENDENT=YES") }.count >= 3, "the first part of each listed segment and the one after the asked-for keyframe")
        #expect(lines.last?.hasPrefix("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"7.") == true)
        // A segment's bytes are its parts'; segments gone from the window are gone.
        let segment = try #require(window.media(sequence: 4, part: nil))
        let partBytes = (0..<4).compactMap { window.media(sequence: 4, part: $0) }.reduce([], +)
        #expect(segment.count == partBytes.count && segment == partBytes)
        let dropped = window.media(sequence: 1, part: nil) == nil
        #expect(dropped, "segment 1 is out of the window")
        client.finish()
    }
}
