import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import JPEG
import Testing
import VideoCore

/// Several cameras in one daemon, each on its own: one whose device is missing
/// does not stop the other from serving.
@Suite struct MultiCameraRouteTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-multi-\(UInt32.random(in: 0...UInt32.max))").path

    func json(_ buffer: ByteBuffer) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))
    }

    @Test func aMissingCameraLeavesTheOtherServing() async throws {
        let working = CaptureSession(settings: CameraSettings(id: "synth", device: FrameSources.syntheticName,
                                                              size: FrameSize(width: 320, height: 240), fps: 30))
        let missing = CaptureSession(settings: CameraSettings(id: "gone", device: "/dev/video-camd-test-missing"))
        let cameras = Cameras([working, missing])
        await working.start()
        await missing.start(settleTimeout: .milliseconds(500))
        let router = buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test")))
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/v1/cameras", method: .get) { response in
                #expect(response.status == .ok)
                let list = try #require(try json(response.body) as? [[String: Any]])
                let states = Dictionary(uniqueKeysWithValues: list.compactMap { camera in
                    (camera["id"] as? String).map { ($0, camera["state"] as? String ?? "") }
                })
                #expect(states["synth"] == "running")
                #expect(["waiting-for-device", "failed"].contains(states["gone"] ?? ""), "gone is \(states["gone"] ?? "absent")")
            }
            try await client.execute(uri: "/v1/cameras/gone/snapshot", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
            }
            // The working camera answers while the other keeps failing.
            try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/jpeg")
                let header = try JPEGDecoder().header(Array(response.body.readableBytesView))
                #expect(header.size == FrameSize(width: 320, height: 240))
            }
            try await client.execute(uri: "/v1/cameras/synth/stop", method: .post) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/v1/cameras/gone", method: .get) { response in
                #expect(response.status == .ok)
                let body = try #require(try json(response.body) as? [String: Any])
                let status = try #require(body["status"] as? [String: Any])
                let reason = status["reason"] as? String ?? ""
                #expect(reason.contains("/dev/video-camd-test-missing"), "a waiting or failed camera says why: \(reason)")
            }
        }
        await missing.stop()
        await working.stop()
    }

    @Test func photoMetricsAreCountedPerCamera() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let sessions = ["front", "back"].map {
            CaptureSession(settings: CameraSettings(id: $0, device: FrameSources.syntheticName,
                                                    size: FrameSize(width: 320, height: 240), fps: 30))
        }
        for session in sessions { await session.start() }
        let router = buildRouter(APIServices(cameras: Cameras(sessions), photos: PhotoOutput(root: root),
                                             daemon: DaemonInfo(version: "test")))
        try await Application(router: router).test(.router) { client in
            var bytes = 0
            for _ in 0..<2 {
                try await client.execute(uri: "/v1/cameras/front/snapshot", method: .post) { response in
                    #expect(response.status == .created)
                    let record = try #require(try json(response.body) as? [String: Any])
                    bytes += record["bytes"] as? Int ?? 0
                }
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                let text = String(buffer: response.body)
                #expect(text.contains("camd_photos_saved_total{camera=\"front\"} 2\n"))
                #expect(text.contains("camd_photos_saved_total{camera=\"back\"} 0\n"))
                #expect(text.contains("camd_photo_bytes_written_total{camera=\"front\"} \(bytes)\n"), "\(bytes) bytes saved")
                #expect(text.contains("camd_photo_save_errors_total{camera=\"back\"} 0\n"))
            }
        }
        for session in sessions { await session.stop() }
    }
}
