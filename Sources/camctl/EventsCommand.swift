import APIModel
import ArgumentParser
import Client
import Dispatch
import Foundation
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// `camctl events`: camd's events as JSON lines, one per event, for shell pipelines.
struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print camd's events (camera states, photos, recordings, disk, reloads) as JSON lines.",
        discussion: """
            Runs until camd stops or you press Ctrl-C; each line is written and flushed as the
            event comes, so `camctl events | jq` and `| while read` loops see it at once.
            A reader that goes away (`| head -1`) ends camctl quietly, with status 0.
            """)

    @OptionGroup var daemon: DaemonSelection

    @Option(help: "Only this camera's events (and the daemon's own: disk, reloads).")
    var camera: String?

    @Option(help: "Only these event types, comma-separated: camera_state, photo_saved, photo_deleted, recording_started, recording_finished, disk_full, disk_recovered, config_reloaded.")
    var types: String?

    @Option(name: .customLong("since-id"), help: "First print the events camd still keeps after this id (the `id` of the last line you saw).")
    var sinceID: UInt64?

    func run() throws {
        let client = try daemon.requiredDaemon()
        var query: [String] = []
        if let camera { query.append("camera=" + Self.encoded(camera)) }
        if let types { query.append("types=" + Self.encoded(types)) }
        if let sinceID { query.append("last_event_id=\(sinceID)") }
        let path = "/v1/events" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        let connection: EventStreamConnection
        do { connection = try EventStreamConnection(socketPath: client.socketPath, path: path) } catch {
            throw fail(error.description, ExitStatus.deviceIO)
        }
        // A closed pipe is an error from write (EPIPE), not a signal; Ctrl-C closes the connection.
        signal(SIGPIPE, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "camctl.events.sigint"))
        interrupt.setEventHandler { connection.shutDown() }
        interrupt.resume()
        defer { interrupt.cancel() }
        while true {
            let event: ServerSentEvent?
            do { event = try connection.next(watching: STDOUT_FILENO) } catch {
                throw fail(error.description, ExitStatus.deviceIO)
            }
            guard let event else { break }
            do {
                try StandardOutput.write(Array((event.data + "\n").utf8))
            } catch Errno.brokenPipe {
                return
            }
        }
        if let status = connection.status, status != 200 {
            let body = try? APIJSON.decoder().decode(ErrorBody.self, from: Data(connection.errorBody))
            throw fail("camd: \(body?.error.message ?? "HTTP \(status)")", DaemonCall.exitCode(status: status, code: body?.error.code ?? ""))
        }
    }

    private static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.,"))) ?? text
    }
}
