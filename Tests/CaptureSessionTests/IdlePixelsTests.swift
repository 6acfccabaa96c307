@testable import CaptureSession
import CamdTestSupport
import Foundation
import Synchronization
import Testing
import V4L2
import VideoCore

/// A running camera nobody uses copies no pixels: each frame goes back to the
/// driver unread, or stays there kept as the newest (`.kept`), and only demand brings
/// the copies (and encodes) back.
@Suite struct IdlePixelsTests {
    /// Frames taken with their pixels, and left unread.
    final class Counts: Sendable {
        let copies = Atomic<Int>(0)
        let skips = Atomic<Int>(0)
    }

    /// The synthetic source, counting how its frames were taken.
    final class CountingSource: FrameSource {
        let inner: SyntheticSource
        let counts: Counts
        init(_ inner: SyntheticSource, counts: Counts) {
            self.inner = inner
            self.counts = counts
        }
        var name: String { inner.name }
        var cardName: String { inner.cardName }
        var configuration: CaptureConfiguration { inner.configuration }
        var droppedFrames: Int { 0 }
        /// Every frame taken with its pixels counts as copied, as a V4L2 camera's do when its
        /// consumers hold every buffer it could lend.
        var copiedFrames: Int { counts.copies.load(ordering: .relaxed) }
        func nextFrame(timeout: Duration) throws(DeviceError) -> Frame {
            counts.copies.add(1, ordering: .relaxed)
            return try inner.nextFrame(timeout: timeout)
        }
        func nextFrame(timeout: Duration, ifWanted wanted: () -> Bool) throws(DeviceError) -> SourcedFrame {
            let taken = try inner.nextFrame(timeout: timeout, ifWanted: wanted)
            switch taken {
            case .read: counts.copies.add(1, ordering: .relaxed)
            case .unread, .kept: counts.skips.add(1, ordering: .relaxed)
            }
            return taken
        }
        func stop() { inner.stop() }
    }

    /// A 320x240 synthetic camera whose frames are counted as they are taken.
    func countingSession(_ id: String, fps: Double = 30) -> (CaptureSession, Counts) {
        let counts = Counts()
        let settings = CameraSettings(id: id, device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: fps)
        let session = CaptureSession(settings: settings, openSource: { (_, request, _) throws(DeviceError) in
            CountingSource(try SyntheticSource(request: request), counts: counts)
        })
        return (session, counts)
    }

    @Test func anIdleCameraCopiesNoPixelsUntilAsked() async throws {
        let (session, counts) = countingSession("idle")
        await session.start()
        try await Task.sleep(for: .milliseconds(600))
        #expect(counts.copies.load(ordering: .relaxed) == 0, "frames were copied with nobody asking")
        #expect(counts.skips.load(ordering: .relaxed) >= 5, "the camera did not keep capturing")

        let frame = try await session.snapshot()
        #expect(frame.size == FrameSize(width: 320, height: 240))
        #expect(counts.copies.load(ordering: .relaxed) >= 1)

        // After the warm window, the camera goes back to leaving frames unread.
        try await Task.sleep(for: .seconds(FrameHub.warmSeconds + 0.3))
        let settled = counts.copies.load(ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(500))
        #expect(counts.copies.load(ordering: .relaxed) == settled, "pixels were still copied long after the last request")
        await session.stop()
    }

    /// A snapshot asked while an idle camera waits for its next frame gets that frame: whether
    /// anyone wants the pixels is asked once the frame has come. Asked before the wait, as it
    /// was, that frame went back unread and the snapshot waited a whole frame interval more
    /// (at 2 fps, its frame was always more than 0.5 s younger than the request).
    @Test func aSnapshotAskedDuringTheWaitGetsTheFrameThatEndsIt() async throws {
        let (session, counts) = countingSession("wait", fps: 2)
        await session.start()
        // Idle past the warm window: the capture thread leaves every frame unread.
        try await Task.sleep(for: .seconds(FrameHub.warmSeconds + 0.8))
        #expect(counts.copies.load(ordering: .relaxed) == 0, "frames were copied with nobody asking")
        let asked = FrameHub.monotonicNow()
        let frame = try await session.snapshot()
        #expect(frame.monotonicTime >= asked, "the snapshot's frame was captured before it was asked for")
        #expect(frame.monotonicTime - asked < 0.5, "the frame that ended the wait was skipped: captured \(frame.monotonicTime - asked) s after the request, at 2 fps")
        await session.stop()
    }

    /// A source that keeps the frames nobody wants where they are, as a V4L2 camera keeps
    /// its newest in the driver's buffer while that leaves the driver its reserve (`.kept`).
    final class KeepingSource: FrameSource {
        let inner: SyntheticSource
        init(_ inner: SyntheticSource) { self.inner = inner }
        var name: String { inner.name }
        var cardName: String { inner.cardName }
        var configuration: CaptureConfiguration { inner.configuration }
        var droppedFrames: Int { 0 }
        func nextFrame(timeout: Duration) throws(DeviceError) -> Frame { try inner.nextFrame(timeout: timeout) }
        func nextFrame(timeout: Duration, ifWanted wanted: () -> Bool) throws(DeviceError) -> SourcedFrame {
            let frame = try inner.nextFrame(timeout: timeout)
            return wanted() ? .read(frame) : .kept(frame)
        }
        func stop() { inner.stop() }
    }

