import CaptureSession
import Foundation
import JPEG
import Testing
import V4L2
import VideoCore

/// What camd's capture session does with a real driver: the checks that the VM's
/// daemon script made over HTTP, in process. The HTTP layer on top is the host's
/// ControlAPITests'; what needs camd as a process (READY=1, the socket, camctl,
/// signals) stays in scripts/vivid-daemon-checks.py. An extension, so these run in
/// the serialized vivid suite: one device, one test at a time.
extension VividCaptureTests {
    static func settings(size: FrameSize = FrameSize(width: 640, height: 480), fps: Double = 25) -> CameraSettings {
        CameraSettings(id: "vivid", device: Vivid.capture, format: .yuyv, size: size, fps: fps)
    }

    @Test func aSessionRunsAtTheConfiguredRateWithTheRightColours() async throws {
        let session = CaptureSession(settings: Self.settings())
        let started = await session.start()
        #expect(started.state == .running, "\(started.reason ?? "")")
        #expect(started.size == "640x480" && started.format == "YUYV" && started.configuredFPS == 25,
                "\(started.size ?? "-") \(started.format ?? "-") \(started.configuredFPS ?? 0)")
        try await Task.sleep(for: .seconds(3))
        let measured = await session.status().measuredFPS
        #expect((20...30).contains(measured), "measured \(measured) fps")
        let frame = try await session.snapshot()
        let (size, colours) = try Vivid.barColours(frame.jpeg)
        #expect(size == FrameSize(width: 640, height: 480))
        Vivid.expectBars(colours)
        #expect(colours[7].0 <= 6, "black \(colours[7])")
        await session.stop()
    }

    /// What a /stream client is sent: every frame whole, in order, at the camera's rate
    /// (thinning to a client's fps is FrameThinnerTests', the multipart framing the route tests').
    @Test func streamClientsGetWholeFramesAtTheDevicesRate() async throws {
        let session = CaptureSession(settings: Self.settings())
        await session.start()
        let stream = try await session.subscribe()
        var frames: [EncodedFrame] = []
        for await frame in stream {
            frames.append(frame)
            if frames.count == 30 { break }
        }
        await session.stop()
        #expect(frames.count == 30)
        for frame in frames {
            #expect(try JPEGDecoder().header(frame.jpeg).size == FrameSize(width: 640, height: 480))
            #expect(frame.jpeg.suffix(2) == [0xFF, 0xD9])
        }
        let sequences = frames.map(\.sequence)
        #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count)
        let first = frames[5], last = frames[frames.count - 1]  // after start-up
        let rate = Double(last.sequence - first.sequence) / (last.monotonicTime - first.monotonicTime)
        #expect(abs(rate - 25) < 3, "\(rate) fps by the driver's timestamps")
    }

    @Test func configureWhileRunningReopensTheDeviceAtTheNewSize() async throws {
        let session = CaptureSession(settings: Self.settings())
        await session.start()
        let reconfigured = try await session.configure(Self.settings(size: FrameSize(width: 1280, height: 720), fps: 10))
        #expect(reconfigured.state == .running && reconfigured.size == "1280x720", "\(reconfigured.state) \(reconfigured.size ?? "-")")
        let frame = try await session.snapshot(maxAge: 0)
        #expect(try JPEGDecoder().header(frame.jpeg).size == FrameSize(width: 1280, height: 720))
        let back = try await session.configure(Self.settings())
        #expect(back.state == .running && back.size == "640x480")
        await session.stop()
    }

    /// After stop, another program can stream the camera; start takes it again.
    @Test func stopReleasesTheDeviceAndStartTakesItAgain() async throws {
        let session = CaptureSession(settings: Self.settings())
        #expect(await session.start().state == .running)
        #expect(await session.stop().state == .idle)
        do {
            let other = try V4L2Source(path: Vivid.capture, request: CaptureRequest(format: .yuyv, size: FrameSize(width: 640, height: 480)))
            defer { other.stop() }
            for _ in 0..<3 { _ = try other.nextFrame(timeout: .seconds(10)) }
        }
        #expect(await session.start().state == .running)
        await session.stop()
    }

    /// A frame nobody wants is kept where the driver wrote it, its buffer lent, while that
    /// leaves the driver its reserve of two of the four buffers, and goes back unread once it
    /// would not: never copied. The capture thread's newest frame at rest is such a frame.
    /// Before, every frame nobody wanted went back unread.
    @Test func aFrameNobodyWantsIsKeptInItsBufferWhileTheDriverKeepsItsReserve() throws {
        let source = try V4L2Source(path: Vivid.capture, request: CaptureRequest(format: .yuyv, size: FrameSize(width: 640, height: 480), fps: 25))
        defer { source.stop() }
        // As the hub holds the newest frame: each kept one replaces the one before.
        var newest: Frame?
        for index in 0..<8 {
            guard case .kept(let frame) = try source.nextFrame(timeout: .seconds(10), ifWanted: { false }) else {
                Issue.record("frame \(index) at rest was not kept")
                return
            }
            #expect(frame.withUnsafeBytes { $0.count } == 640 * 480 * 2)
            newest = frame
        }
        // Another held beside it still leaves the driver two buffers; a third would not.
        let held = newest
        guard case .kept(let second) = try source.nextFrame(timeout: .seconds(10), ifWanted: { false }) else {
            Issue.record("a second frame held left the driver its reserve, yet was not kept")
            return
        }
        guard case .unread = try source.nextFrame(timeout: .seconds(10), ifWanted: { false }) else {
            Issue.record("a frame was kept with the driver's reserve held")
            return
        }
        #expect(source.copiedFrames == 0)
        withExtendedLifetime((held, second)) {}
    }

    /// A camera at rest keeps its newest frame in the driver's buffer, and a snapshot after the
    /// rest is still a whole frame of the bars, with nothing copied at rest. (Whether the
    /// snapshot started from the frame kept cannot be told from vivid's timestamps, which are
    /// the end of a frame's period, ahead of when it is dequeued: `IdlePixelsTests` shows it
    /// with a source whose times are known.)
    @Test func aSnapshotAfterARestIsAWholeFrame() async throws {
        let session = CaptureSession(settings: Self.settings(fps: 5))
        #expect(await session.start().state == .running)
        // Past the hub's two warm seconds after the start.
        try await Task.sleep(for: .seconds(3))
        let rested = await session.status()
        #expect(rested.framesCaptured >= 5 && rested.framesEncoded == 0 && rested.framesCopied == 0,
                "captured \(rested.framesCaptured), encoded \(rested.framesEncoded), copied \(rested.framesCopied) at rest")
        let frame = try await session.snapshot()
        let (size, colours) = try Vivid.barColours(frame.jpeg)
        #expect(size == FrameSize(width: 640, height: 480))
        Vivid.expectBars(colours)
        #expect(await session.status().framesCopied == 0)
        await session.stop()
    }

    /// What GET /v1/devices lists: every node, the capture node a camera this user may
    /// open with YUYV among its formats, the output node not a camera.
    @Test func everyNodeIsSummarisedForTheDevicesRoute() {
        let summaries = DeviceDiscovery.all(details: true).map(\.summary)
        let capture = summaries.first { $0.path == Vivid.capture }
        let output = summaries.first { $0.path == Vivid.output }
        #expect(capture?.camera == true && capture?.accessible == true)
        #expect(capture?.formats.contains { $0.fourcc == "YUYV" } == true)
        #expect(output != nil && output?.camera == false)
    }
}
