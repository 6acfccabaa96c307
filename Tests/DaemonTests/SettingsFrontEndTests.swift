import CamdTestSupport
import CaptureSession
import Client
@testable import Daemon
import Foundation
import Testing

/// One list of good and bad values, each given to the three front ends a user has: a line
/// of camd.toml, a `POST /v1/cameras/{id}/configure` to the real camd, and `camctl configure`
/// run as a process against it. All three must accept or refuse each value alike: when they
/// accept, with the same resulting setting; when they refuse, with the same message naming
/// the key.
@Suite(.serialized) struct SettingsFrontEndTests {
    struct Case: CustomStringConvertible {
        /// The key, for resetting it after the case: "photos.keep_bytes".
        var key: String
        /// The line(s) inside a [[camera]] table.
        var toml: String
        /// The configure request's body.
        var json: String
        /// camctl's KEY=VALUE arguments; nil where only typed front ends can say it (a string "70" for a number).
        var arguments: [String]?
        var accepted: Bool
        var description: String { toml }

        /// `key = literal` in TOML and JSON alike; camctl gets the literal without quotes.
        static func simple(_ key: String, _ literal: String, _ accepted: Bool, typedOnly: Bool = false) -> Case {
            let parts = key.split(separator: ".").map(String.init)
            let json = parts.count == 2 ? #"{"\#(parts[0])": {"\#(parts[1])": \#(literal)}}"# : #"{"\#(key)": \#(literal)}"#
            let text = literal.hasPrefix("\"") ? String(literal.dropFirst().dropLast()) : literal
            return Case(key: parts[0], toml: "\(key) = \(literal)", json: json, arguments: typedOnly ? nil : ["\(key)=\(text)"],
                        accepted: accepted)
        }
    }

