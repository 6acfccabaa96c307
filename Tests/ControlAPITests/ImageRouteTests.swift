import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import JPEG
import Testing
import VideoCore

/// Geometry, overlays and contact sheets through the routes, on the synthetic source.
@Suite struct ImageRouteTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-image-routes-\(UInt32.random(in: 0...UInt32.max))").path

    func withApp(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let settings = CameraSettings(id: "synth", device: FrameSources.syntheticName, size: FrameSize(width: 640, height: 480), fps: 30)
        let cameras = Cameras([CaptureSession(settings: settings)])
        await cameras.sessions[0].start()
        let app = Application(router: buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test"))))
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await app.test(.router, body)
        await cameras.sessions[0].stop()
    }

    func size(_ buffer: ByteBuffer) throws -> FrameSize {
        try JPEGDecoder().header(Array(buffer.readableBytesView)).size
    }

    func message(_ buffer: ByteBuffer) -> String {
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [String: Any]
        return ((object?["error"] as? [String: Any])?["message"] as? String) ?? ""
    }

    @Test func snapshotGeometry() async throws {
        try await withApp { client in
            for (query, expected) in [("width=160&height=160&fit=cover", FrameSize(width: 160, height: 160)),
                                      ("width=160&height=160&fit=contain", FrameSize(width: 160, height: 120)),
                                      ("max=200", FrameSize(width: 200, height: 150)),
                                      ("rotate=90", FrameSize(width: 480, height: 640)),
                                      ("crop=0,0,320,240", FrameSize(width: 320, height: 240))] {
                try await client.execute(uri: "/v1/cameras/synth/snapshot?\(query)", method: .get) { response in
                    #expect(response.status == .ok, "\(query)")
                    let got = try size(response.body)
                    #expect(got == expected, "\(query)")
                }
            }
        }
    }

    @Test func badImageParametersAreNamed() async throws {
        try await withApp { client in
            for (query, parameter) in [("width=0", "width"), ("rotate=45", "rotate"), ("fit=zoom", "fit"),
                                       ("crop=600,0,100,100", "crop"), ("interpolation=cubic", "interpolation"),
                                       ("zoom=2", "zoom"), ("overlay_corner=middle", "overlay_corner")] {
                try await client.execute(uri: "/v1/cameras/synth/snapshot?\(query)", method: .get) { response in
                    #expect(response.status == .badRequest, "\(query)")
                    #expect(message(response.body).contains(parameter), "\(query): \(message(response.body))")
                }
            }
        }
    }

    @Test func overlaysDrawText() async throws {
        try await withApp { client in
            let plain = try await client.execute(uri: "/v1/cameras/synth/snapshot?max=320", method: .get) { Array($0.body.readableBytesView) }
            let labelled = try await client.execute(uri: "/v1/cameras/synth/snapshot?max=320&overlay=%25Y-%25m-%25d%20%7Bcamera%7D&overlay_corner=top-left",
                                                    method: .get) { Array($0.body.readableBytesView) }
            let a = try JPEGDecoder().decodeRGB(plain).pixels, b = try JPEGDecoder().decodeRGB(labelled).pixels
            // The top-left corner differs (text in a box); the right side does not. (Rows above
            // the bottom eighth, which the synthetic source's moving square crosses.)
            let corner = (0..<20).flatMap { y in (0..<60).map { x in (y * 320 + x) * 3 } }
            let far = (150..<190).flatMap { y in (250..<310).map { x in (y * 320 + x) * 3 } }
            #expect(corner.contains { abs(Int(a[$0]) - Int(b[$0])) > 40 })
            #expect(far.allSatisfy { abs(Int(a[$0]) - Int(b[$0])) <= 12 })
        }
    }

    /// A photo saved with `rotate=exif` keeps its Orientation tag in a thumbnail, so a
    /// viewer turns the thumbnail as it turns the photo; `rotate=exif` in the request replaces it.
    @Test func photoThumbnailsKeepTheSavedOrientation() async throws {
        try await withApp { client in
            let name = try await client.execute(uri: "/v1/cameras/synth/snapshot?rotate=exif&flip=h", method: .post) { response in
                #expect(response.status == .created)
                let record = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
                return record?["name"] as? String ?? ""
            }
            try await client.execute(uri: "/v1/photos/\(name)", method: .get) { response in
                #expect(EXIF.Orientation(readingFrom: Array(response.body.readableBytesView)) == .upMirrored, "the saved photo")
            }
            try await client.execute(uri: "/v1/photos/\(name)?max=100", method: .get) { response in
                let thumbnail = Array(response.body.readableBytesView)
                let thumbnailSize = try size(response.body)
                #expect(thumbnailSize == FrameSize(width: 100, height: 75))
                #expect(EXIF.Orientation(readingFrom: thumbnail) == .upMirrored, "the thumbnail keeps the tag")
            }
            try await client.execute(uri: "/v1/photos/\(name)?max=100&rotate=exif&flip=v", method: .get) { response in
                #expect(EXIF.Orientation(readingFrom: Array(response.body.readableBytesView)) == .downMirrored, "the request's own tag wins")
            }
        }
    }

    @Test func photoThumbnailsAndContactSheets() async throws {
        try await withApp { client in
            try await client.execute(uri: "/v1/photos/contact-sheet", method: .get) { response in
                #expect(response.status == .notFound)
            }
            var names: [String] = []
            for _ in 0..<3 {
                names.append(try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post) { response in
                    let record = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
                    return record?["name"] as? String ?? ""
                })
            }
            try await client.execute(uri: "/v1/photos/\(names[0])?max=100", method: .get) { response in
                let thumbnail = try size(response.body)
                #expect(thumbnail == FrameSize(width: 100, height: 75))
            }
            try await client.execute(uri: "/v1/photos/contact-sheet?cols=2&cell=64", method: .get) { response in
                #expect(response.status == .ok)
                let sheet = try size(response.body)
                #expect(sheet.width > 2 * 64 && sheet.width < 3 * 64, "two columns: \(sheet)")
                #expect(sheet.height > 2 * 64, "two rows for three photos: \(sheet)")
            }
            try await client.execute(uri: "/v1/photos/contact-sheet?cols=0", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(message(response.body).contains("cols"))
            }
        }
    }

    /// Local time: the clock for the same day, the date and minute for another.
    @Test func contactSheetLabelsSayTheTimeTodayAndTheDateBefore() {
        func local(_ month: Int32, _ day: Int32, _ hour: Int32, _ minute: Int32, _ second: Int32) -> Double {
            var at = tm()
            at.tm_year = 2026 - 1900; at.tm_mon = month - 1; at.tm_mday = day
            at.tm_hour = hour; at.tm_min = minute; at.tm_sec = second; at.tm_isdst = -1
            return Double(mktime(&at))
        }
        let photo = local(11, 21, 6, 4, 45)
        #expect(contactSheetLabel(for: photo + 0.9, now: local(11, 21, 23, 0, 0)) == "06:04:45")
        #expect(contactSheetLabel(for: photo, now: local(11, 22, 0, 30, 0)) == "11-21 06:04")
        #expect(contactSheetLabel(for: local(1, 2, 3, 4, 5), now: local(11, 22, 0, 30, 0)) == "01-02 03:04")
    }
}
