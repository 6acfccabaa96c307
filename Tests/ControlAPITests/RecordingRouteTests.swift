import APIModel
import CamdTestSupport
import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import JPEG
import Testing
import Video
import VideoCore

/// Recordings and the media library through the routes, on the synthetic source:
/// what is recorded plays, is listed with photos, and is served, ranged, turned and deleted.
@Suite struct RecordingRouteTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-recording-routes-\(UInt32.random(in: 0...UInt32.max))").path

    func withApp(rotate: Geometry.Rotation = .upright,
                 _ body: @escaping @Sendable (any TestClientProtocol, CaptureSession) async throws -> Void) async throws {
        let settings = CameraSettings(id: "synth", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: 30,
                                      image: ImageSettings(geometry: Geometry(rotate: rotate)))
        let cameras = Cameras([CaptureSession(settings: settings)])
        await cameras.sessions[0].start()
        let app = Application(router: buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test"))))
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await app.test(.router) { client in try await body(client, cameras.sessions[0]) }
        await cameras.sessions[0].stop()
    }

    static func decode<T: Decodable>(_ type: T.Type, _ buffer: ByteBuffer) throws -> T {
        try APIJSON.decoder().decode(type, from: Data(buffer.readableBytesView))
    }

    static func message(_ buffer: ByteBuffer) -> String {
        (try? decode(ErrorBody.self, buffer).error.message) ?? String(buffer: buffer)
    }

    /// Records `seconds` through the API and returns the status once the recording has ended by itself.
    static func record(_ client: any TestClientProtocol, seconds: Double) async throws -> RecordingStatus {
        try await client.execute(uri: "/v1/cameras/synth/recordings", method: .post,
                                 body: ByteBuffer(string: #"{"duration": "\#(seconds)s"}"#)) { response in
            #expect(response.status == .created, "\(message(response.body))")
        }
        var status = RecordingStatus()
        try await waitUntil(limit: .seconds(seconds + 20), every: .milliseconds(100)) {
            status = try await client.execute(uri: "/v1/cameras/synth/recordings", method: .get) { try decode(RecordingStatus.self, $0.body) }
            return status.state == .off
        }
        #expect(status.state == .off, "the recording did not end")
        return status
    }

    @Test func aRecordingForADurationIsSavedListedWithPhotosAndPlays() async throws {
        try await withApp { client, session in
            // An idle camera with video settings encodes nothing.
            try await Task.sleep(for: .milliseconds(500))
            #expect(await session.status().video.framesEncoded == 0)
            #expect(await session.status().video.running == false)
            let idle = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            #expect(idle.contains("camd_video_frames_encoded_total{camera=\"synth\"} 0\n"))
            #expect(idle.contains("camd_video_running{camera=\"synth\"} 0\n"))

            let status = try await Self.record(client, seconds: 2)
            let movie = try #require(status.saved.first)
            #expect(status.saved.count == 1)
            #expect(movie.kind == .video)
            #expect(abs((movie.duration ?? 0) - 2) < 0.2, "duration \(movie.duration ?? 0)")
            #expect(movie.width == 320 && movie.height == 240)
            // The frames of 2 s at 30 fps, as ffprobe counts them by decoding. A loaded machine
            // captures fewer than 30 a second (one run of the whole suite on 2 busy cores: 51), so
            // three in four will do; none is in the file that the stage did not encode.
            let encoded = await session.status().video.framesEncoded
            let path = root + "/synth/" + movie.name
            let frames = await TestPhotos.countFramesWithFFprobe(path) ?? -1
            #expect(frames >= 45 && frames <= 61 && frames <= encoded, "\(frames) frames in the file, \(encoded) encoded")
            #expect(await session.status().video.encoder != nil)
            let after = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            #expect(!after.contains("camd_video_frames_encoded_total{camera=\"synth\"} 0\n"))
            #expect(after.contains("camd_recording{camera=\"synth\"} 0\n"))

            // One library: photos and movies together, each kind on its own, and /v1/photos as before.
            try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post) { #expect($0.status == .created || $0.status == .ok) }
            let all = try await client.execute(uri: "/v1/media", method: .get) { try Self.decode([PhotoRecord].self, $0.body) }
            #expect(Set(all.map(\.kind)) == [.photo, .video])
            let videos = try await client.execute(uri: "/v1/media?kind=video", method: .get) { try Self.decode([PhotoRecord].self, $0.body) }
            #expect(videos.map(\.name) == [movie.name])
            let listed = try await client.execute(uri: "/v1/media?kind=video", method: .get) { String(buffer: $0.body) }
            #expect(listed.contains("\"poster\" : \"/v1/media/\(movie.name)/thumbnail\""), "\(listed)")
            let photos = try await client.execute(uri: "/v1/photos", method: .get) { try Self.decode([PhotoRecord].self, $0.body) }
            #expect(photos.allSatisfy { $0.kind == .photo } && photos.count == 1)
            try await client.execute(uri: "/v1/photos/\(movie.name)", method: .get) { #expect($0.status == .notFound) }

            // Served whole and by range, as players ask.
            let whole = try await client.execute(uri: "/v1/media/\(movie.name)", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "video/mp4")
                return Array(response.body.readableBytesView)
            }
            #expect(whole.count == movie.bytes)
            try await client.execute(uri: "/v1/media/\(movie.name)", method: .get, headers: [.range: "bytes=4-11"]) { response in
                #expect(response.status == .partialContent)
                #expect(response.headers[.contentRange] == "bytes 4-11/\(movie.bytes)")
                #expect(Array(response.body.readableBytesView) == Array(whole[4...11]))
                #expect(String(decoding: whole[4..<8], as: UTF8.self) == "ftyp")
            }
            try await client.execute(uri: "/v1/media/\(movie.name)", method: .get, headers: [.range: "bytes=\(movie.bytes)-"]) {
                #expect($0.status == .rangeNotSatisfiable)
            }

            // The thumbnail is a frame fitted into the box; a time past the end is refused, naming it.
            try await client.execute(uri: "/v1/media/\(movie.name)/thumbnail?max=160&at=1.5", method: .get) { response in
                #expect(response.status == .ok)
                let size = try JPEGDecoder().header(Array(response.body.readableBytesView)).size
                #expect(size == FrameSize(width: 160, height: 120))
            }
            try await client.execute(uri: "/v1/media/\(movie.name)/thumbnail?at=30", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(Self.message(response.body).contains("at=30"))
            }
            // The contact sheet shows the movie by its poster frame beside the photo.
            try await client.execute(uri: "/v1/media/contact-sheet?cols=2&cell=64", method: .get) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/v1/media/\(movie.name)", method: .delete) { #expect($0.status == .noContent) }
            #expect(!FileManager.default.fileExists(atPath: root + "/synth/" + movie.name))
        }
    }

    @Test func aRotatedCameraRecordsUprightByTheTrackMatrixAndItsThumbnailIsPortrait() async throws {
        try await withApp(rotate: .clockwise90) { client, _ in
            let movie = try #require(try await Self.record(client, seconds: 1).saved.first)
            #expect(movie.rotate == 90)
            #expect(movie.width == 240 && movie.height == 320)
            let file = try VideoFile(path: root + "/synth/" + movie.name)
            #expect(file.info.size == FrameSize(width: 320, height: 240), "the pixels are as captured")
            try await client.execute(uri: "/v1/media/\(movie.name)/thumbnail?max=160", method: .get) { response in
                let size = try JPEGDecoder().header(Array(response.body.readableBytesView)).size
                #expect(size == FrameSize(width: 120, height: 160))
            }
        }
    }

    @Test func startingTwiceStoppingNothingAndBadBodiesAreRefusedWithTheReason() async throws {
        try await withApp { client, _ in
            try await client.execute(uri: "/v1/cameras/synth/recordings/stop", method: .post) { response in
                #expect(response.status == .conflict)
                #expect(Self.message(response.body).contains("not recording"))
            }
            for (body, word) in [(#"{"duration": 0}"#, "duration"), (#"{"duration": "soon"}"#, "duration"), (#"{"length": 5}"#, "length")] {
                try await client.execute(uri: "/v1/cameras/synth/recordings", method: .post, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest, "\(body)")
                    #expect(Self.message(response.body).contains(word), "\(body): \(Self.message(response.body))")
                }
            }
            try await client.execute(uri: "/v1/cameras/synth/recordings", method: .post) { #expect($0.status == .created) }
            try await client.execute(uri: "/v1/cameras/synth/recordings", method: .post) { response in
                #expect(response.status == .conflict)
                #expect(Self.message(response.body).contains("recording already"))
            }
            try await Task.sleep(for: .seconds(1))
            let stopped = try await client.execute(uri: "/v1/cameras/synth/recordings/stop", method: .post) { response in
                #expect(response.status == .ok)
                return try Self.decode(RecordingStatus.self, response.body)
            }
            #expect(stopped.state == .off)
            #expect(stopped.saved.count == 1)
            try await client.execute(uri: "/v1/cameras/nope/recordings", method: .post) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/v1/media?kind=audio", method: .get) { #expect($0.status == .badRequest) }
        }
    }
}
