import CaptureSession
@testable import Daemon
import Testing
import V4L2
import VideoCore

/// camd exits for systemd to start it again when only a new process can open a camera.
@Suite struct WatchdogRestartTests {
    @Test func aCameraOnlyANewProcessCanOpenRestartsCamdOnlyUnderSystemd() async {
        let session = CaptureSession(settings: CameraSettings(id: "pi", device: FrameSources.syntheticName,
                                                              size: FrameSize(width: 160, height: 120), fps: 5))
        let other = await session.status()
        var gone = other
        gone.id = "gone"
        gone.state = .waitingForDevice
        gone.lastErrorKind = DeviceError.Kind.restartNeeded.rawValue
        #expect(WatchdogService.cameraGone(in: [other, gone], supervised: true) == "gone")
        #expect(WatchdogService.cameraGone(in: [other, gone], supervised: false) == nil,
                "without systemd to start it again, camd keeps the other cameras running")
        var waiting = gone
        waiting.lastErrorKind = DeviceError.Kind.disconnected.rawValue
        #expect(WatchdogService.cameraGone(in: [other, waiting], supervised: true) == nil, "a camera that went away and can be opened again waits as before")
        var running = gone
        running.state = .running
        #expect(WatchdogService.cameraGone(in: [running], supervised: true) == nil)
    }
}
