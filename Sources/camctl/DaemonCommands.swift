import ArgumentParser
import Client
import Foundation

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show camd's cameras: state, device, format, rates, counters.")

    @OptionGroup var daemon: DaemonSelection

    @Flag(help: "Print camd's JSON as it is.")
    var json = false

    func run() throws {
        let client = try daemon.requiredDaemon()
        let reply = try DaemonCall.perform(client, "GET", "/v1/status")
        if json {
            print(reply.text, terminator: "")
            return
        }
        let status = (try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any] ?? [:]
        print("camd \(status["version"] ?? "?") on \(client.socketPath), up \(status["uptime_seconds"] ?? "?") s")
        for camera in status["cameras"] as? [[String: Any]] ?? [] {
            var line = "\(camera["id"] ?? "?"): \(camera["state"] ?? "?")"
            if let source = camera["source"] { line += "  \(source)" }
            if let format = camera["format"], let size = camera["size"] { line += "  \(format) \(size)" }
            if let fps = camera["measured_fps"] { line += "  \(fps) fps" }
            line += "  captured \(camera["frames_captured"] ?? 0), dropped \(camera["frames_dropped"] ?? 0), clients \(camera["stream_clients"] ?? 0)"
            print(line)
            if let reason = camera["reason"] { print("    \(reason)") }
            if let photo = camera["photo_error"] { print("    photos: \(photo)") }
        }
    }
}

struct Start: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start a camera in camd.")
    @OptionGroup var daemon: DaemonSelection
    @Argument(help: "Camera id (default: the first camera).") var camera: String?

    func run() throws {
        try changeState(daemon, camera, "start")
    }
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stop a camera in camd and release its device.")
    @OptionGroup var daemon: DaemonSelection
    @Argument(help: "Camera id (default: the first camera).") var camera: String?

    func run() throws {
        try changeState(daemon, camera, "stop")
    }
}

private func changeState(_ daemon: DaemonSelection, _ camera: String?, _ verb: String) throws {
    let client = try daemon.requiredDaemon()
    guard let id = try DaemonCall.cameraID(client, matching: camera) else {
        throw fail("camd has no camera \"\(camera ?? "")\"; see `camctl status`", ExitStatus.noSuchDevice)
    }
    let reply = try DaemonCall.perform(client, "POST", "/v1/cameras/\(id)/\(verb)")
    let status = (try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any] ?? [:]
    print("\(id): \(status["state"] ?? "?")\((status["reason"] as? String).map { " (\($0))" } ?? "")")
}