    static let cases: [Case] = [
        .simple("quality", "70", true), .simple("quality", "0", false), .simple("quality", "101", false),
        .simple("quality", "85.0", true), .simple("quality", "85.5", false), .simple("quality", #""abc""#, false),
        .simple("quality", #""70""#, false, typedOnly: true), .simple("quality", "true", false, typedOnly: true),
        .simple("qualty", "70", false),
        .simple("fps", "15", true), .simple("fps", "0", false), .simple("fps", "1001", false), .simple("fps", #""fast""#, false),
        .simple("size", #""640x480""#, true), .simple("size", #""0x0""#, false), .simple("size", #""big""#, false),
        .simple("size", #""99999x1""#, false),
        .simple("format", #""ABCDE""#, false),
        .simple("device", #""testsrc""#, true), .simple("device", #""   ""#, false),
        .simple("idle_stop", "0", true), .simple("idle_stop", #""90s""#, true), .simple("idle_stop", #""1h30m""#, true),
        .simple("idle_stop", "-1", false), .simple("idle_stop", "9999999999", false), .simple("idle_stop", #""soon""#, false),
        .simple("autostart", "false", true), .simple("autostart", #""yes""#, false), .simple("autostart", "1", false),
        .simple("encoder_threads", "2", true), .simple("encoder_threads", "0", false), .simple("encoder_threads", "17", false),
        .simple("encode_every_frame", "true", true),
        .simple("photos.interval", #""10m""#, true), .simple("photos.interval", "0.05", false),
        .simple("photos.keep_count", "5", true), .simple("photos.keep_count", "0", false),
        .simple("photos.keep_bytes", #""500M""#, true), .simple("photos.keep_bytes", "1000000", true),
        .simple("photos.keep_bytes", #""2GiB""#, true), .simple("photos.keep_bytes", #""500X""#, false),
        .simple("photos.keep_bytes", "0", false),
        .simple("photos.keep_age", #""7d""#, true), .simple("photos.keep_age", "0", false),
        .simple("photos.keep_cont", "5", false),
        .simple("photos.name", #""{camera}-{seq}.jpg""#, true), .simple("photos.name", #""a/b.jpg""#, false),
        .simple("photos.name", #""{cam}.jpg""#, false), .simple("photos.name", #""x.png""#, false),
        .simple("image.width", "320", true), .simple("image.width", "0", false),
        .simple("image.fit", #""cover""#, true), .simple("image.fit", #""zoom""#, false),
        .simple("image.rotate", "90", true), .simple("image.rotate", #""exif""#, true), .simple("image.rotate", "45", false),
        .simple("image.crop", #""0,0,100,100""#, true), .simple("image.crop", #""1,2""#, false),
        .simple("image.pad", #""black""#, true), .simple("image.pad", #""zzz""#, false),
        .simple("image.overlay_corner", #""top-right""#, true), .simple("image.overlay_corner", #""middle""#, false),
        .simple("image.stream_overlay", "true", false),
        .simple("image.chroma", #""camera""#, true), .simple("image.chroma", #""4:2:2""#, false),
        .simple("video.encoder", #""libx264""#, true), .simple("video.encoder", #""x265""#, false),
        .simple("video.bitrate", #""2M""#, true), .simple("video.bitrate", "800000", true), .simple("video.bitrate", #""fast""#, false),
        .simple("video.bitrate", "0", false),
        .simple("video.crf", "18", true), .simple("video.crf", "52", false),
        .simple("video.keyframe_interval", #""1s""#, true), .simple("video.keyframe_interval", "0", false),
        .simple("video.record", #""continuous""#, true), .simple("video.record", #""always""#, false),
        .simple("video.segment", #""5m""#, true), .simple("video.segment", "0.5", false),
        .simple("video.keep_bytes", #""2G""#, true), .simple("video.keep_count", "0", false),
        .simple("controls.Brightness", "1", false), .simple("controls.brightness", #""  ""#, false),
        .simple("controls.brightness", "0.25", true),  // a libcamera camera's Brightness is -1...1
        Case(key: "location", toml: "location = { latitude = 51.5, longitude = -0.12 }",
             json: #"{"location": {"latitude": 51.5, "longitude": -0.12}}"#,
             arguments: ["location.latitude=51.5", "location.longitude=-0.12"], accepted: true),
        Case(key: "location", toml: "location = { latitude = 91, longitude = 0 }",
             json: #"{"location": {"latitude": 91, "longitude": 0}}"#,
             arguments: ["location.latitude=91", "location.longitude=0"], accepted: false),
        Case(key: "location", toml: "location = { latitude = 10 }", json: #"{"location": {"latitude": 10}}"#,
             arguments: ["location.latitude=10"], accepted: false),
    ]

    /// What one front end made of a case: the setting's value afterwards, or the error's message.
    enum Outcome: Equatable, CustomStringConvertible {
        case accepted(SettingValue)
        case refused(String)
        var description: String {
            switch self {
            case .accepted(let value): return "accepted: \(value)"
            case .refused(let message): return "refused: \(message)"
            }
        }
    }

    @Test func theFileTheAPIAndCamctlAgreeOnEveryValue() async throws {
        let daemon = try RunningDaemon(tcp: false)
        defer { daemon.cleanUp() }
        try await daemon.waitUntilServing()
        let socket = daemon.socketPath
        // Some 200 blocking requests and camctl processes: off the cooperative pool, which the
        // tests running beside this one need (a stop timed by DaemonShutdownTests waited 22 s for it).
        try await onOwnThread { try Self.runCases(DaemonClient(socketPath: socket), socket) }
    }

    static func runCases(_ client: DaemonClient, _ socket: String) throws {
        for testCase in Self.cases {
            let file = Self.fromFile(testCase)
            let api = try Self.fromAPI(testCase, client)
            #expect(file == api, "\(testCase): camd.toml \(file), the API \(api)")
            if let arguments = testCase.arguments {
                let command = try Self.fromCamctl(arguments, socket, client, key: testCase.key)
                #expect(file == command, "\(testCase): camd.toml \(file), camctl \(command)")
            }
            switch file {
            case .accepted: #expect(testCase.accepted, "\(testCase) was accepted: \(file)")
            case .refused(let message):
                #expect(!testCase.accepted, "\(testCase) was refused: \(message)")
                #expect(message.hasPrefix(testCase.key), "\(testCase): the message does not start with the key: \(message)")
            }
        }
    }

    static func fromFile(_ testCase: Case) -> Outcome {
        do throws(ConfigurationError) {
            let configuration = try DaemonConfiguration.parse("[[camera]]\nid = \"cam\"\n\(testCase.toml)\n", source: "t.toml")
            return .accepted(value(of: testCase.key, in: configuration.cameras[0]))
        } catch {
            // "camera[0].quality must be ..." names the camera; the other front ends are asked about one camera already.
            return .refused(error.message.replacingOccurrences(of: "camera[0].", with: ""))
        }
    }

    static func fromAPI(_ testCase: Case, _ client: DaemonClient) throws -> Outcome {
        let before = try settings(client)
        let reply = try client.request("POST", "/v1/cameras/cam/configure", body: Array(testCase.json.utf8))
        defer { restore(testCase.key, before, client) }
        return try outcome(reply, key: testCase.key, client)
    }

    static func fromCamctl(_ arguments: [String], _ socket: String, _ client: DaemonClient, key: String) throws -> Outcome {
        let before = try settings(client)
        let run = try RunningDaemon.camctl(["configure", "--socket", socket, "cam"] + arguments)
        defer { restore(key, before, client) }
        if run.status != 0 {
            var message = run.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            for prefix in ["camctl: ", "camd: "] where message.hasPrefix(prefix) { message.removeFirst(prefix.count) }
            return .refused(message)
        }
        return .accepted(value(of: key, in: try settings(client)))
    }

    /// The setting's value in camd after a request, or its error message.
    static func outcome(_ reply: DaemonReply, key: String, _ client: DaemonClient) throws -> Outcome {
        guard reply.status == 200 else {
            let body = try JSONDecoder().decode([String: [String: String]].self, from: Data(reply.body))
            return .refused(body["error"]?["message"] ?? reply.text)
        }
        return .accepted(value(of: key, in: try settings(client)))
    }

    struct Detail: Decodable {
        var settings: CameraSettings
    }

    /// The camera's settings as `GET /v1/cameras/{id}` gives them, read back through the declarations.
    static func settings(_ client: DaemonClient) throws -> CameraSettings {
        try JSONDecoder().decode(Detail.self, from: Data(try client.request("GET", "/v1/cameras/cam").body)).settings
    }

    static func value(of key: String, in settings: CameraSettings) -> SettingValue {
        if let declared = CameraSettings.key(key) { return declared.value(in: settings) }
        // A group: its whole table.
        return settings.table[key] ?? .null
    }

    /// Puts the key back as it was, so one case does not leave a value the next depends on.
    static func restore(_ key: String, _ before: CameraSettings, _ client: DaemonClient) {
        guard let value = before.table[key], let body = try? JSONEncoder().encode(SettingValue.table([(key, value)])) else { return }
        _ = try? client.request("POST", "/v1/cameras/cam/configure", body: Array(body))
    }
}
