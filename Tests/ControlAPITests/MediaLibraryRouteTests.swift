import APIModel
import CamdTestSupport
import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import JPEG
import Testing
import VideoCore

/// What the media page leans on: pages by `after` and `Link`, versioned URLs cached for a
/// year with a strong ETag and 304, thumbnails rendered once per version and size, a contact
/// sheet of chosen names, and the page itself.
@Suite struct MediaLibraryRouteTests {
    static let camera = "synth"

    struct Entry: Decodable {
        var name: String
        var captureTime: Double
        var version: String
        var poster: String
    }

    static func withApp(_ body: @escaping @Sendable (any TestClientProtocol, PhotoOutput, APIServices) async throws -> Void) async throws {
        let root = try TestPhotos.temporaryFolder("media-routes")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let settings = CameraSettings(id: camera, device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: 30)
        let photos = PhotoOutput(root: root)
        let services = APIServices(cameras: Cameras([CaptureSession(settings: settings)]), photos: photos, daemon: DaemonInfo(version: "test"))
        try await Application(router: buildRouter(services)).test(.router) { client in try await body(client, photos, services) }
    }

    /// Saves photos at the given capture times (several may share one), named by the default pattern.
    @discardableResult
    static func save(_ times: [Double], to photos: PhotoOutput, pattern: String = PhotoSettings.defaultPattern,
                     color: Geometry.Color = Geometry.Color(red: 90, green: 160, blue: 220)) async throws -> [PhotoRecord] {
        let jpeg = try TestPhotos.jpeg(FrameSize(width: 320, height: 240), color)
        var saved: [PhotoRecord] = []
        for (index, time) in times.enumerated() {
            saved.append(try await photos.save(jpeg, camera: camera, settings: PhotoSettings(namePattern: pattern), captureTime: time,
                                               sequence: UInt32(index), width: 320, height: 240))
        }
        return saved
    }

    static func list(_ client: any TestClientProtocol, _ uri: String) async throws -> (entries: [Entry], next: String?) {
        try await client.execute(uri: uri, method: .get) { response in
            #expect(response.status == .ok, "\(uri): \(String(buffer: response.body))")
            let entries = try APIJSON.decoder().decode([Entry].self, from: Data(response.body.readableBytesView))
            let link = response.headers[HTTPField.Name("Link")!]
            let next = link.flatMap { text -> String? in
                guard text.hasSuffix(">; rel=\"next\""), text.hasPrefix("<") else { return nil }
                return String(text.dropFirst().dropLast(">; rel=\"next\"".count))
            }
            return (entries, next)
        }
    }

    /// Schemathesis sent a name that starts with an emoji modifier: with the '/' before it,
    /// Swift makes one Character of both, and a split on Characters saw two parts, not three.
    @Test func aCursorIsSplitOnItsSlashesWhateverFollowsThem() throws {
        let position = try listPosition("9099444148.25/bV1ygk0j/\u{1F3FB}\u{F6}q*_.jpg")
        #expect(position.captureTime == 9099444148.25)
        #expect(position.camera == "bV1ygk0j")
        #expect(position.name == "\u{1F3FB}\u{F6}q*_.jpg")
        #expect(throws: (any Error).self) { try listPosition("1.5/cam") }
    }

    @Test func pagesFollowTheLinkHeaderWithoutSkippingOrRepeatingEqualTimes() async throws {
        try await Self.withApp { client, photos, _ in
            // 23 photos, in runs of 3 that share a capture time: a time-only cursor would lose some.
            let times = (0..<23).map { 1_700_000_000 + Double($0 / 3) }
            let saved = try await Self.save(times, to: photos)
            let everything = await photos.list().map(\.name)
            #expect(everything.count == 23)
            var seen: [String] = []
            var uri: String? = "/v1/media?limit=5&kind=photo"
            var pages = 0
            while let next = uri {
                let page = try await Self.list(client, next)
                seen += page.entries.map(\.name)
                pages += 1
                if page.next != nil {
                    #expect(page.entries.count == 5)
                    #expect(page.next?.contains("kind=photo") == true, "the filters carry over: \(page.next ?? "")")
                }
                uri = page.next
                #expect(pages < 10)
            }
            #expect(pages == 5)
            #expect(seen == everything, "pages in order, each once")

            // A cursor whose entry was deleted meanwhile still places the next page.
            let page = try await Self.list(client, "/v1/media?limit=4")
            let cut = try #require(page.entries.last)
            try await photos.delete(named: cut.name)
            let after = try await Self.list(client, try #require(page.next))
            #expect(after.entries.first?.name == everything[4])

            // A page exactly as long as what is left has no Link.
            #expect(try await Self.list(client, "/v1/media?limit=\(saved.count - 1)").next == nil)
            try await client.execute(uri: "/v1/media?after=nonsense", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("TIME/CAMERA/NAME"))
            }
        }
    }

