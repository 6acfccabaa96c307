import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import Testing

/// The pages' own files come from camd itself, with a validator so a browser keeps them.
@Suite struct WebAssetTests {
    @Test func theFilesAreServedWithTheirTypeAndRevalidatedByETag() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-web-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let router = buildRouter(APIServices(cameras: Cameras([]), photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test")))
        try await Application(router: router).test(.router) { client in
            let page = try await client.execute(uri: "/", method: .get) { $0 }
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(String(buffer: page.body).contains("<title>camd"))
            let script = try await client.execute(uri: "/assets/camd-live.js", method: .get) { $0 }
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            let etag = try #require(script.headers[.eTag])
            let again = try await client.execute(uri: "/assets/camd-live.js", method: .get, headers: [.ifNoneMatch: etag]) { $0 }
            #expect(again.status == .notModified)
            #expect(again.body.readableBytes == 0)
            let missing = try await client.execute(uri: "/assets/nothing.js", method: .get) { $0 }
            #expect(missing.status == .notFound)
        }
    }
}
