import CamdTestSupport
import CaptureSession
import Foundation
import JPEG
import Testing
import V4L2
import Video
import VideoCore

/// Recording vivid's YUYV with the H.264 stage, checked by what people play files with:
/// ffprobe counts the frames, ffmpeg decodes every one, and the colour bars come out of
/// ffmpeg's own decoder and colour conversion (the range tag decides whether black is black).
extension VividCaptureTests {
    static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, stdout: Data, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/" + tool)
        process.arguments = arguments
        let out = Pipe(), errors = Pipe()
        process.standardOutput = out
        process.standardError = errors
        try process.run()
        let stdout = out.fileHandleForReading.readAll()
        let stderr = String(decoding: errors.fileHandleForReading.readAll(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stdout, stderr)
    }

    @Test func aTenSecondRecordingOfYUYVPlaysWithEveryFrameInOrderAndTheBarsInTheirColours() async throws {
        let root = NSTemporaryDirectory() + "camd-vivid-rec-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        // 5 fps: the emulated CPU of the test VM is about 40 times slower than a real one, and
        // libx264 keeps up with 640x480 at about 10 fps there (a real 2-core machine: hundreds).
        let session = CaptureSession(settings: Self.settings(fps: 5))
        let started = await session.start()
        #expect(started.state == .running, "\(started.reason ?? "")")
        try await Task.sleep(for: .seconds(1))
        #expect(await session.status().video.framesEncoded == 0, "an idle camera encodes no H.264")
        let recorder = MovieRecorder(session: session, output: PhotoOutput(root: root))
        let captured = await session.status().framesCaptured
        _ = try await recorder.start(duration: 10)
        var status = await recorder.status()
        let deadline = ContinuousClock.now + .seconds(120)
        while status.state != .off && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            status = await recorder.status()
        }
        let capturedDuring = await session.status().framesCaptured - captured
        let encoded = await session.status().video.framesEncoded
        await session.stop()
        let movie = try #require(status.saved.first, "\(status.error ?? "no file")")
        let path = root + "/vivid/" + movie.name

        let probe = try Self.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                             "stream=codec_name,width,height,nb_read_frames,color_range", "-of", "json", path])
        let streams = try #require((try JSONSerialization.jsonObject(with: probe.stdout) as? [String: Any])?["streams"] as? [[String: Any]])
        let stream = try #require(streams.first)
        #expect(stream["codec_name"] as? String == "h264")
        #expect(stream["width"] as? Int == 640 && stream["height"] as? Int == 480)
        #expect(stream["color_range"] as? String == "tv", "vivid's YUYV is limited range and tagged so")
        let frames = Int(stream["nb_read_frames"] as? String ?? "") ?? 0
        // fps x 10: every frame the device delivered while recording.
        #expect(frames >= 48 && frames <= 51, "\(frames) frames in 10 s at 5 fps (captured \(capturedDuring), encoded \(encoded))")

        let decode = try Self.run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg: \(decode.stderr)")
        let times = try Self.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts", "-of", "json", path])
        let decoded = try #require((try JSONSerialization.jsonObject(with: times.stdout) as? [String: Any])?["frames"] as? [[String: Any]])
        let pts = decoded.compactMap { $0["pts"] as? Int }
        #expect(pts.count == frames && zip(pts, pts.dropFirst()).allSatisfy { $0 < $1 }, "timestamps increase")

        // Frame 5 s in, as a player shows it: RGB from ffmpeg's decoder and its own range handling.
        let still = try Self.run("ffmpeg", ["-v", "error", "-ss", "5", "-i", path, "-frames:v", "1", "-c:v", "mjpeg", "-q:v", "2",
                                            "-f", "image2pipe", "-"])
        let (size, colours) = try Vivid.barColours([UInt8](still.stdout))
        #expect(size == FrameSize(width: 640, height: 480))
        Vivid.expectBars(colours)
    }
}