    @Test func versionedFilesAreCachedForAYearAndRevalidateTo304() async throws {
        try await Self.withApp { client, photos, _ in
            try await Self.save([1_700_000_000], to: photos)
            let entry = try #require(try await Self.list(client, "/v1/media").entries.first)
            let versioned = "/v1/media/\(entry.name)?v=\(entry.version)"
            let first = try await client.execute(uri: versioned, method: .get) { $0 }
            #expect(first.status == .ok)
            #expect(first.headers[.cacheControl] == "private, max-age=31536000, immutable")
            let etag = try #require(first.headers[.eTag])
            #expect(etag == "\"\(entry.version)\"" && !etag.hasPrefix("W/"), "a strong validator")
            let again = try await client.execute(uri: versioned, method: .get, headers: [.ifNoneMatch: etag]) { $0 }
            #expect(again.status == .notModified)
            #expect(again.body.readableBytes == 0)
            #expect(again.headers[.eTag] == etag)
            // Without the version (or with another) the same ETag, but revalidated each time.
            for uri in ["/v1/media/\(entry.name)", "/v1/media/\(entry.name)?v=0000", "/v1/photos/\(entry.name)"] {
                let plain = try await client.execute(uri: uri, method: .get) { $0 }
                #expect(plain.headers[.cacheControl] == "no-cache", "\(uri)")
                #expect(plain.headers[.eTag] == etag, "\(uri)")
            }
            #expect(try await client.execute(uri: versioned, method: .head, headers: [.ifNoneMatch: etag]) { $0.status } == .notModified)
            // Rendered with image options it is another answer: no ETag of the file.
            let resized = try await client.execute(uri: "/v1/media/\(entry.name)?max=100", method: .get) { $0 }
            #expect(resized.headers[.eTag] == nil)
        }
    }

    @Test func aNameSavedAgainAfterADeleteHasAnotherVersion() async throws {
        try await Self.withApp { client, photos, _ in
            // A pattern without {ms} or {seq}: the second save takes the freed name.
            let old = try await Self.save([1_700_000_000], to: photos, pattern: "fixed.jpg")[0]
            let before = try #require(try await Self.list(client, "/v1/media").entries.first)
            try await photos.delete(named: old.name)
            try await Self.save([1_700_000_100], to: photos, pattern: "fixed.jpg", color: Geometry.Color(red: 250, green: 20, blue: 20))
            let after = try #require(try await Self.list(client, "/v1/media").entries.first)
            #expect(after.name == before.name)
            #expect(after.version != before.version)
            // The old version's URL is not answered as if it were still that file.
            let stale = try await client.execute(uri: "/v1/media/fixed.jpg?v=\(before.version)", method: .get,
                                                 headers: [.ifNoneMatch: "\"\(before.version)\""]) { $0 }
            #expect(stale.status == .ok)
            #expect(stale.headers[.cacheControl] == "no-cache")
            let thumbnail = try await client.execute(uri: "\(after.poster)?max=64&v=\(after.version)", method: .get) { $0 }
            let oldThumbnail = try await client.execute(uri: "\(before.poster)?max=64&v=\(before.version)", method: .get) { $0 }
            #expect(thumbnail.headers[.eTag] == oldThumbnail.headers[.eTag])  // both name the file there now
            #expect(thumbnail.headers[.eTag]?.contains(after.version) == true)
        }
    }

