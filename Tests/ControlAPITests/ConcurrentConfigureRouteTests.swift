import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VideoCore

/// Configure requests that arrive together each change their own fields, and all of
/// them stay: the merge happens inside the camera's actor, not before it.
@Suite struct ConcurrentConfigureRouteTests {
    @Test func concurrentConfigureRequestsAllTakeEffect() async throws {
        let (router, cameras, root) = await runningSyntheticCamera(size: FrameSize(width: 320, height: 240))
        defer { try? FileManager.default.removeItem(atPath: root) }
        let bodies = [#"{"quality": 61}"#, #"{"photos": {"keep_count": 7}}"#, #"{"idle_stop": 99}"#, #"{"size": "160x120"}"#,
                      #"{"photos": {"interval": 42}}"#, #"{"encoder_threads": 1}"#]
        try await Application(router: router).test(.router) { client in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for body in bodies {
                    group.addTask {
                        try await client.execute(uri: "/v1/cameras/synth/configure", method: .post, body: ByteBuffer(string: body)) {
                            Int($0.status.code)
                        }
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
        }
        let s = await cameras.sessions[0].settings
        #expect(s.quality == 61)
        #expect(s.photos.keepCount == 7)
        #expect(s.idleStopSeconds == 99)
        #expect(s.size == FrameSize(width: 160, height: 120))
        #expect(s.photos.intervalSeconds == 42)
        #expect(s.encoderThreads == 1)
        await cameras.sessions[0].stop()
    }
}

/// `since` and `until` take seconds or ISO 8601, with fractional seconds too (as
/// JavaScript's `toISOString()` writes them; Schemathesis found them refused).
@Suite struct PhotoTimeQueryTests {
    @Test func isoTimesWithAndWithoutFractionsSelectPhotos() async throws {
        let (router, cameras, root) = await runningSyntheticCamera(size: FrameSize(width: 160, height: 120))
        defer { try? FileManager.default.removeItem(atPath: root) }
        @Sendable func iso(_ seconds: Double, fraction: Bool) -> String {
            let formatter = ISO8601DateFormatter()
            if fraction { formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds] }
            return formatter.string(from: Date(timeIntervalSince1970: seconds))
        }
        try await Application(router: router).test(.router) { client in
            let captured = try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post) { response in
                let decoder = JSONDecoder()
                decoder.keyDecodingStrategy = .convertFromSnakeCase
                return try decoder.decode(PhotoRecord.self, from: Data(response.body.readableBytesView)).captureTime
            }
            for (query, count) in [("since=\(iso(captured - 1.5, fraction: true))", 1), ("since=\(iso(captured + 1.5, fraction: true))", 0),
                                   ("until=\(iso(captured + 2, fraction: false))", 1), ("since=\(captured - 1)", 1)] {
                try await client.execute(uri: "/v1/photos?\(query)", method: .get) { response in
                    #expect(response.status == .ok, "\(query)")
                    let list = try JSONDecoder().decode([[String: JSONAny]].self, from: Data(response.body.readableBytesView))
                    #expect(list.count == count, "\(query)")
                }
            }
            for bad in ["since=yesterday", "since=inf", "until=2026-13-01T00:00:00Z"] {
                try await client.execute(uri: "/v1/photos?\(bad)", method: .get) { #expect($0.status == .badRequest, "\(bad)") }
            }
        }
        await cameras.sessions[0].stop()
    }
}

/// Any JSON value, for counting a list's entries without naming their fields.
private struct JSONAny: Decodable {
    init(from decoder: any Decoder) throws {}
}

/// A router over one running synthetic camera "synth", with photos in a scratch folder
/// (`root`, for the caller to remove).
private func runningSyntheticCamera(size: FrameSize) async -> (Router<CamdRequestContext>, Cameras, String) {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-route-\(UInt32.random(in: 0...UInt32.max))").path
    let cameras = Cameras([CaptureSession(settings: CameraSettings(id: "synth", device: FrameSources.syntheticName, size: size, fps: 30))])
    await cameras.sessions[0].start()
    return (buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test"))), cameras, root)
}
