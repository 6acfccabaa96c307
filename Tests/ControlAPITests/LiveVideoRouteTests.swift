import CamdTestSupport
@testable import CaptureSession
import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdTesting
import Testing
import Video
import VideoCore
@testable import ControlAPI

/// The live H.264 routes on a real port, read by ffmpeg as people read them: the
/// fragmented MP4 stream, the low-latency HLS playlist with its segments and parts, and
/// the live view page with its script.
@Suite struct LiveVideoRouteTests {
    func withLiveApp(size: FrameSize = FrameSize(width: 320, height: 240), noise: Bool = false, video: VideoSettings = VideoSettings(),
                     _ body: @escaping @Sendable (any TestClientProtocol, Int, CaptureSession) async throws -> Void) async throws {
        let settings = CameraSettings(id: "synth", device: FrameSources.syntheticName, size: size, fps: 30, video: video)
        let cameras = Cameras([noise ? CaptureSession(settings: settings, openSource: NoiseSource.opener) : CaptureSession(settings: settings)])
        await cameras.sessions[0].start()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-live-routes-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let app = Application(router: buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test"))),
                              configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in try await body(client, try #require(client.port), cameras.sessions[0]) }
        await cameras.sessions[0].stop()
    }

    /// `ffmpeg -i URL -t SECONDS -c copy` into a file: what a player received, to probe.
    static func capture(_ url: String, seconds: Double) async throws -> String {
        let path = NSTemporaryDirectory() + "camd-live-\(UUID().uuidString).mp4"
        let errors = try await onOwnThread {
            try Players.run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", url, "-t", String(seconds), "-c", "copy", "-y", path]).errors
        }
        #expect(errors == "", "ffmpeg reading \(url): \(errors)")
        return path
    }

    @Test func ffmpegReadsFiveSecondsOfTheLiveStreamFromAKeyframeWithTimeGoingForward() async throws {
        try await withLiveApp { client, port, session in
            let path = try await Self.capture("http://127.0.0.1:\(port)/v1/cameras/synth/video", seconds: 5)
            defer { try? FileManager.default.removeItem(atPath: path) }
            // The camera's own rate (a loaded machine captures fewer than 30 a second): 5 s of it.
            let captured = await session.status().measuredFPS * 5
            #expect(try await Players.decodeErrors(path) == "")
            let frames = try await Players.frames(path)
            #expect(frames.first?.isKeyframe == true)
            #expect(Double(frames.count) >= 0.9 * captured, "\(frames.count) frames of 5 s, \(captured) captured in 5 s")
            #expect(zip(frames, frames.dropFirst()).allSatisfy { $1.time > $0.time }, "timestamps go forward")
            let live = await session.status().video.live
            #expect(live.framesSent >= frames.count)
            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            #expect(metrics.contains("camd_live_video_frames_sent_total{camera=\"synth\"} \(live.framesSent)\n"))
            let latencies = metrics.split(separator: "\n").first { $0.hasPrefix("camd_video_latency_seconds_count{camera=\"synth\"}") }
            #expect((latencies?.split(separator: " ").last).flatMap { Int($0) } ?? 0 >= frames.count, "every frame sent was timed")
        }
    }

    @Test func aClientThatStopsReadingForTenSecondsGoesOnFromAKeyframeAndTheOtherNeverStalls() async throws {
        // Noise: a megabyte or more a second, as a real camera's grain gives, where the
        // synthetic bars give kilobytes. Ten seconds of it fill the paused client's TCP window
        // and camd's socket buffers, so camd's writes to it block and its queue must drop.
        try await withLiveApp(noise: true) { _, port, session in
            let path = "/v1/cameras/synth/video"
            let reader = try RawStreamClient(port: port, path: path)
            let paused = try RawStreamClient(port: port, path: path, receiveBuffer: 16384)
            await RawStreamClient.read([reader, paused], for: 2)
            let framesBefore = reader.fragments
            let encoded = await session.status().video.framesEncoded
            // The paused client reads nothing for 10 s while the other reads on.
            await RawStreamClient.read([reader], for: 10)
            let encodedInPause = await session.status().video.framesEncoded - encoded
            let readInPause = reader.fragments - framesBefore
            await RawStreamClient.read([reader, paused], for: 4)

            #expect(encodedInPause > 100, "\(encodedInPause) frames encoded in 10 s")
            #expect(Double(readInPause) >= 0.9 * Double(encodedInPause),
                    "the reading client got \(readInPause) of the \(encodedInPause) frames encoded while the other did not read")
            let live = await session.status().video.live
            #expect(live.clients.count == 2)
            #expect(live.clients.contains { $0.drops >= 1 && $0.framesDropped > 0 },
                    "camd dropped the paused client's queue: \(live.clients), \(paused.received.count) bytes received")
            #expect(live.clients.contains { $0.drops == 0 }, "and never the reading client's")

            // What the paused client received plays from its start to its end, with a jump
            // in time where its queue was dropped, landing on a keyframe.
            let file = NSTemporaryDirectory() + "camd-paused-\(UUID().uuidString).mp4"
            defer { try? FileManager.default.removeItem(atPath: file) }
            try paused.writeBody(to: file)
            #expect(try await Players.decodeErrors(file) == "")
            let frames = try await Players.frames(file)
            let jumps = zip(frames, frames.dropFirst()).filter { $1.time - $0.time > 1 }
            #expect(!jumps.isEmpty, "the paused client lost the frames of its pause")
            #expect(jumps.allSatisfy { $0.1.isKeyframe }, "it went on from a keyframe: \(jumps)")
            let resumed = frames.drop { $0.time <= (jumps.last?.0.time ?? .infinity) }
            #expect(resumed.count >= 30, "and read on for the last seconds: \(resumed.count) frames")
        }
    }