    @Test func aThumbnailIsRenderedOncePerVersionAndSize() async throws {
        try await Self.withApp { client, photos, services in
            try await Self.save([1_700_000_000, 1_700_000_001], to: photos)
            let entries = try await Self.list(client, "/v1/media").entries
            func thumbnail(_ entry: Entry, _ size: Int, headers: HTTPFields = [:]) async throws -> TestResponse {
                try await client.execute(uri: "\(entry.poster)?width=\(size)&height=\(size)&fit=cover&v=\(entry.version)",
                                         method: .get, headers: headers) { $0 }
            }
            let first = try await thumbnail(entries[0], 128)
            #expect(first.status == .ok)
            #expect(first.headers[.cacheControl] == "private, max-age=31536000, immutable")
            #expect(try JPEGDecoder().header(Array(first.body.readableBytesView)).size == FrameSize(width: 128, height: 128))
            #expect(await services.thumbnails.counters.renders == 1)

            // Again, at once from several clients, and by HEAD: no render.
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<6 { group.addTask { try await thumbnail(entries[0], 128).body.readableBytes } }
                for try await bytes in group { #expect(bytes == first.body.readableBytes) }
            }
            #expect(try await client.execute(uri: "\(entries[0].poster)?width=128&height=128&fit=cover&v=\(entries[0].version)",
                                              method: .head) { $0.status } == .ok)
            #expect(await services.thumbnails.counters.renders == 1, "a second request rendered again")
            let revalidated = try await thumbnail(entries[0], 128, headers: [.ifNoneMatch: try #require(first.headers[.eTag])])
            #expect(revalidated.status == .notModified)

            // Another size, another file: one render each; then cached too.
            _ = try await thumbnail(entries[0], 256)
            _ = try await thumbnail(entries[1], 128)
            _ = try await thumbnail(entries[1], 128)
            let counters = await services.thumbnails.counters
            #expect(counters.renders == 3)
            #expect(counters.hits >= 8)
            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            #expect(metrics.contains("camd_thumbnails_rendered_total 3\n"))
        }
    }

    @Test func theCacheStaysWithinItsBytes() async throws {
        let cache = ThumbnailCache(limit: 8_000)
        for index in 0..<40 {
            _ = try await cache.jpeg("k\(index)") { [UInt8](repeating: UInt8(index), count: 500) }
        }
        let counters = await cache.counters
        #expect(counters.bytes <= 8_000)
        #expect(counters.evictions > 0)
        #expect(counters.renders == 40)
        // The newest is kept; asking again is a hit.
        _ = try await cache.jpeg("k39") { Issue.record("rendered again"); return [] }
        #expect(await cache.counters.hits == 1)
    }

    @Test func aContactSheetOfChosenNames() async throws {
        try await Self.withApp { client, photos, _ in
            let saved = try await Self.save((0..<6).map { 1_700_000_000 + Double($0) }, to: photos)
            let names = [saved[4].name, saved[1].name, saved[1].name].map {
                $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0
            }
            let sheet = try await client.execute(uri: "/v1/media/contact-sheet?names=\(names.joined(separator: ","))&cols=2&cell=64",
                                                 method: .get) { $0 }
            #expect(sheet.status == .ok, "\(String(buffer: sheet.body))")
            // Two chosen (one named twice), two columns: one row of two cells.
            let size = try JPEGDecoder().header(Array(sheet.body.readableBytesView)).size
            let all = try await client.execute(uri: "/v1/media/contact-sheet?cols=2&cell=64", method: .get) { $0 }
            let allSize = try JPEGDecoder().header(Array(all.body.readableBytesView)).size
            #expect(size.width == allSize.width && size.height < allSize.height, "\(size) vs all six: \(allSize)")

            for (uri, status, words) in [
                ("/v1/media/contact-sheet?names=nope.jpg", HTTPResponse.Status.notFound, "nope.jpg"),
                ("/v1/media/contact-sheet?names=,", .badRequest, "names"),
                ("/v1/media/contact-sheet?names=\(names[0])&camera=synth", .badRequest, "camera"),
            ] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == status, "\(uri)")
                    #expect(String(buffer: response.body).contains(words), "\(uri): \(String(buffer: response.body))")
                }
            }
        }
    }

    @Test func thePageAndItsFilesAreServed() async throws {
        try await Self.withApp { client, _, _ in
            let page = try await client.execute(uri: "/media", method: .get) { $0 }
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            #expect(html.contains("/assets/camd-media.js") && html.contains("/assets/camd-media.css"))
            #expect(!html.contains("<script>"), "no inline script under the CSP")
            #expect(page.headers[HTTPField.Name("Content-Security-Policy")!] != nil)
            for (name, type) in [("camd-media.js", "text/javascript; charset=utf-8"), ("camd-media.css", "text/css; charset=utf-8")] {
                #expect(try await client.execute(uri: "/assets/\(name)", method: .get) { $0.headers[.contentType] } == type)
            }
        }
    }
}
