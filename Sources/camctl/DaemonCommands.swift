import APIModel
import ArgumentParser
import CaptureSession
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
        let status = try DaemonCall.decode(DaemonStatus.self, reply)
        print("camd \(status.version) on \(client.socketPath), up \(status.uptimeSeconds) s")
        for camera in status.cameras {
            var line = "\(camera.id): \(camera.state.rawValue)"
            if let source = camera.source { line += "  \(source)" }
            if let format = camera.format, let size = camera.size { line += "  \(format) \(size)" }
            line += "  \(camera.measuredFPS) fps"
            line += "  captured \(camera.framesCaptured), dropped \(camera.framesDropped), clients \(camera.streamClients)"
            print(line)
            if let reason = camera.reason { print("    \(reason)") }
            if let photo = camera.photoError { print("    photos: \(photo)") }
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
    let status = try DaemonCall.decode(CameraStatus.self, reply)
    print("\(id): \(status.state.rawValue)\(status.reason.map { " (\($0))" } ?? "")")
}

struct ContactSheetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contact-sheet",
        abstract: "Write one JPEG with thumbnails of camd's saved photos, in time order, each labelled with its time.")

    @OptionGroup var daemon: DaemonSelection
    @Option(help: "Only this camera's photos.") var camera: String?
    @Option(help: "From this time (seconds since 1970 or ISO 8601).") var since: String?
    @Option(help: "Until this time (exclusive).") var until: String?
    @Option(help: "Columns.") var cols: Int?
    @Option(help: "Cell size in pixels (square).") var cell: Int?
    @Option(name: .shortAndLong, help: "Where to write the JPEG; - for standard output.") var output: String

    func run() throws {
        let client = try daemon.requiredDaemon()
        var query: [String] = []
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~:")
        for (name, value) in [("camera", camera), ("since", since), ("until", until), ("cols", cols.map(String.init)),
                              ("cell", cell.map(String.init))] {
            if let value { query.append("\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)") }
        }
        let reply = try DaemonCall.perform(client, "GET", "/v1/photos/contact-sheet" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
        do {
            if output == "-" { try StandardOutput.write(reply.body) } else { try AtomicFile.write(reply.body, to: output) }
        } catch {
            throw fail("\(error)", ExitStatus.outputFailed)
        }
        printError("contact sheet: \(reply.body.count) bytes → \(output == "-" ? "standard output" : output)")
    }
}
