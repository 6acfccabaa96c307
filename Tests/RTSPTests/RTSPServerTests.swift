import CamdTestSupport
import CaptureSession
import Foundation
@testable import RTSP
import Testing
import VideoCore

/// The RTSP server on a real port with the synthetic camera, read by ffprobe and ffmpeg as
/// recorders (Frigate, go2rtc) and players (VLC's libavformat cousin) read it.
@Suite(.serialized) struct RTSPServerTests {
    static let size = FrameSize(width: 320, height: 240)

    func withServer(token: String? = nil, viewToken: String? = nil, _ body: @Sendable (RTSPServer, CaptureSession) async throws -> Void) async throws {
        let session = CaptureSession(settings: CameraSettings(id: "synth", device: FrameSources.syntheticName, size: Self.size, fps: 30))
        await session.start()
        let server = RTSPServer(configuration: .init(host: "127.0.0.1", port: 0, token: token, viewToken: viewToken), cameras: [session])
        try server.start()
        #expect(server.port > 0)
        var failure: (any Error)?
        do { try await body(server, session) } catch { failure = error }
        server.stop()
        await session.stop()
        if let failure { throw failure }
    }

    static func url(_ server: RTSPServer, credentials: String = "") -> String {
        "rtsp://\(credentials)127.0.0.1:\(server.port)/synth"
    }

    /// What ffprobe says of the stream: `codec,width,height`, or its errors.
    static func probe(_ url: String) async throws -> (stream: String, errors: String) {
        let result = try await BlockingIO.run {
            try Players.run("/usr/bin/ffprobe", ["-v", "error", "-rtsp_transport", "tcp", "-select_streams", "v:0",
                                                 "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", url])
        }
        return (result.output.trimmingCharacters(in: .whitespacesAndNewlines), result.errors)
    }

