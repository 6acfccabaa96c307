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

/// Timelapse movies through the routes: a job made from saved photos runs in the
/// background, its progress is polled, the movie is served from the media library, and
/// every refusal names what is wrong.
@Suite struct TimelapseRouteTests {
    static let camera = "synth"

    /// The routes over a scratch photo folder and a camera that is never started.
    static func withApp(_ body: @escaping @Sendable (any TestClientProtocol, PhotoOutput, String) async throws -> Void) async throws {
        let root = try TestPhotos.temporaryFolder("timelapse-routes")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let settings = CameraSettings(id: camera, device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: 30)
        let photos = PhotoOutput(root: root)
        let app = Application(router: buildRouter(APIServices(cameras: Cameras([CaptureSession(settings: settings)]), photos: photos,
                                                              daemon: DaemonInfo(version: "test"))))
        try await app.test(.router) { client in try await body(client, photos, root) }
    }

    /// Saves `count` photos a second apart from `start`, the ones `odd` picks at 160x240.
    static func save(_ count: Int, to photos: PhotoOutput, size: FrameSize = FrameSize(width: 320, height: 240),
                     start: Double = 1_700_000_000, odd: (Int) -> Bool = { _ in false }) async throws {
        let usual = try TestPhotos.jpeg(size, Geometry.Color(red: 200, green: 200, blue: 200))
        let tall = FrameSize(width: 160, height: 240)
        let other = try TestPhotos.jpeg(tall, Geometry.Color(red: 200, green: 200, blue: 200))
        for index in 0..<count {
            let isOdd = odd(index)
            _ = try await photos.save(isOdd ? other : usual, camera: camera, settings: PhotoSettings(), captureTime: start + Double(index),
                                      sequence: UInt32(index), width: isOdd ? tall.width : size.width, height: isOdd ? tall.height : size.height)
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ buffer: ByteBuffer) throws -> T {
        try APIJSON.decoder().decode(type, from: Data(buffer.readableBytesView))
    }

    static func error(_ buffer: ByteBuffer) -> ErrorBody.Detail {
        (try? decode(ErrorBody.self, buffer).error) ?? ErrorBody(code: "", message: String(buffer: buffer)).error
    }

    static func post(_ client: any TestClientProtocol, _ body: String) async throws -> TimelapseJob {
        try await client.execute(uri: "/v1/timelapses", method: .post, body: ByteBuffer(string: body)) { response in
            #expect(response.status == .accepted, "\(error(response.body).message)")
            let job = try decode(TimelapseJob.self, response.body)
            #expect(response.headers[.location] == "/v1/timelapses/\(job.id)")
            return job
        }
    }

    static func job(_ client: any TestClientProtocol, _ id: String) async throws -> TimelapseJob {
        try await client.execute(uri: "/v1/timelapses/\(id)", method: .get) { try decode(TimelapseJob.self, $0.body) }
    }

    /// Polls the job until `done` holds, as camctl does.
    static func wait(_ client: any TestClientProtocol, _ id: String, until done: (TimelapseJob) -> Bool) async throws -> TimelapseJob {
        var job = try await Self.job(client, id)
        try await waitUntil(limit: .seconds(60), every: .milliseconds(5)) {
            job = try await Self.job(client, id)
            return done(job)
        }
        return job
    }

    static func nonPhotos(in root: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + camera)) ?? []).filter { !$0.hasSuffix(".jpg") }
    }

    @Test func aTimelapseRunsInTheBackgroundAndItsMovieIsInTheMediaLibrary() async throws {
        try await Self.withApp { client, photos, root in
            try await Self.save(8, to: photos, odd: { $0 == 3 })
            let queued = try await Self.post(client, #"{"camera": "synth", "fps": 8}"#)
            #expect(queued.framesTotal == 8 && queued.fps == 8 && queued.camera == Self.camera)
            #expect(queued.state == .queued || queued.state == .running)
            let job = try await Self.wait(client, queued.id) { $0.state.isFinished }
            #expect(job.state == .done, "\(job.error ?? "")")
            #expect(job.framesDone == 8 && job.framesSkipped == 0 && job.size == "320x240")
            let name = try #require(job.name)
            #expect(name.hasPrefix("synth-timelapse-") && name.hasSuffix(".mp4"))
            #expect(job.finishedAt != nil && job.startedAt != nil)

            let listed = try await client.execute(uri: "/v1/timelapses", method: .get) { try Self.decode([TimelapseJob].self, $0.body) }
            #expect(listed.map(\.id) == [job.id])
            let movies = try await client.execute(uri: "/v1/media?kind=video", method: .get) { try Self.decode([PhotoRecord].self, $0.body) }
            #expect(movies.map(\.name) == [name])
            #expect(abs((movies.first?.duration ?? 0) - 1) < 0.01, "8 frames at 8 fps")

            let path = root + "/served.mp4"
            try await client.execute(uri: "/v1/media/\(name)", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "video/mp4")
                try Data(response.body.readableBytesView).write(to: URL(fileURLWithPath: path))
            }
            let video = try VideoFile(path: path)
            #expect(video.info.size == FrameSize(width: 320, height: 240))
            // The tall photo (the fourth, 0.375 s to 0.5 s) has bars left and right.
            let frame = try video.frame(at: 0.4)
            #expect(frame.sample(plane: 0, x: 10, y: 120) < 30 && frame.sample(plane: 0, x: 160, y: 120) > 150)

            // Forgetting the job leaves its movie.
            try await client.execute(uri: "/v1/timelapses/\(job.id)", method: .delete) { #expect($0.status == .noContent) }
            try await client.execute(uri: "/v1/timelapses/\(job.id)", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(Self.error(response.body).code == "unknown_timelapse")
            }
            try await client.execute(uri: "/v1/media/\(name)", method: .head) { #expect($0.status == .ok) }
        }
    }

    @Test func noPhotosInTheRangeIs400BeforeAnyJobIsMade() async throws {
        try await Self.withApp { client, photos, _ in
            try await Self.save(2, to: photos, start: 1_000)
            for body in [#"{"camera": "synth", "since": "2026-01-01T00:00:00Z"}"#, #"{"camera": "synth", "until": 1000}"#,
                         #"{"camera": "elsewhere"}"#] {
                try await client.execute(uri: "/v1/timelapses", method: .post, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest, "\(body)")
                    let error = Self.error(response.body)
                    #expect(error.code == "no_photos" && error.message.contains("no photos"), "\(body): \(error.message)")
                }
            }
            let jobs = try await client.execute(uri: "/v1/timelapses", method: .get) { try Self.decode([TimelapseJob].self, $0.body) }
            #expect(jobs.isEmpty)
        }
    }

    @Test func badFieldsAre400NamingTheField() async throws {
        try await Self.withApp { client, photos, _ in
            try await Self.save(1, to: photos)
            let cases: [(body: String, field: String, code: String)] = [
                (#"{"camera": "synth", "fps": 0}"#, "fps", "bad_field"),
                (#"{"camera": "synth", "fps": 500}"#, "fps", "bad_field"),
                (#"{"camera": "synth", "fps": "fast"}"#, "fps", "bad_field"),
                (#"{"camera": "synth", "size": "321x240"}"#, "size", "bad_field"),
                (#"{"camera": "synth", "size": "12x"}"#, "size", "bad_field"),
                (#"{"camera": "synth", "size": "99999x2000"}"#, "size", "bad_field"),
                (#"{"camera": "synth", "size": 640}"#, "size", "bad_field"),
                (#"{"fps": 10}"#, "camera", "bad_field"),
                (#"{"camera": "../synth"}"#, "camera", "bad_field"),
                (#"{"camera": "synth", "fsp": 10}"#, "fsp", "bad_field"),
                (#"{"camera": "synth", "since": "yesterday"}"#, "since", "bad_parameter"),
                (#"{"camera": "synth", "since": 20, "until": 10}"#, "until", "bad_field"),
                (#"{"camera": "synth", "fps": 10,}"#, "comma", "bad_json"),
                (#"{"camera": "synth", "camera": "synth"}"#, "camera", "bad_json"),
                (#"["synth"]"#, "object", "bad_json"),
            ]
            for (body, field, code) in cases {
                try await client.execute(uri: "/v1/timelapses", method: .post, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest, "\(body)")
                    let error = Self.error(response.body)
                    #expect(error.code == code, "\(body): \(error.code) \(error.message)")
                    #expect(error.message.contains(field), "\(body): \(error.message) should name \(field)")
                }
            }
            try await client.execute(uri: "/v1/timelapses/nope", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/v1/timelapses/nope/cancel", method: .post) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/v1/timelapses/nope", method: .delete) { #expect($0.status == .notFound) }
        }
    }

    @Test func cancellingThroughTheAPIStopsTheJobAndLeavesNoFile() async throws {
        try await Self.withApp { client, photos, root in
            try await Self.save(250, to: photos, size: FrameSize(width: 640, height: 480))
            let running = try await Self.post(client, #"{"camera": "synth", "size": "640x480"}"#)
            let midway = try await Self.wait(client, running.id) { $0.framesDone >= 3 || $0.state.isFinished }
            #expect(midway.state == .running)
            try await client.execute(uri: "/v1/timelapses/\(running.id)/cancel", method: .post) { response in
                #expect(response.status == .ok)
                let job = try Self.decode(TimelapseJob.self, response.body)
                #expect(job.state == .cancelled && job.framesDone < 250 && job.name == nil)
            }
            #expect(Self.nonPhotos(in: root).isEmpty, "\(Self.nonPhotos(in: root))")

            // DELETE stops a running job too, and forgets it.
            let second = try await Self.post(client, #"{"camera": "synth", "fps": 30}"#)
            _ = try await Self.wait(client, second.id) { $0.framesDone >= 3 || $0.state.isFinished }
            try await client.execute(uri: "/v1/timelapses/\(second.id)", method: .delete) { #expect($0.status == .noContent) }
            #expect(Self.nonPhotos(in: root).isEmpty, "\(Self.nonPhotos(in: root))")
            let jobs = try await client.execute(uri: "/v1/timelapses", method: .get) { try Self.decode([TimelapseJob].self, $0.body) }
            #expect(jobs.map(\.id) == [running.id])

            // A finished job cannot be cancelled.
            let done = try await Self.post(client, #"{"camera": "synth", "until": 1700000002}"#)
            #expect(try await Self.wait(client, done.id) { $0.state.isFinished }.state == .done)
            try await client.execute(uri: "/v1/timelapses/\(done.id)/cancel", method: .post) { response in
                #expect(response.status == .conflict)
                #expect(Self.error(response.body).code == "timelapse_finished")
            }
        }
    }
}
