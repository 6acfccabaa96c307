import APIModel
import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VideoCore

/// Hooks run programs as camd's user: the API shows them but never sets them.
@Suite struct HookConfigureTests {
    @Test func configureRefusesHookKeysAndChangesNothing() async throws {
        let settings = CameraSettings(id: "synth", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: 30)
        let cameras = Cameras([CaptureSession(settings: settings)])
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-hook-routes-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let app = Application(router: buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test"))))
        try await app.test(.router) { client in
            for body in [#"{"on_photo": "/bin/sh -c id"}"#, #"{"quality": 50, "hook_timeout": 5}"#] {
                try await client.execute(uri: "/v1/cameras/synth/configure", method: .post, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .forbidden, "\(body)")
                    let error = try APIJSON.decoder().decode(ErrorBody.self, from: Data(buffer: response.body))
                    #expect(error.error.code == "file_only_setting")
                    #expect(error.error.message.contains("camd.toml"))
                }
            }
        }
        #expect(await cameras.sessions[0].settings.quality == settings.quality)
        #expect(await cameras.sessions[0].settings.hooks == HookSettings())
    }
}
