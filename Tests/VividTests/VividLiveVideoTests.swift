import CamdTestSupport
import CaptureSession
import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VideoCore

/// vivid's live H.264 over HTTP, read by ffmpeg as a player reads it: five seconds that
/// decode clean from a keyframe, with time going forward and no frame the camera captured lost.
extension VividCaptureTests {
    @Test func ffmpegReadsFiveSecondsOfTheLiveStreamWithEveryFrameCaptured() async throws {
        // 5 fps: libx264 keeps up with 640x480 at about 10 fps on the VM's emulated CPU.
        let cameras = Cameras([CaptureSession(settings: Self.settings(fps: 5))])
        let session = cameras.sessions[0]
        let started = await session.start()
        #expect(started.state == .running, "\(started.reason ?? "")")
        let root = NSTemporaryDirectory() + "camd-vivid-live-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let app = Application(router: buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test"))),
                              configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let path = root + "-live.mp4"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let errors = try await onOwnThread {
                try Players.run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", "http://127.0.0.1:\(port)/v1/cameras/vivid/video",
                                                    "-t", "5", "-c", "copy", "-y", path]).errors
            }
            #expect(errors == "")
            let captured = await session.status().measuredFPS * 5
            #expect(try await Players.decodeErrors(path) == "")
            let frames = try await Players.frames(path)
            #expect(frames.first?.isKeyframe == true)
            #expect(Double(frames.count) >= 0.9 * captured, "\(frames.count) frames in 5 s; the camera captured \(captured)")
            #expect(zip(frames, frames.dropFirst()).allSatisfy { $1.time > $0.time }, "timestamps go forward")
            let live = await session.status().video.live
            #expect(live.drops == 0, "a client that keeps up loses nothing")
        }
        await session.stop()
    }
}
