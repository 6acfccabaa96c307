import CamdTestSupport
import Client
import Foundation
import Testing
import Video
import VideoCore

/// `camctl record`, as a user runs it: through camd when camd runs and owns the camera,
/// and opening the camera itself when told not to use camd.
@Suite struct RecordCommandTests {
    @Test func recordsThroughCamdAndKeepsTheMovieInItsMedia() async throws {
        let daemon = try RunningDaemon(tcp: false)
        defer { daemon.cleanUp() }
        try await daemon.waitUntilServing()
        let output = daemon.folder + "/clip.mp4"
        let result = try await onOwnThread { try RunningDaemon.camctl(["record", "--socket", daemon.socketPath, "--duration", "2s", "-o", output]) }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("kept in camd's media"), "\(result.stderr)")
        let info = try VideoFile(path: output).info
        #expect(info.size == FrameSize(width: 320, height: 240))
        #expect(abs(info.duration - 2) < 0.3, "\(info.duration) s")
        let listed = try DaemonClient(socketPath: daemon.socketPath).request("GET", "/v1/media?kind=video").text
        #expect(listed.contains(".mp4"))
    }

    @Test func withoutCamdItOpensTheCameraItselfAndLeavesNothingElse() async throws {
        let folder = NSTemporaryDirectory() + "camctl-record-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await onOwnThread {
            try RunningDaemon.camctl(["record", "-d", "testsrc", "--size", "160x120", "--duration", "1", "-o", folder + "/a.mp4"])
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try VideoFile(path: folder + "/a.mp4").info.size == FrameSize(width: 160, height: 120))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["a.mp4"], "no temporary folder is left")
        let refused = try await onOwnThread { try RunningDaemon.camctl(["record", "-d", "testsrc", "--duration", "soon", "-o", folder + "/b.mp4"]) }
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--duration"))
    }
}
