@testable import CaptureSession
import Foundation
import Testing
import V4L2
import VideoCore

/// An on-demand camera stops again when unused, but never under a snapshot still
/// waiting for it.
@Suite struct IdleStopTests {
    @Test func aSlowStartIsNotTakenForIdleness() async throws {
        // A device that takes 2.5 s to open, and an idle stop of 1 s: the idle watch
        // must not stop the camera while the snapshot that started it waits.
        let settings = CameraSettings(id: "slow", device: FrameSources.syntheticName,
                                      size: FrameSize(width: 320, height: 240), fps: 30, idleStopSeconds: 1)
        let session = CaptureSession(settings: settings, openSource: { (_, request, _) throws(DeviceError) in
            Thread.sleep(forTimeInterval: 2.5)
            return try SyntheticSource(request: request)
        })
        let frame = try await session.snapshot()
        #expect(frame.size == FrameSize(width: 320, height: 240))
        // Unused afterwards, it stops within a few seconds.
        var state = await session.state
        for _ in 0..<80 where state != .idle {
            try await Task.sleep(for: .milliseconds(100))
            state = await session.state
        }
        #expect(state == .idle)
    }
}
