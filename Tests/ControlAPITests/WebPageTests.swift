import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import Testing

/// The page of every camera (`/`) and the files it loads, each with its type and the
/// security headers that keep it to camd's own scripts.
@Suite struct WebPageTests {
    /// A router with no camera, its photo folder removed after `body`.
    func withPages(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-web-page-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let router = buildRouter(APIServices(cameras: Cameras([]), photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test")))
        try await Application(router: router).test(.router, body)
    }

    @Test func thePageAndEachOfItsFilesAreServedWithTheirType() async throws {
        try await withPages { client in
            let page = try await client.execute(uri: "/", method: .get) { $0 }
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("script-src 'self'") == true)
            let html = String(buffer: page.body)
            // Every file the page names is one camd serves.
            for name in ["camd.css", "camd.js", "camd-live.js", "camd-icon.svg"] {
                #expect(html.contains("/assets/\(name)"), "index.html does not load \(name)")
            }
            #expect(html.contains("href=\"/media\""))
            let types = [
                "camd.css": "text/css; charset=utf-8",
                "camd.js": "text/javascript; charset=utf-8",
                "camd-live.js": "text/javascript; charset=utf-8",
                "camd-icon.svg": "image/svg+xml",
                "index.html": "text/html; charset=utf-8",
            ]
            var total = 0
            for (name, type) in types {
                let asset = try await client.execute(uri: "/assets/\(name)", method: .get) { $0 }
                #expect(asset.status == .ok, "\(name)")
                #expect(asset.headers[.contentType] == type, "\(name)")
                #expect(asset.headers[.eTag] != nil, "\(name)")
                #expect(asset.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff", "\(name)")
                total += asset.body.readableBytes
                if !name.hasSuffix(".svg") {  // an SVG names its XML namespace by URL; it loads nothing
                    let text = String(buffer: asset.body)
                    #expect(!text.contains("http://") && !text.contains("https://"), "\(name) names somewhere else")
                }
            }
            // The page's own files stay small: it must load fast on a phone and work offline.
            #expect(total < 100 * 1024, "the page's files are \(total) bytes")
        }
    }

    /// The files come from camd itself, with a validator so a browser keeps them.
    @Test func theFilesAreRevalidatedByETagAndAnUnknownOneIsNotFound() async throws {
        try await withPages { client in
            let page = try await client.execute(uri: "/", method: .get) { $0 }
            #expect(String(buffer: page.body).contains("<title>camd"))
            let script = try await client.execute(uri: "/assets/camd-live.js", method: .get) { $0 }
            let etag = try #require(script.headers[.eTag])
            let again = try await client.execute(uri: "/assets/camd-live.js", method: .get, headers: [.ifNoneMatch: etag]) { $0 }
            #expect(again.status == .notModified)
            #expect(again.body.readableBytes == 0)
            let missing = try await client.execute(uri: "/assets/nothing.js", method: .get) { $0 }
            #expect(missing.status == .notFound)
        }
    }
}
