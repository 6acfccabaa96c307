import APIModel
import ArgumentParser
import CaptureSession
import Client
import Foundation

struct Configure: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change a camera's settings in camd, as camd.toml's keys name them.",
        discussion: """
            Examples: camctl configure bench quality=70 photos.keep_bytes=500M idle_stop=5m
                      camctl configure bench controls.brightness=140 --reset fps
            Values are checked by the same rules as camd.toml and the API, with the same messages.
            A change that needs the device reopens it; the answer says what restarted.
            With no settings, prints the camera's settings.
            """)

    @OptionGroup var daemon: DaemonSelection

    @Argument(help: "Camera id (default: the first camera), then KEY=VALUE settings.")
    var words: [String] = []

    @Option(name: .customLong("reset"), help: "Set KEY back to its default; repeat for more.")
    var resets: [String] = []

    func run() throws {
        let (camera, assignments) = words.first.map { $0.contains("=") ? (nil, words) : ($0, Array(words.dropFirst())) } ?? (nil, [])
        let fields: [(key: String, value: SettingValue)]
        do throws(SettingError) {
            fields = try CameraSettings.fields(fromArguments: assignments, resetting: resets)
        } catch {
            throw fail(error.description, ExitStatus.usage)
        }
        let client = try daemon.requiredDaemon()
        guard let id = try DaemonCall.cameraID(client, matching: camera) else {
            throw fail("camd has no camera \"\(camera ?? "")\"; see `camctl status`", ExitStatus.noSuchDevice)
        }
        if fields.isEmpty {
            let detail = try DaemonCall.decode(CameraDetail.self, try DaemonCall.perform(client, "GET", "/v1/cameras/\(id)"))
            let body = try APIJSON.encoder().encode(detail.settings)
            print(String(decoding: body, as: UTF8.self))
            return
        }
        let body = try APIJSON.encoder().encode(SettingValue.table(fields))
        let reply = try DaemonCall.perform(client, "POST", "/v1/cameras/\(id)/configure", body: Array(body))
        let status = try DaemonCall.decode(CameraStatus.self, reply)
        let restarted: String
        switch status.restart {
        case .device?: restarted = "the device restarted"
        case .encoders?: restarted = "the encoders restarted"
        default: restarted = "nothing restarted"
        }
        print("\(id): \(status.state.rawValue), \(restarted)\(status.reason.map { " (\($0))" } ?? "")")
    }
}
