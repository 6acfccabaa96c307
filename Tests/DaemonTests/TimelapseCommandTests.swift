import CamdTestSupport
import Client
import Foundation
import JPEG
import Testing
import Video
import VideoCore
#if canImport(Glibc)
import Glibc
#endif

/// `camctl timelapse`, as a user runs it against a real camd: the movie is downloaded with
/// one frame per photo, progress goes to stderr, and Ctrl-C cancels the job in camd.
@Suite struct TimelapseCommandTests {
    /// Writes `count` JPEGs into camd's photo folder for camera "cam", a second apart, as a
    /// previous run would have left them: camd indexes its folder on first use.
    static func leavePhotos(_ count: Int, in daemon: RunningDaemon, size: FrameSize) throws {
        let folder = daemon.folder + "/photos/cam"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var image = YUVImage(size: size, subsampling: .s420)
        image.fill(Geometry.Color(red: 90, green: 160, blue: 220))
        let jpeg = Data(try JPEGEncoder().compress(image, quality: 85))
        for index in 0..<count {
            let path = folder + "/cam-old-\(String(format: "%06d", index)).jpg"
            try jpeg.write(to: URL(fileURLWithPath: path))
            let stamp = timespec(tv_sec: 1_700_000_000 + index, tv_nsec: 0)
            _ = utimensat(AT_FDCWD, path, [stamp, stamp], 0)
        }
    }

    /// Whether camd runs a timelapse that has rendered a frame.
    static func aJobIsUnderWay(_ client: DaemonClient) throws -> Bool {
        let jobs = try JSONSerialization.jsonObject(with: Data(client.request("GET", "/v1/timelapses").body)) as? [[String: Any]] ?? []
        return jobs.contains { $0["state"] as? String == "running" && ($0["frames_done"] as? Int ?? 0) > 0 }
    }

    static func nonPhotos(_ daemon: RunningDaemon) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: daemon.folder + "/photos/cam")) ?? []).filter { !$0.hasSuffix(".jpg") }
    }

    @Test func downloadsTheMovieWithOneFrameForEachPhotoAndShowsProgress() async throws {
        let daemon = try RunningDaemon(tcp: false)
        defer { daemon.cleanUp() }
        try Self.leavePhotos(20, in: daemon, size: FrameSize(width: 320, height: 240))
        try await daemon.waitUntilServing()
        let output = daemon.folder + "/movie.mp4"
        let result = try await onOwnThread {
            try RunningDaemon.camctl(["timelapse", "cam", "--socket", daemon.socketPath, "--fps", "10", "--size", "160x120",
                                           "-o", output])
        }
        #expect(result.status == 0, "\(result.stderr)")
        // Not a terminal: a plain line every tenth of the way, ending at all frames.
        #expect(result.stderr.contains("timelapse: 20 / 20 frames"), "\(result.stderr)")
        #expect(result.stderr.contains("kept in camd's media as cam-timelapse-"), "\(result.stderr)")
        let info = try VideoFile(path: output).info
        #expect(info.size == FrameSize(width: 160, height: 120))
        #expect(abs(info.duration - 2) < 0.01, "20 frames at 10 fps: \(info.duration) s")

        let refused = try await onOwnThread {
            try RunningDaemon.camctl(["timelapse", "cam", "--socket", daemon.socketPath, "--fps", "0", "-o", output])
        }
        #expect(refused.status == 64 && refused.stderr.contains("fps"), "\(refused.stderr)")
        let none = try await onOwnThread {
            try RunningDaemon.camctl(["timelapse", "cam", "--socket", daemon.socketPath, "--since", "2030-01-01T00:00:00Z", "-o", output])
        }
        #expect(none.status == 64 && none.stderr.contains("no photos"), "\(none.stderr)")
    }

    @Test func ctrlCCancelsTheJobInCamdAndLeavesNoFile() async throws {
        let daemon = try RunningDaemon(tcp: false)
        defer { daemon.cleanUp() }
        try Self.leavePhotos(400, in: daemon, size: FrameSize(width: 1280, height: 720))
        try await daemon.waitUntilServing()
        let output = daemon.folder + "/movie.mp4"
        let (status, stderr) = try await onOwnThread { () throws -> (Int32, String) in
            let process = Process()
            process.executableURL = try RunningDaemon.executable("camctl")
            process.arguments = ["timelapse", "cam", "--socket", daemon.socketPath, "-o", output]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            // Ctrl-C once camd has rendered some frames.
            let client = DaemonClient(socketPath: daemon.socketPath)
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, !(try Self.aJobIsUnderWay(client)) { Thread.sleep(forTimeInterval: 0.02) }
            kill(process.processIdentifier, SIGINT)
            let text = String(decoding: errors.fileHandleForReading.readAll(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
        #expect(status == 130, "\(stderr)")
        #expect(stderr.contains("cancelled"), "\(stderr)")
        let jobs = try DaemonClient(socketPath: daemon.socketPath).request("GET", "/v1/timelapses").text
        #expect(jobs.contains("\"state\" : \"cancelled\""), "\(jobs)")
        #expect(Self.nonPhotos(daemon).isEmpty, "\(Self.nonPhotos(daemon))")
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