    @Test func twentyClientsAt720pShareOneEncodeAndEachGetsEveryFrame() async throws {
        try await withLiveApp(size: FrameSize(width: 1280, height: 720)) { _, port, session in
            let clients = try (0..<20).map { _ in try RawStreamClient(port: port, path: "/v1/cameras/synth/video") }
            await RawStreamClient.read(clients, for: 2)
            let before = await session.status()
            let counts = clients.map(\.fragments)
            await RawStreamClient.read(clients, for: 5)
            let after = await session.status()
            let encoded = after.video.framesEncoded - before.video.framesEncoded
            let captured = after.framesCaptured - before.framesCaptured
            let received = zip(clients, counts).map { $0.fragments - $1 }
            // One encode for all: the stage encoded each frame at most once, not once a client
            // (a loaded machine encodes fewer than it captures; scripts/bench/live.py has the rates).
            #expect(encoded > 0 && Double(encoded) <= Double(captured) * 1.05 + 2, "\(encoded) frames encoded for \(captured) captured")
            // Every client got (nearly) every frame encoded in the window: none fell behind.
            #expect(received.allSatisfy { Double($0) >= Double(encoded) * 0.9 }, "frames each client received: \(received), encoded \(encoded)")
            #expect(after.video.live.clients.allSatisfy { $0.drops == 0 }, "\(after.video.live.clients)")
            #expect(after.video.live.clients.count == 20)
        }
    }

    /// A live client of a camera whose encoder cannot open is answered 503 with the
    /// encoder's reason as soon as it fails, not after the start timeout; the next tries again.
    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/dev/dri"), "needs a machine where h264_vaapi cannot open"))
    func aLiveClientOfAnEncoderThatCannotOpenGetsTheReason() async throws {
        try await withLiveApp(video: VideoSettings(encoder: VideoEncoderSettings(encoder: .vaapi))) { client, _, session in
            for _ in 0..<2 {
                try await client.execute(uri: "/v1/cameras/synth/video", method: .get) { response in
                    #expect(response.status == .serviceUnavailable)
                    let body = String(buffer: response.body)
                    #expect(body.contains("no H.264 video:") && body.contains("VA-API"), "\(body)")
                }
            }
            #expect(await session.status().video.running == false)
        }
    }

