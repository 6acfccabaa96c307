import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import JPEG
import Testing
import VideoCore

/// The routes against real sessions on the synthetic source (labelled as such);
/// the vivid suite drives the same routes with curl on a real driver.
@Suite struct RouteTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-routes-\(UInt32.random(in: 0...UInt32.max))").path

    func app(autostart: Bool = true) async -> (some ApplicationProtocol, Cameras) {
        let settings = CameraSettings(id: "synth", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: 30)
        let cameras = Cameras([CaptureSession(settings: settings)])
        if autostart { await cameras.sessions[0].start() }
        let router = buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test")))
        return (Application(router: router), cameras)
    }

    func json(_ buffer: ByteBuffer) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any])
    }

    func errorCode(_ buffer: ByteBuffer) throws -> String? {
        (try json(buffer)["error"] as? [String: Any])?["code"] as? String
    }

    /// `started_at` is written without ICU; it must read as ISO8601DateFormatter writes it.
    @Test(arguments: [0, 1_795_734_944.75, 951_782_400, 4_102_444_799])
    func startedAtIsISO8601InUTC(seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(DaemonInfo.iso8601UTC(date) == ISO8601DateFormatter().string(from: date))
    }

    @Test func statusListsCameras() async throws {
        let (app, cameras) = await app()
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/status", method: .get) { response in
                #expect(response.status == .ok)
                let body = try json(response.body)
                #expect(body["version"] as? String == "test")
                // When camd started, in ISO 8601 (UTC), within the last minute.
                let started = try #require(body["started_at"] as? String)
                let date = try #require(ISO8601DateFormatter().date(from: started), "started_at \(started)")
                #expect(started.hasSuffix("Z") && abs(date.timeIntervalSinceNow) < 60)
                let list = try #require(body["cameras"] as? [[String: Any]])
                #expect(list.first?["id"] as? String == "synth")
                #expect(list.first?["state"] as? String == "running")
            }
            try await client.execute(uri: "/v1/cameras/synth", method: .get) { response in
                let body = try json(response.body)
                #expect((body["settings"] as? [String: Any])?["size"] as? String == "320x240")
            }
        }
        await cameras.sessions[0].stop()
    }

    @Test func errorsAreJSONWithTheRightStatus() async throws {
        let (app, cameras) = await app()
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/cameras/nope", method: .get) { response in
                #expect(response.status == .notFound)
                let code = try errorCode(response.body)
                #expect(code == "unknown_camera")
            }
            try await client.execute(uri: "/v1/nothing-here", method: .get) { response in
                #expect(response.status == .notFound)
                let code = try errorCode(response.body)
                #expect(code == "not_found")
            }
            try await client.execute(uri: "/v1/cameras/synth/configure", method: .post, body: ByteBuffer(string: "{not json")) { response in
                #expect(response.status == .badRequest)
                let code = try errorCode(response.body)
                #expect(code == "bad_json")
            }
            for (body, field) in [(#"{"fps": "fast"}"#, "fps"), (#"{"quality": 0}"#, "quality"), (#"{"size": "12x"}"#, "size"),
                                  (#"{"fsp": 5}"#, "fsp"), (#"{"photos": {"keep_count": -1}}"#, "photos.keep_count"),
                                  (#"{"autostart": 1}"#, "autostart")] {
                try await client.execute(uri: "/v1/cameras/synth/configure", method: .post, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest, "\(body)")
                    let message = (try json(response.body)["error"] as? [String: Any])?["message"] as? String ?? ""
                    #expect(message.contains(field), "\(message) should name \(field)")
                }
            }
            try await client.execute(uri: "/v1/cameras/synth/snapshot?max_age_ms=-4", method: .get) { response in
                #expect(response.status == .badRequest)
            }
            let huge = ByteBuffer(string: "{\"device\": \"" + String(repeating: "x", count: 100_000) + "\"}")
            try await client.execute(uri: "/v1/cameras/synth/configure", method: .post, body: huge) { response in
                #expect(response.status == .contentTooLarge)
            }
        }
        // Nothing bad was applied.
        #expect(await cameras.sessions[0].settings.quality == 85)
        await cameras.sessions[0].stop()
    }

    @Test func snapshotIsAFreshJPEGWithFrameHeaders() async throws {
        let (app, cameras) = await app()
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/cameras/synth/snapshot?max_age_ms=0", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/jpeg")
                #expect(response.headers[HTTPField.Name("X-Frame-Size")!] == "320x240")
                #expect(Int(response.headers[HTTPField.Name("X-Frame-Sequence")!] ?? "") ?? 0 > 0)
                let jpeg = Array(response.body.readableBytesView)
                let size = try JPEGDecoder().header(jpeg).size
                #expect(size == FrameSize(width: 320, height: 240))
            }
        }
        await cameras.sessions[0].stop()
    }

    @Test func configureWhileRunningAndStartStop() async throws {
        let (app, cameras) = await app()
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/cameras/synth/configure", method: .post,
                                     body: ByteBuffer(string: #"{"size": "640x480", "quality": 70}"#)) { response in
                #expect(response.status == .ok)
                let body = try json(response.body)
                #expect(body["size"] as? String == "640x480")
                #expect(body["quality"] as? Int == 70)
                #expect(body["state"] as? String == "running")
            }
            try await client.execute(uri: "/v1/cameras/synth/stop", method: .post) { response in
                let state = try json(response.body)["state"] as? String
                #expect(state == "idle")
            }
            try await client.execute(uri: "/v1/cameras/synth/start", method: .post) { response in
                let state = try json(response.body)["state"] as? String
                #expect(state == "running")
            }
        }
        await cameras.sessions[0].stop()
    }

    @Test func photosAreSavedListedServedAndDeleted() async throws {
        let (app, cameras) = await app()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await app.test(.router) { client in
            let name = try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post) { response in
                #expect(response.status == .created)
                let record = try json(response.body)
                #expect(record["camera"] as? String == "synth")
                return try #require(record["name"] as? String)
            }
            try await client.execute(uri: "/v1/photos?camera=synth", method: .get) { response in
                let list = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [[String: Any]])
                #expect(list.map { $0["name"] as? String } == [name])
            }
            try await client.execute(uri: "/v1/photos/\(name)", method: .get) { response in
                #expect(response.status == .ok)
                let width = try JPEGDecoder().header(Array(response.body.readableBytesView)).size.width
                #expect(width == 320)
            }
            for bad in ["..", "%2E%2E", "x.png", ".hidden.jpg"] {
                try await client.execute(uri: "/v1/photos/\(bad)", method: .get) { response in
                    #expect(response.status == .badRequest || response.status == .notFound, "\(bad)")
                    let code = try errorCode(response.body)
                #expect(code != nil)
                }
            }
            try await client.execute(uri: "/v1/photos/\(name)", method: .delete) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/v1/photos/\(name)", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
        await cameras.sessions[0].stop()
    }

    @Test func metricsAreValidPrometheusText() async throws {
        let (app, cameras) = await app()
        _ = try await cameras.sessions[0].snapshot()
        try await app.test(.router) { client in
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
                let text = String(buffer: response.body)
                var declared = Set<String>()
                for line in text.split(separator: "\n") {
                    if line.hasPrefix("# TYPE ") { declared.insert(String(line.split(separator: " ")[2])) ; continue }
                    if line.hasPrefix("#") { continue }
                    // name{labels} value: the value parses and the family was declared.
                    let parts = line.split(separator: " ")
                    #expect(parts.count == 2 && Double(parts[1]) != nil, "bad sample line: \(line)")
                    let name = String(parts[0].prefix { $0 != "{" })
                    let family = ["_bucket", "_sum", "_count"].reduce(name) { $0.hasSuffix($1) ? String($0.dropLast($1.count)) : $0 }
                    #expect(declared.contains(name) || declared.contains(family), "undeclared \(name)")
                }
                #expect(text.contains("camd_frames_captured_total{camera=\"synth\"}"))
                #expect(text.contains("camd_encode_seconds_bucket{camera=\"synth\",le=\"+Inf\"}"))
            }
        }
        await cameras.sessions[0].stop()
    }

    func errorMessage(_ buffer: ByteBuffer) throws -> String {
        (try json(buffer)["error"] as? [String: Any])?["message"] as? String ?? ""
    }

    /// Settings the camera could never run with are refused up front; the camera keeps
    /// running with the settings it had.
    @Test func configureRefusesADeviceOrFormatThatCannotWork() async throws {
        let (app, cameras) = await app()
        let before = await cameras.sessions[0].settings
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/cameras/synth/configure", method: .post,
                                     body: ByteBuffer(string: #"{"format": "MJPG"}"#)) { response in
                #expect(response.status == .badRequest)
                #expect(try errorCode(response.body) == "invalid_settings")
                let message = try errorMessage(response.body)
                #expect(message.contains("format MJPG") && message.contains("it offers YUYV"), "\(message)")
            }
            for device in ["/dev/null", "/etc/passwd"] {
                try await client.execute(uri: "/v1/cameras/synth/configure", method: .post,
                                         body: ByteBuffer(string: #"{"device": "\#(device)", "quality": 50}"#)) { response in
                    #expect(response.status == .badRequest, "\(device)")
                    let message = try errorMessage(response.body)
                    #expect(message.hasPrefix("device \"\(device)\""), "\(message)")
                }
            }
            try await client.execute(uri: "/v1/cameras/synth", method: .get) { response in
                let status = try #require(try json(response.body)["status"] as? [String: Any])
                #expect(status["state"] as? String == "running")
            }
        }
        #expect(await cameras.sessions[0].settings == before)
        await cameras.sessions[0].stop()
    }

    @Test func aPhotoNamePatternEverySaveWouldRefuseIsRefused() async throws {
        let (app, cameras) = await app(autostart: false)
        try await app.test(.router) { client in
            for pattern in [#"a\u0000b.jpg"#, "{camera}-{nope}.jpg"] {
                try await client.execute(uri: "/v1/cameras/synth/configure", method: .post,
                                         body: ByteBuffer(string: #"{"photos": {"name": "\#(pattern)"}}"#)) { response in
                    #expect(response.status == .badRequest, "\(pattern)")
                    let message = try errorMessage(response.body)
                    #expect(message.hasPrefix("photos.name"), "\(pattern)")
                }
            }
        }
        #expect(await cameras.sessions[0].settings.photos.namePattern == PhotoSettings.defaultPattern)
    }

    @Test func aTrailingCommaIsBadJSON() async throws {
        let (app, cameras) = await app(autostart: false)
        try await app.test(.router) { client in
            for body in [#"{"quality": 80,}"#, "{\"controls\": {\"brightness\": 1 ,\n}}", #"{"quality": 80, "controls": {}, }"#] {
                try await client.execute(uri: "/v1/cameras/synth/configure", method: .post, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest, "\(body)")
                    let code = try errorCode(response.body)
                    #expect(code == "bad_json", "\(body)")
                }
            }
            // A comma before a bracket inside a string is just text.
            try await client.execute(uri: "/v1/cameras/synth/configure", method: .post,
                                     body: ByteBuffer(string: #"{"photos": {"name": "a,]\", ].jpg"}}"#)) { response in
                #expect(response.status == .ok)
            }
        }
        #expect(await cameras.sessions[0].settings.quality == 85)
        #expect(JSONBody.shapeProblem(in: Array(#"[1, 2 , ]"#.utf8)) == .trailingComma(6))
        #expect(JSONBody.shapeProblem(in: Array(#"{"a": ",}", "b": [1, "x\\"], "c": {}}"#.utf8)) == nil)
    }

    /// Foundation keeps the first of two equal keys; camd refuses the body instead of
    /// applying one of two values the client sent.
    @Test func aKeyGivenTwiceIsBadJSON() async throws {
        let (app, cameras) = await app(autostart: false)
        try await app.test(.router) { client in
            for body in [#"{"quality": 50, "quality": 0}"#, #"{"photos": {"keep_count": 5, "keep_count": 6}}"#,
                         #"{"quality": 50, "controls": {"a": 1}, "quality": 51}"#] {
                try await client.execute(uri: "/v1/cameras/synth/configure", method: .post, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest, "\(body)")
                    let code = try errorCode(response.body)
                    #expect(code == "bad_json", "\(body)")
                }
            }
        }
        #expect(await cameras.sessions[0].settings.quality == 85)
        // The same key in sibling objects, in arrays, or as a value is no duplicate.
        for body in [#"{"photos": {"name": "a.jpg"}, "image": {"name": 1}}"#, #"[{"a": 1}, {"a": 2}]"#, #"{"a": "a", "b": "a"}"#,
                     #"{"a": {"a": {"a": 1}}}"#, #"{"k\"": 1, "k": 2}"#] {
            #expect(JSONBody.shapeProblem(in: Array(body.utf8)) == nil, "\(body)")
        }
        #expect(JSONBody.shapeProblem(in: Array(#"{"a": {"b": 1}, "a": 2}"#.utf8)) == .duplicateKey("a", 16))
    }

    @Test func photoNamesInURLsArePercentDecodedOnce() async throws {
        let (app, cameras) = await app()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/cameras/synth/configure", method: .post,
                                     body: ByteBuffer(string: #"{"photos": {"name": "my photo {seq}.jpg"}}"#)) { response in
                #expect(response.status == .ok)
            }
            let name = try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post) { response in
                #expect(response.status == .created)
                return try #require(try json(response.body)["name"] as? String)
            }
            #expect(name.contains(" "))
            let encoded = name.replacingOccurrences(of: " ", with: "%20")
            try await client.execute(uri: "/v1/photos/\(encoded)", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/jpeg")
            }
            // Decoded once: "%2520" is a literal "%20", which no photo has.
            try await client.execute(uri: "/v1/photos/\(name.replacingOccurrences(of: " ", with: "%2520"))", method: .get) { response in
                #expect(response.status == .notFound)
            }
            // Decoded names meet the same rules: no '/', no NUL, no "..", valid UTF-8.
            for bad in ["..%2Fcamd.toml.jpg", "%2Fetc%2Fpasswd", "a%00b.jpg", "%2E%2E", "%ff%fe.jpg", "100%.jpg"] {
                for method in [HTTPRequest.Method.get, .delete] {
                    try await client.execute(uri: "/v1/photos/\(bad)", method: method) { response in
                        #expect(response.status == .badRequest, "\(method) \(bad)")
                        let code = try errorCode(response.body)
                        #expect(code == "invalid_name", "\(method) \(bad)")
                    }
                }
            }
            try await client.execute(uri: "/v1/photos/\(encoded)", method: .delete) { response in
                #expect(response.status == .noContent)
            }
            try await client.execute(uri: "/v1/photos/\(encoded)", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
        await cameras.sessions[0].stop()
    }
}
