import APIModel
import CamdTestSupport
import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import JPEG
import Testing
import VideoCore

/// A camera's configured image defaults and location through the snapshot routes.
@Suite struct ImageDefaultsRouteTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-image-defaults-\(UInt32.random(in: 0...UInt32.max))").path

    /// 640x480 frames; by default turned a quarter and at most 200 pixels long, stamped top-left, at a known place.
    func withApp(image: ImageSettings = ImageSettings(geometry: Geometry(longestSide: 200, rotate: .clockwise90),
                                                      overlay: "{camera}", overlayCorner: .topLeft),
                 location: EXIF.GPSPosition? = try! EXIF.GPSPosition(latitude: -33.8688, longitude: 151.2093, altitude: -3),
                 _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let settings = CameraSettings(id: "synth", device: FrameSources.syntheticName, size: FrameSize(width: 640, height: 480),
                                      fps: 30, image: image, location: location)
        let cameras = Cameras([CaptureSession(settings: settings)])
        await cameras.sessions[0].start()
        let app = Application(router: buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test"))))
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await app.test(.router, body)
        await cameras.sessions[0].stop()
    }

    func size(_ bytes: [UInt8]) throws -> FrameSize { try JPEGDecoder().header(bytes).size }

    @Test func snapshotsFollowTheDefaultsAndQueryParametersOverrideThemKeyByKey() async throws {
        try await withApp { client in
            for (query, expected) in [
                ("", FrameSize(width: 150, height: 200)),                     // the defaults: rotate 90, max 200
                ("rotate=0", FrameSize(width: 200, height: 150)),             // rotate replaced, max kept
                ("max=400", FrameSize(width: 300, height: 400)),              // max replaced, rotate kept
                ("width=96", FrameSize(width: 96, height: 128)),              // a new key on top of both
                ("rotate=exif", FrameSize(width: 200, height: 150)),          // the configured turn left to the viewer
            ] {
                try await client.execute(uri: "/v1/cameras/synth/snapshot?\(query)", method: .get) { response in
                    #expect(response.status == .ok, "\(query)")
                    let got = try size(Array(response.body.readableBytesView))
                    #expect(got == expected, "\(query)")
                }
            }
        }
    }

    @Test func theDefaultOverlayIsDrawnAndAnEmptyOverlayTurnsItOff() async throws {
        try await withApp { client in
            let stamped = try await client.execute(uri: "/v1/cameras/synth/snapshot?rotate=0", method: .get) { Array($0.body.readableBytesView) }
            let plain = try await client.execute(uri: "/v1/cameras/synth/snapshot?rotate=0&overlay=", method: .get) { Array($0.body.readableBytesView) }
            let a = try JPEGDecoder().decodeRGB(stamped).pixels, b = try JPEGDecoder().decodeRGB(plain).pixels
            // 200x150: the top-left corner holds the box in one and the bars in the other.
            let corner = (2..<12).flatMap { y in (2..<20).map { x in (y * 200 + x) * 3 } }
            #expect(corner.contains { abs(Int(a[$0]) - Int(b[$0])) > 40 })
            let far = (60..<110).flatMap { y in (120..<195).map { x in (y * 200 + x) * 3 } }  // above the moving square
            #expect(far.allSatisfy { abs(Int(a[$0]) - Int(b[$0])) <= 12 })
        }
    }

    @Test func savedPhotosFollowTheDefaultsAndCarryTheLocation() async throws {
        try await withApp { client in
            let record = try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post) { response in
                #expect(response.status == .created)
                return try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
            }
            #expect(record["width"] as? Int == 150 && record["height"] as? Int == 200)
            let name = try #require(record["name"] as? String)
            try await client.execute(uri: "/v1/photos/\(name)", method: .get) { response in
                let bytes = Array(response.body.readableBytesView)
                let got = try size(bytes)
                #expect(got == FrameSize(width: 150, height: 200), "served as saved: the defaults are not applied twice")
                let position = try #require(EXIFReadBack.position(in: bytes))
                #expect(abs(position.latitude + 33.8688) < 1e-6 && abs(position.longitude - 151.2093) < 1e-6)
                #expect(position.altitude == -3)
            }
            // A thumbnail of the saved photo is a new JPEG: it keeps the position too.
            try await client.execute(uri: "/v1/photos/\(name)?max=64", method: .get) { response in
                let bytes = Array(response.body.readableBytesView)
                #expect(try size(bytes) == FrameSize(width: 48, height: 64))
                let position = try #require(EXIFReadBack.position(in: bytes), "the thumbnail lost the GPS position")
                #expect(abs(position.latitude + 33.8688) < 1e-6 && abs(position.longitude - 151.2093) < 1e-6)
            }
        }
    }

    @Test func withoutDefaultsSnapshotsAreAsCapturedAndHaveNoGPS() async throws {
        try await withApp(image: ImageSettings(), location: nil) { client in
            try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post) { response in
                #expect(response.status == .created)
            }
            try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .get) { response in
                let bytes = Array(response.body.readableBytesView)
                let got = try size(bytes)
                #expect(got == FrameSize(width: 640, height: 480))
                #expect(EXIFReadBack.entries(in: bytes)[0x8825] == nil)
            }
        }
    }

    /// `image.chroma`: the YUYV camera's JPEGs are 4:2:0 unless configured to keep its 4:2:2,
    /// whether served as captured, rendered to a size, or saved.
    @Test func snapshotsAreHalvedTo420UntilTheCamerasOwnChromaIsConfigured() async throws {
        try await withApp(image: ImageSettings(), location: nil) { client in
            func subsamplings() async throws -> [ChromaSubsampling?] {
                var found: [ChromaSubsampling?] = []
                for uri in ["/v1/cameras/synth/snapshot", "/v1/cameras/synth/snapshot?max=200"] {
                    try await client.execute(uri: uri, method: .get) { response in
                        #expect(response.status == .ok)
                        found.append(try JPEGDecoder().header(Array(response.body.readableBytesView)).subsampling)
                    }
                }
                let name = try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post) { response in
                    #expect(response.status == .created)
                    return try APIJSON.decoder().decode(PhotoRecord.self, from: Data(response.body.readableBytesView)).name
                }
                try await client.execute(uri: "/v1/photos/\(name)", method: .get) { response in
                    found.append(try JPEGDecoder().header(Array(response.body.readableBytesView)).subsampling)
                }
                return found
            }
            #expect(try await subsamplings() == [.s420, .s420, .s420])
            try await client.execute(uri: "/v1/cameras/synth/configure", method: .post,
                                     body: ByteBuffer(string: #"{"image": {"chroma": "camera"}}"#)) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/v1/cameras/synth", method: .get) { response in
                let camera = try APIJSON.decoder().decode(CameraDetail.self, from: Data(response.body.readableBytesView))
                #expect(camera.settings.image.chroma == .camera)
            }
            #expect(try await subsamplings() == [.s422, .s422, .s422])
        }
    }

    @Test func streamPartsCarryTheOverlaidCopy() {
        let plain: [UInt8] = [0xFF, 0xD8, 1, 0xFF, 0xD9], overlaid: [UInt8] = [0xFF, 0xD8, 2, 2, 0xFF, 0xD9]
        var frame = EncodedFrame(jpeg: plain, sequence: 7, captureTime: 1, monotonicTime: 1, size: FrameSize(width: 2, height: 2),
                                 sourceFormat: .yuyv, encodeSeconds: 0, streamJPEG: overlaid)
        var part = MJPEGStream.part(frame)
        var text = part.readString(length: part.readableBytes - overlaid.count - 2) ?? ""
        #expect(text.contains("Content-Length: \(overlaid.count)\r\n"))
        #expect(part.readBytes(length: overlaid.count) == overlaid)
        frame.streamJPEG = nil
        part = MJPEGStream.part(frame)
        text = part.readString(length: part.readableBytes - plain.count - 2) ?? ""
        #expect(text.contains("Content-Length: \(plain.count)\r\n"))
        #expect(part.readBytes(length: plain.count) == plain)
    }
}
