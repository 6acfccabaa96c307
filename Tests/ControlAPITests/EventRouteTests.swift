import APIModel
import CamdTestSupport
import CaptureSession
import Client
import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdTesting
import Testing
import VideoCore
@testable import ControlAPI

/// `GET /v1/events` on a real port, read as a client reads it: Server-Sent Events, resumed
/// with Last-Event-ID.
@Suite struct EventRouteTests {
    func withEventsApp(_ body: @escaping @Sendable (any TestClientProtocol, Int, CaptureSession, EventLog) async throws -> Void) async throws {
        let log = EventLog()
        let settings = CameraSettings(id: "synth", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: 30)
        let cameras = Cameras([CaptureSession(settings: settings, events: log)])
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-event-routes-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let services = APIServices(cameras: cameras, photos: PhotoOutput(root: root, events: log), daemon: DaemonInfo(version: "test"))
        let app = Application(router: buildRouter(services), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            defer { log.endSubscriptions() }  // or the server waits for the streams as it shuts down
            try await body(client, try #require(client.port), cameras.sessions[0], log)
        }
        await cameras.sessions[0].stop()
    }

    static let json: HTTPFields = [.contentType: "application/json"]

    /// Connects and waits for the response's head, so events published after this return reach it.
    static func connect(_ port: Int, _ path: String = "/v1/events", lastEventID: UInt64? = nil) async throws -> EventStreamConnection {
        try await onOwnThread {
            let connection = try EventStreamConnection(port: port, path: path, headers: lastEventID.map { [("Last-Event-ID", "\($0)")] } ?? [])
            try connection.waitForHead()
            return connection
        }
    }

    /// The next `count` events, as their JSON decoded; blocks until they come.
    static func read(_ connection: EventStreamConnection, _ count: Int) async throws -> [(sse: ServerSentEvent, event: DaemonEvent)] {
        try await onOwnThread {
            var events: [(ServerSentEvent, DaemonEvent)] = []
            while events.count < count, let sse = try connection.next() {
                events.append((sse, try APIJSON.decoder().decode(DaemonEvent.self, from: Data(sse.data.utf8))))
            }
            return events
        }
    }

    @Test func theStreamIsServerSentEventsAndASnapshotPostYieldsPhotoSaved() async throws {
        try await withEventsApp { client, port, _, _ in
            let connection = try await Self.connect(port, "/v1/events?types=photo_saved")
            #expect(connection.status == 200)
            #expect(connection.header("content-type") == "text/event-stream")
            #expect(connection.header("cache-control") == "no-cache")
            let record = try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post, headers: Self.json) { response in
                #expect(response.status == .created)
                return try APIJSON.decoder().decode(PhotoRecord.self, from: Data(buffer: response.body))
            }
            let events = try await Self.read(connection, 1)
            let (sse, event) = try #require(events.first)
            #expect(sse.event == "photo_saved")
            #expect(sse.id == "\(event.id)")
            #expect(event.payload == .photoSaved(.init(camera: "synth", name: record.name, bytes: record.bytes, width: 320, height: 240)))
            #expect(sse.data.contains(#""type":"photo_saved""#) && !sse.data.contains("\n"))
            connection.shutDown()
        }
    }

    @Test func stopAndStartYieldCameraState() async throws {
        try await withEventsApp { client, port, session, _ in
            let connection = try await Self.connect(port, "/v1/events?camera=synth&types=camera_state")
            _ = try await client.execute(uri: "/v1/cameras/synth/start", method: .post, headers: Self.json) { #expect($0.status == .ok) }
            _ = try await client.execute(uri: "/v1/cameras/synth/stop", method: .post, headers: Self.json) { #expect($0.status == .ok) }
            let changes = try await Self.read(connection, 4).map { item -> EventPayload.CameraStateChange? in
                guard case .cameraState(let change) = item.event.payload else { return nil }
                return change
            }
            #expect(changes.map { $0?.state } == [.starting, .running, .stopping, .idle])
            #expect(changes.map { $0?.previous } == [.idle, .starting, .running, .stopping])
            #expect(changes.allSatisfy { $0?.camera == "synth" })
            connection.shutDown()
            _ = session
        }
    }

    @Test func resumingWithLastEventIDLosesNothingWithinTheBacklog() async throws {
        try await withEventsApp { client, port, _, log in
            let first = try await Self.connect(port, "/v1/events?types=photo_saved")
            for _ in 0..<2 {
                _ = try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post, headers: Self.json) { #expect($0.status == .created) }
            }
            let seen = try await Self.read(first, 1)
            first.shutDown()
            let lastSeen = try #require(seen.last?.event.id)
            // Photos taken while no client listens.
            for _ in 0..<3 {
                _ = try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post, headers: Self.json) { #expect($0.status == .created) }
            }
            let missed = (lastSeen + 1...log.lastID).count
            let resumed = try await Self.connect(port, "/v1/events", lastEventID: lastSeen)
            let replay = try await Self.read(resumed, missed)
            #expect(replay.map(\.event.id) == Array(lastSeen + 1...log.lastID))
            #expect(replay.filter { $0.event.type == .photoSaved }.count == 4)
            resumed.shutDown()

            // The same by query, for tools that cannot set headers.
            let byQuery = try await Self.connect(port, "/v1/events?last_event_id=\(lastSeen)")
            #expect(try await Self.read(byQuery, missed).map(\.event.id) == Array(lastSeen + 1...log.lastID))
            byQuery.shutDown()
        }
    }

    @Test func anUnknownTypeOrCameraIsRefusedWithWhatExists() async throws {
        try await withEventsApp { client, _, _, _ in
            try await client.execute(uri: "/v1/events?types=photo_taken", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("photo_saved"))
            }
            try await client.execute(uri: "/v1/events?camera=nope", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }
}
