import CamdTestSupport
import CaptureSession
import Foundation
import JPEG
import Testing
import V4L2
import VideoCore

/// Driver faults injected with vivid's controls, met by camd's capture session in
/// process: it reports each, retries, and resumes by itself. What needs camd as a
/// process (disconnect storms with HTTP clients and /proc figures, socket access,
/// a full disk, signals) stays in scripts/vivid-fault-checks.py.
extension VividCaptureTests {
    /// The session's status once `condition` holds, or the last one after `timeout`.
    static func status(of session: CaptureSession, within timeout: Duration,
                       where condition: (CameraStatus) -> Bool) async -> CameraStatus {
        var status = await session.status()
        try? await waitUntil(limit: timeout, every: .milliseconds(100)) {
            status = await session.status()
            return condition(status)
        }
        return status
    }

    @Test func aFatalStreamingErrorIsReportedAndCaptureRestarts() async throws {
        let session = CaptureSession(settings: Self.settings())
        #expect(await session.start().state == .running)
        let before = await session.status().errors
        try Vivid.setControl("inject_fatal_streaming_error")
        let reported = await Self.status(of: session, within: .seconds(20)) { $0.errors > before }
        #expect(reported.errors > before, "no error counted")
        let back = await Self.status(of: session, within: .seconds(60)) { $0.state == .running }
        #expect(back.state == .running, "\(back.state): \(back.lastError ?? "")")
        await session.stop()
    }

    /// A STREAMON, REQBUFS or QBUF error on start: reported, retried with backoff, running again.
    @Test(arguments: ["inject_vidioc_streamon_error", "inject_vidioc_reqbufs_error", "inject_vidioc_qbuf_error"])
    func anErrorOnStartIsRetried(control: String) async throws {
        let session = CaptureSession(settings: Self.settings())
        let before = await session.status().errors
        try Vivid.setControl(control)
        await session.start()
        let back = await Self.status(of: session, within: .seconds(60)) { $0.state == .running }
        #expect(back.state == .running && back.errors > before,
                "\(back.state), errors \(before) → \(back.errors): \(back.lastError ?? "")")
        await session.stop()
    }

    /// Dropped and flagged buffers are never delivered: counted, and snapshots stay whole JPEGs.
    @Test func droppedAndFlaggedBuffersAreCountedNotDelivered() async throws {
        defer { try? Vivid.setControl("percentage_of_dropped_buffers", "0") }
        let session = CaptureSession(settings: Self.settings())
        #expect(await session.start().state == .running)
        let before = await session.status().framesDropped
        try Vivid.setControl("percentage_of_dropped_buffers", "50")
        try await Task.sleep(for: .seconds(4))
        for _ in 0..<5 {
            try Vivid.setControl("inject_v4l2_buf_flag_error")
            try await Task.sleep(for: .milliseconds(300))
        }
        try Vivid.setControl("percentage_of_dropped_buffers", "0")
        let after = await session.status()
        #expect(after.framesDropped > before + 10, "dropped \(before) → \(after.framesDropped) of \(after.framesCaptured)")
        let frame = try await session.snapshot(maxAge: 0)
        #expect(frame.jpeg.prefix(2) == [0xFF, 0xD8] && frame.jpeg.suffix(2) == [0xFF, 0xD9])
        await session.stop()
    }

    /// vivid dropping every buffer: DQBUF never returns one. An error within 10 s that
    /// says so (the bound is 5 s at 25 fps), not a hang, and capture resumes by itself.
    @Test func aStalledDeviceIsAnErrorAndCaptureResumes() async throws {
        defer { try? Vivid.setControl("percentage_of_dropped_buffers", "0") }
        let session = CaptureSession(settings: Self.settings())
        #expect(await session.start().state == .running)
        let before = await session.status().errors
        try Vivid.setControl("percentage_of_dropped_buffers", "100")
        let started = ContinuousClock.now
        let stalled = await Self.status(of: session, within: .seconds(30)) { $0.errors > before }
        let took = ContinuousClock.now - started
        try Vivid.setControl("percentage_of_dropped_buffers", "0")
        #expect(stalled.errors > before && took < .seconds(10), "after \(took): \(stalled.lastError ?? "no error")")
        #expect(stalled.lastError?.contains("no frame") == true, "\(stalled.lastError ?? "no error")")
        let back = await Self.status(of: session, within: .seconds(60)) { $0.state == .running }
        #expect(back.state == .running, "\(back.state): \(back.reason ?? "")")
        await session.stop()
    }

    /// A camera another program streams: a state that says busy and who holds it; the
    /// session takes the camera once it is freed.
    @Test func aBusyCameraNamesItsHolderAndIsTakenOnceFreed() async throws {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/v4l2-ctl")
        holder.arguments = ["-d", Vivid.capture, "--stream-mmap", "--stream-count=100000", "--stream-to=/dev/null"]
        holder.standardOutput = FileHandle.nullDevice
        holder.standardError = FileHandle.nullDevice
        try holder.run()
        // SIGKILL: the test runner's blocked signals are inherited, so SIGTERM may never arrive.
        func end() { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
        defer { end() }
        try await Task.sleep(for: .seconds(2))  // past its REQBUFS and STREAMON
        let session = CaptureSession(settings: Self.settings())
        await session.start()
        let busy = await Self.status(of: session, within: .seconds(20)) { $0.reason?.contains("busy") == true }
        #expect(busy.reason?.contains("v4l2-ctl") == true, "\(busy.state): \(busy.reason ?? "no reason")")
        end()  // its descriptors close as it dies
        let taken = await Self.status(of: session, within: .seconds(30)) { $0.state == .running }
        #expect(taken.state == .running, "\(taken.state): \(taken.reason ?? "")")
        await session.stop()
    }
}