    /// `ffmpeg -rtsp_transport TRANSPORT -i URL -t SECONDS -f null -`: the errors it printed
    /// (empty when every frame decoded clean) and how many frames it decoded. The decoded
    /// frames keep RTP's 90 kHz times (`-enc_time_base -1`): in ticks of the nominal 1/30 s,
    /// two frames captured a little early and late on a loaded machine would share one, which
    /// the null muxer reports as an error of its own.
    static func read(_ url: String, transport: String = "tcp", seconds: Int) async throws -> (errors: String, frames: Int) {
        let result = try await BlockingIO.run {
            try Players.run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-stats", "-rtsp_transport", transport, "-i", url,
                                                "-t", String(seconds), "-enc_time_base", "-1", "-f", "null", "-"])
        }
        // -stats writes progress lines ("frame=  150 fps= 30 ...") beside the errors.
        let lines = result.errors.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map(String.init)
        let errors = lines.filter { !$0.hasPrefix("frame=") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        let frames = lines.last { $0.hasPrefix("frame=") }.flatMap { line in
            Int(line.dropFirst("frame=".count).drop { $0 == " " }.prefix { $0.isNumber })
        } ?? 0
        return ((result.status == 0 ? "" : "exit \(result.status): ") + errors.joined(separator: "\n"), frames)
    }

    /// Waits up to `seconds` for `condition`, checking every 100 ms.
    static func eventually(_ seconds: Double = 5, _ condition: @Sendable () async -> Bool) async -> Bool {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < end {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return await condition()
    }

    @Test func ffprobeSeesH264AtTheCamerasSize() async throws {
        try await withServer { server, _ in
            let probed = try await Self.probe(Self.url(server))
            #expect(probed.errors == "")
            #expect(probed.stream == "h264,320,240")
        }
    }

    @Test func ffmpegReadsFiveSecondsOverTCPWithoutADecodeError() async throws {
        try await withServer { server, session in
            let read = try await Self.read(Self.url(server), seconds: 5)
            #expect(read.errors == "", "ffmpeg: \(read.errors)")
            let captured = await session.status().measuredFPS * 5
            #expect(Double(read.frames) >= 0.8 * captured, "\(read.frames) frames in 5 s, \(captured) captured")
            // The client's media is unprepared when it leaves, and so the camera's H.264 stops.
            #expect(await Self.eventually { await session.status().video.consumers == 0 }, "the stage still has the client")
            #expect(server.counters["synth"]?.clients == 0)
            #expect(server.counters["synth"]?.framesSent ?? 0 >= read.frames)
        }
    }

    @Test func ffmpegReadsOverUDPToo() async throws {
        try await withServer { server, _ in
            let read = try await Self.read(Self.url(server), transport: "udp", seconds: 3)
            #expect(read.errors == "", "ffmpeg: \(read.errors)")
            #expect(read.frames > 30)
        }
    }

    @Test func twoClientsAtOnceShareOneEncode() async throws {
        try await withServer { server, session in
            #expect(await session.status().video.framesEncoded == 0, "nothing encodes before a client")
            async let first = Self.read(Self.url(server), seconds: 4)
            async let second = Self.read(Self.url(server), seconds: 4)
            let sawBoth = await Self.eventually(10) { server.counters["synth"]?.clients == 2 }
            let consumers = await session.status().video.consumers
            let (a, b) = try await (first, second)
            #expect(sawBoth, "two RTSP clients at once")
            #expect(consumers == 2, "both clients are consumers of the one stage")
            #expect(a.errors == "" && b.errors == "", "ffmpeg: \(a.errors) \(b.errors)")
            #expect(await Self.eventually { await session.status().video.consumers == 0 })
            // One encode for both: the stage encoded about one stream's frames, not two.
            let encoded = await session.status().video.framesEncoded
            let longest = max(a.frames, b.frames)
            #expect(a.frames > 60 && b.frames > 60, "\(a.frames) and \(b.frames) frames")
            #expect(encoded >= longest && Double(encoded) <= Double(longest) * 1.3 + 30,
                    "\(encoded) frames encoded for clients of \(a.frames) and \(b.frames)")
        }
    }

    @Test func withATokenNoCredentialsGet401AndTheTokenAsPasswordWorks() async throws {
        try await withServer(token: "s3cret-token") { server, _ in
            let anonymous = try await Self.probe(Self.url(server))
            #expect(anonymous.stream == "")
            #expect(anonymous.errors.contains("401"), "\(anonymous.errors)")
            let wrong = try await Self.probe(Self.url(server, credentials: "u:wrong@"))
            #expect(wrong.errors.contains("401"), "\(wrong.errors)")
            let right = try await Self.probe(Self.url(server, credentials: "u:s3cret-token@"))
            #expect(right.errors == "")
            #expect(right.stream == "h264,320,240")
            let anyUser = try await Self.probe(Self.url(server, credentials: "frigate:s3cret-token@"))
            #expect(anyUser.stream == "h264,320,240")
        }
    }

    @Test func theViewerTokenIsAPasswordToo() async throws {
        try await withServer(token: "s3cret-token", viewToken: "v1ew-token") { server, _ in
            let viewer = try await Self.probe(Self.url(server, credentials: "viewer:v1ew-token@"))
            #expect(viewer.errors == "")
            #expect(viewer.stream == "h264,320,240")
            let full = try await Self.probe(Self.url(server, credentials: "u:s3cret-token@"))
            #expect(full.stream == "h264,320,240")
            let wrong = try await Self.probe(Self.url(server, credentials: "u:v1ew-tokenx@"))
            #expect(wrong.errors.contains("401"), "\(wrong.errors)")
        }
    }

    @Test func aCameraThatIsNotMountedIsNotFound() async throws {
        try await withServer { server, _ in
            let probed = try await Self.probe("rtsp://127.0.0.1:\(server.port)/nocamera")
            #expect(probed.stream == "")
            #expect(probed.errors.contains("404"), "\(probed.errors)")
        }
    }

    @Test func aTakenPortSaysWhatToDo() async throws {
        try await withServer { server, session in
            let second = RTSPServer(configuration: .init(host: "127.0.0.1", port: server.port, token: nil), cameras: [session])
            #expect {
                try second.start()
            } throws: { error in
                let description = String(describing: error)
                return description.contains("RTSP cannot listen on 127.0.0.1:\(server.port)") && description.contains("choose another address or port")
            }
        }
    }

    @Test func theTokenIsThePasswordOfAnyUser() {
        func basic(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
        #expect(RTSPTokenAuth.accepts(basic: basic("u:tok"), password: "tok"))
        #expect(RTSPTokenAuth.accepts(basic: basic(":tok"), password: "tok"))
        #expect(RTSPTokenAuth.accepts(basic: basic("a:b:tok"), password: "b:tok"), "the password is what follows the first colon")
        #expect(!RTSPTokenAuth.accepts(basic: basic("u:to"), password: "tok"))
        #expect(!RTSPTokenAuth.accepts(basic: basic("u:tokk"), password: "tok"))
        #expect(!RTSPTokenAuth.accepts(basic: basic("tok"), password: "tok"))
        #expect(!RTSPTokenAuth.accepts(basic: "not base64!", password: "tok"))
    }
}
