import CamdTestSupport
import CaptureSession
import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdTesting
import Testing
import VideoCore
@testable import ControlAPI

/// The live H.264 routes on a real port, read by ffmpeg as people read them: the
/// fragmented MP4 stream, the low-latency HLS playlist with its segments and parts, and
/// the live view page with its script.
@Suite struct LiveVideoRouteTests {
    func withLiveApp(_ body: @escaping @Sendable (any TestClientProtocol, Int, CaptureSession) async throws -> Void) async throws {
        let settings = CameraSettings(id: "synth", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: 30)
        let cameras = Cameras([CaptureSession(settings: settings)])
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
        let errors = try await BlockingIO.run {
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
            #expect(try await BlockingIO.run { try Players.decodeErrors(path) } == "")
            let frames = try await BlockingIO.run { try Players.frames(path) }
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
            #expect(try await BlockingIO.run { try Players.decodeErrors(path) } == "")
            let frames = try await BlockingIO.run { try Players.frames(path) }
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
