import APIModel
import ArgumentParser
import CaptureSession
import Client
import Foundation

/// How camctl finds camd; shared by the commands that can use it.
struct DaemonSelection: ParsableArguments {
    @Option(name: .customLong("socket"), help: "camd's socket (default: $CAMD_SOCKET, /run/camd.sock, $XDG_RUNTIME_DIR/camd.sock).")
    var socketPath: String?

    @Flag(help: "Do not use camd even if it runs; open the camera directly.")
    var noDaemon = false

    /// The running daemon, or nil to work without it.
    func daemon() -> DaemonClient? {
        noDaemon ? nil : DaemonClient.locate(explicit: socketPath)
    }

    /// The daemon, which this command requires.
    func requiredDaemon() throws -> DaemonClient {
        guard let client = DaemonClient.locate(explicit: socketPath) else {
            let tried = DaemonClient.candidatePaths(explicit: socketPath).joined(separator: ", ")
            throw fail("camd is not running (no answer on \(tried)); start it with `systemctl start camd` or run `camd`", ExitStatus.deviceIO)
        }
        return client
    }
}

/// A reply from camd turned into camctl's output and exit codes.
enum DaemonCall {
    static func perform(_ client: DaemonClient, _ method: String, _ path: String, body: [UInt8]? = nil) throws -> DaemonReply {
        let reply: DaemonReply
        do { reply = try client.request(method, path, body: body) } catch { throw fail(error.description, ExitStatus.deviceIO) }
        guard (200..<300).contains(reply.status) else {
            let (code, message) = errorParts(reply)
            throw fail("camd: \(message)", exitCode(status: reply.status, code: code))
        }
        return reply
    }

    static func errorParts(_ reply: DaemonReply) -> (String, String) {
        guard let body = try? APIJSON.decoder().decode(ErrorBody.self, from: Data(reply.body)) else { return ("", "HTTP \(reply.status)") }
        return (body.error.code, body.error.message)
    }

    /// A reply's body as one of the API's messages; a body that is not one is camd's fault.
    static func decode<T: Decodable>(_ type: T.Type, _ reply: DaemonReply) throws -> T {
        do {
            return try APIJSON.decoder().decode(type, from: Data(reply.body))
        } catch {
            throw fail("camd answered something camctl cannot read as \(type): \(error)", ExitCode(1))
        }
    }

    static func exitCode(status: Int, code: String) -> ExitCode {
        switch code {
        case "unknown_camera": return ExitStatus.noSuchDevice
        case "disk_full", "permission_denied", "io_failure": return ExitStatus.outputFailed
        case "camera_failed": return ExitStatus.unsupported
        default: break
        }
        switch status {
        case 400, 413: return ExitStatus.usage
        case 404: return ExitStatus.noSuchDevice
        case 503, 504: return ExitStatus.deviceIO
        default: return ExitCode(1)
        }
    }

    /// A file of camd's media library (a photo or a movie) as stored: the one place camctl
    /// fetches media from camd.
    static func fetchMedia(_ client: DaemonClient, _ name: String) throws -> [UInt8] {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("/")
        return try perform(client, "GET", "/v1/media/" + (name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name)).body
    }

    /// The daemon's cameras.
    static func cameras(_ client: DaemonClient) throws -> [CameraStatus] {
        try decode([CameraStatus].self, try perform(client, "GET", "/v1/cameras"))
    }

    /// The id of the daemon's camera that `selector` names (an id, a device path or selector,
    /// a card name), the first camera when nil; nil when the daemon has no such camera.
    static func cameraID(_ client: DaemonClient, matching selector: String?) throws -> String? {
        let all = try cameras(client)
        guard let selector else { return all.first?.id }
        let resolved = (try? FileManager.default.destinationOfSymbolicLink(atPath: selector)).map {
            $0.hasPrefix("/") ? $0 : ((selector as NSString).deletingLastPathComponent as NSString).appendingPathComponent($0)
        }
        for camera in all {
            let id = camera.id
            let device = camera.device
            let source = camera.source?.split(separator: " ").first.map(String.init)
            let card = camera.card
            if id == selector || device == selector || source == selector || (resolved != nil && source == resolved)
                || card?.lowercased() == selector.lowercased() {
                return id
            }
        }
        return nil
    }
}
