import APIModel
import CamdTestSupport
import CaptureSession
import Client
import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// `GET /v1/events` against vivid: a client of the event stream learns that the camera was
/// lost soon after vivid's `disconnect` control, and that it is back once vivid's node returns.
extension VividCaptureTests {
    @Test func anEventClientSeesTheCameraLostWithinThreeSecondsAndBack() async throws {
        let log = EventLog()
        let session = CaptureSession(settings: Self.settings(), events: log)
        #expect(await session.start().state == .running)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-vivid-events-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let services = APIServices(cameras: Cameras([session]), photos: PhotoOutput(root: root, events: log), daemon: DaemonInfo(version: "test"))
        let app = Application(router: buildRouter(services), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            defer { log.endSubscriptions() }
            let port = try #require(client.port)
            let connection = try await onOwnThread {
                let connection = try EventStreamConnection(port: port, path: "/v1/events?camera=vivid&types=camera_state")
                try connection.waitForHead()
                return connection
            }
            try Vivid.setControl("disconnect")
            let disconnected = ContinuousClock.now
            // Reads camera_state events until `state`; how long it took.
            func waitFor(_ state: SessionState) async throws -> (EventPayload.CameraStateChange?, Duration) {
                try await onOwnThread {
                    while let sse = try connection.next() {
                        let event = try APIJSON.decoder().decode(DaemonEvent.self, from: Data(sse.data.utf8))
                        if case .cameraState(let change) = event.payload, change.state == state {
                            return (change, ContinuousClock.now - disconnected)
                        }
                    }
                    return (nil, ContinuousClock.now - disconnected)
                }
            }
            let (lost, lostAfter) = try await waitFor(.waitingForDevice)
            #expect(lost?.previous == .running)
            #expect(lost?.reason?.contains("disconnected") == true, "\(lost?.reason ?? "no reason")")
            #expect(lostAfter < .seconds(3), "the client saw the camera lost \(lostAfter) after the disconnect")
            #expect(Vivid.waitUntilBack(), "/dev/video0 did not come back after the disconnect")
            let (back, _) = try await waitFor(.running)
            #expect(back?.previous == .waitingForDevice || back?.previous == .starting)
            connection.shutDown()
        }
        await session.stop()
    }
}