    @Test func gstreamerDecodesTheLiveStream() async throws {
        try await withLiveApp { _, port, _ in
            // souphttpsrc and qtdemux (plugins-good) and avdec_h264 (gstreamer1.0-libav), as scripts/install-deps installs them.
            let result = try await onOwnThread {
                try Players.run("/usr/bin/gst-launch-1.0", ["souphttpsrc", "location=http://127.0.0.1:\(port)/v1/cameras/synth/video", "is-live=true",
                                                            "!", "qtdemux", "!", "avdec_h264", "!", "fakesink", "num-buffers=60"])
            }
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.contains("Got EOS"), "60 frames decoded: \(result.output.suffix(300))")
        }
    }

    @Test func ffmpegPlaysTheHLSPlaylistAndABlockingReloadWaitsForTheNextPart() async throws {
        try await withLiveApp { client, port, _ in
            let playlist = try await client.execute(uri: "/v1/cameras/synth/hls/live.m3u8", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/vnd.apple.mpegurl")
                return String(buffer: response.body)
            }
            #expect(playlist.hasPrefix("#EXTM3U\n"))
            #expect(playlist.contains("#EXT-X-MAP:URI=\"init.mp4\""))
            #expect(playlist.contains("#EXT-X-PART-INF:PART-TARGET="))
            #expect(playlist.contains("URI=\"0.0.m4s\",INDEPENDENT=YES"), "\(playlist)")

            // The next part, asked for before it exists: the request is held until it is complete.
            let hinted = try #require(playlist.split(separator: "\n").first { $0.hasPrefix("#EXT-X-PRELOAD-HINT") })
            let uri = try #require(hinted.split(separator: "\"").dropFirst().first)
            let numbers = uri.dropLast(4).split(separator: ".").compactMap { Int($0) }
            let reloaded = try await client.execute(uri: "/v1/cameras/synth/hls/live.m3u8?_HLS_msn=\(numbers[0])&_HLS_part=\(numbers[1])",
                                                    method: .get) { String(buffer: $0.body) }
            #expect(reloaded.contains("URI=\"\(uri)\""), "the blocking reload lists the part it waited for")
            let part = try await client.execute(uri: "/v1/cameras/synth/hls/\(uri)", method: .get) { response in
                #expect(response.status == .ok)
                return Array(response.body.readableBytesView)
            }
            #expect(part.count > 100)
            try await client.execute(uri: "/v1/cameras/synth/hls/live.m3u8?_HLS_msn=9999", method: .get) { #expect($0.status == .badRequest) }
            try await client.execute(uri: "/v1/cameras/synth/hls/0.x.m4s", method: .get) { #expect($0.status == .notFound) }

            let path = try await Self.capture("http://127.0.0.1:\(port)/v1/cameras/synth/hls/live.m3u8", seconds: 3)
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(try await Players.decodeErrors(path) == "")
            let frames = try await Players.frames(path)
            #expect(frames.first?.isKeyframe == true)
            #expect(frames.count >= 80, "\(frames.count) frames of 3 s")
        }
    }

    @Test func theLiveViewPageAndItsScriptComeFromCamdWithAPolicyAllowingOnlyThem() async throws {
        try await withLiveApp { client, _, _ in
            try await client.execute(uri: "/cameras/synth/live", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                let policy = response.headers[HTTPField.Name("Content-Security-Policy")!] ?? ""
                #expect(policy.contains("script-src 'self'") && policy.contains("default-src 'none'"))
                let html = String(buffer: response.body)
                #expect(html.contains("data-camera=\"synth\"") && html.contains("<script src=\"/assets/camd-live.js\">"))
                #expect(!html.contains("data-mode"))
            }
            try await client.execute(uri: "/cameras/synth/live?mode=mjpeg", method: .get) {
                #expect(String(buffer: $0.body).contains("data-mode=\"mjpeg\""))
            }
            try await client.execute(uri: "/cameras/synth/live?mode=flash", method: .get) { #expect($0.status == .badRequest) }
            try await client.execute(uri: "/cameras/nope/live", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/assets/camd-live.js", method: .get) { response in
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                let script = String(buffer: response.body)
                #expect(script.contains("new MediaSource()") && script.contains("/stream"))
                #expect(!script.contains("http://") && !script.contains("https://"), "nothing is fetched from elsewhere")
            }
        }
    }
}
