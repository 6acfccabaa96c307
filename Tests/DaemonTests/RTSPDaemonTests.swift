import CamdTestSupport
import CaptureSession
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real `camd` with `[daemon] rtsp`: the camera is served over RTSP, and SIGTERM with a
/// client watching stops every service at once (RTSP first, then the cameras).
@Suite(.serialized) struct RTSPDaemonTests {
    @Test func camdServesRTSPAndStopsAtOnceWithAClientWatching() async throws {
        let port = try RunningDaemon.freePort()
        let daemon = try RunningDaemon(tcp: false, shutdownTimeout: 20, daemonLines: "rtsp = \"127.0.0.1:\(port)\"\n")
        defer { daemon.cleanUp() }
        try await daemon.waitUntilServing()
        let url = "rtsp://127.0.0.1:\(port)/cam"
        let probed = try await BlockingIO.run {
            try Players.run("/usr/bin/ffprobe", ["-v", "error", "-rtsp_transport", "tcp", "-select_streams", "v:0",
                                                 "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", url])
        }
        #expect(probed.output.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,320,240", "ffprobe: \(probed.errors)")

        // A client that would watch for a minute.
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        watcher.arguments = ["-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", url, "-t", "60", "-f", "null", "-"]
        watcher.standardOutput = FileHandle.nullDevice
        watcher.standardError = FileHandle.nullDevice
        try watcher.run()
        defer { if watcher.isRunning { watcher.terminate() } }
        try await Task.sleep(for: .seconds(2))
        #expect(daemon.log().contains("RTSP client of /cam"), "log:\n\(daemon.log().suffix(1500))")

        let started = ContinuousClock.now
        kill(daemon.pid, SIGTERM)
        let status = try await daemon.waitForExit(limit: 25)
        let took = ContinuousClock.now - started
        let log = daemon.log()
        #expect(status == 0, "camd exited with \(status); log:\n\(log.suffix(1500))")
        #expect(took < .seconds(10), "camd took \(took) to stop; log:\n\(log.suffix(1500))")
        #expect(log.contains("notice: stopped"), "log:\n\(log.suffix(1500))")
        #expect(!log.contains("critical"), "log:\n\(log.suffix(1500))")
    }

    /// An RTSP client of a camera whose encoder cannot open (`h264_vaapi` with no GPU) is
    /// answered 503 at once, not left waiting for a stream that cannot come: ffprobe, which
    /// gives up after 10 s without an answer, reads the 503, and camd's log says why.
    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/dev/dri"), "needs a machine where h264_vaapi cannot open"))
    func anRTSPClientOfAnEncoderThatCannotOpenGets503() async throws {
        let port = try RunningDaemon.freePort()
        let daemon = try RunningDaemon(tcp: false, daemonLines: "rtsp = \"127.0.0.1:\(port)\"\n",
                                       cameraLines: "[camera.video]\nencoder = \"h264_vaapi\"\n")
        defer { daemon.cleanUp() }
        try await daemon.waitUntilServing()
        let probed = try await BlockingIO.run {
            try Players.run("/usr/bin/ffprobe", ["-v", "error", "-rtsp_transport", "tcp", "-timeout", "10000000",
                                                 "rtsp://127.0.0.1:\(port)/cam"])
        }
        #expect(probed.status != 0)
        #expect(probed.errors.contains("503"), "ffprobe: \(probed.errors)")
        #expect(daemon.log().contains("RTSP client of cam: no H.264 encoder could be opened: h264_vaapi"), "log:\n\(daemon.log().suffix(1500))")
    }

    @Test func aTakenRTSPPortStopsCamdWithAConfigurationError() async throws {
        let (fd, port) = try RunningDaemon.loopbackSocket(listening: true)
        defer { close(fd) }
        let daemon = try RunningDaemon(tcp: false, daemonLines: "rtsp = \"127.0.0.1:\(port)\"\n")
        defer { daemon.cleanUp() }
        let status = try await daemon.waitForExit(limit: 30)
        let log = daemon.log()
        #expect(status == 78, "camd exited with \(status); log:\n\(log.suffix(1500))")
        #expect(log.contains("RTSP cannot listen on 127.0.0.1:\(port)"), "log:\n\(log.suffix(1500))")
    }
}