    /// The first snapshot after a rest starts from the frame kept at rest: captured before the
    /// request, so it does not wait for the next frame (at 1 fps, up to a second).
    /// Left unread, as before, the frame that snapshot took was always captured after it.
    @Test func aSnapshotAfterARestStartsFromTheFrameKept() async throws {
        let settings = CameraSettings(id: "kept", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: 1)
        let session = CaptureSession(settings: settings, openSource: { (_, request, _) throws(DeviceError) in
            KeepingSource(try SyntheticSource(request: request))
        })
        await session.start()
        try await Task.sleep(for: .seconds(FrameHub.warmSeconds + 0.5))
        // Asked just after a frame kept at rest, the next frame is about a second away: the frame
        // answered was captured before the request, and the answer did not wait a second (asked
        // at any time, the wait for the next frame could be a few milliseconds). The kept frame's
        // encode, the camera's first, took 0.54 s in a debug build beside the whole suite.
        let captured = await session.status().framesCaptured
        try await waitUntil(every: .milliseconds(1)) { await session.status().framesCaptured > captured }
        let asked = FrameHub.monotonicNow()
        let frame = try await session.snapshot()
        let answered = FrameHub.monotonicNow()
        #expect(frame.monotonicTime < asked, "the snapshot's frame was captured \(frame.monotonicTime - asked) s after it was asked for")
        #expect(asked - frame.monotonicTime < 0.5, "the frame kept was \(asked - frame.monotonicTime) s old, asked just after it")
        #expect(answered - asked < 0.9, "answered \(answered - asked) s after it was asked for")
        await session.stop()
    }

    /// The frames a source copied out of the device's buffers are in the camera's status.
    @Test func framesTheSourceCopiedAreInTheStatus() async throws {
        let (session, counts) = countingSession("copies")
        await session.start()
        #expect(await session.status().framesCopied == 0)
        _ = try await session.snapshot()
        try await Task.sleep(for: .milliseconds(300))
        let copied = await session.status().framesCopied
        await session.stop()
        #expect(copied >= 1 && copied <= counts.copies.load(ordering: .relaxed), "\(copied) of \(counts.copies.load(ordering: .relaxed))")
    }

    /// A thumbnail of a raw (YUYV) camera is rendered from its planes: nobody streams,
    /// so no full-size JPEG is made for it.
    @Test func aThumbnailOfARawCameraEncodesNoFullFrame() async throws {
        let settings = CameraSettings(id: "raw", device: FrameSources.syntheticName, size: FrameSize(width: 640, height: 480), fps: 30)
        let session = CaptureSession(settings: settings)
        await session.start()
        var image = ImageSettings()
        image.geometry.longestSide = 160
        let before = await session.status().framesEncoded
        let shot = try await session.renderedSnapshot(image, quality: 85)
        #expect(shot.fromRawFrame)
        #expect(shot.size == FrameSize(width: 160, height: 120))
        #expect(shot.frameSize == FrameSize(width: 640, height: 480))
        #expect(await session.status().framesEncoded == before, "a full-size JPEG was encoded for a thumbnail")

        // As captured, the shared encoded frame is served.
        let full = try await session.renderedSnapshot(ImageSettings(), quality: 85)
        #expect(!full.fromRawFrame)
        #expect(full.size == FrameSize(width: 640, height: 480))
        await session.stop()
    }
}

/// Status reports the bound on frame memory, from the configuration.
@Suite struct FrameMemoryStatusTests {
    @Test func theBoundFollowsSizeAndEncodersAndIsAbsentWhenStopped() async throws {
        func bound(_ size: FrameSize, threads: Int) async -> Int? {
            let session = CaptureSession(settings: CameraSettings(id: "mem", device: FrameSources.syntheticName, size: size,
                                                                  fps: 30, encoderThreads: threads))
            #expect(await session.status().frameMemoryBytes == nil, "a camera that is not running holds no frames")
            await session.start()
            let status = await session.status()
            await session.stop()
            #expect(status.encoderThreads == threads)
            return status.frameMemoryBytes
        }
        let small = try #require(await bound(FrameSize(width: 320, height: 240), threads: 1))
        let pool = try #require(await bound(FrameSize(width: 320, height: 240), threads: 3))
        let large = try #require(await bound(FrameSize(width: 640, height: 480), threads: 1))
        // The synthetic source has no driver buffers: the newest frame, one per encoder, and their planes.
        #expect(small == 2 * 320 * 240 * 2 + 320 * 240 * 3)
        #expect(pool == small + 2 * (320 * 240 * 2 + 320 * 240 * 3))
        #expect(large == 4 * small)
    }
}
