import APIModel
import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import Testing
import VideoCore

/// HEAD on every GET route: the same status and headers as GET, no body, and for
/// the snapshot and the stream no frame captured or encoded for it.
@Suite struct HeadRouteTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-head-\(UInt32.random(in: 0...UInt32.max))").path

    /// Headers that differ from one answer to the next by nature: which frame, how long it is.
    static let perAnswer: Set<String> = ["content-length", "x-capture-time", "x-frame-sequence", "x-frame-size", "transfer-encoding"]

    @Test func everyGETRouteAnswersHEADAlike() async throws {
        let settings = CameraSettings(id: "synth", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: 30)
        let cameras = Cameras([CaptureSession(settings: settings)])
        await cameras.sessions[0].start()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let router = buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test")))
        let getRoutes = router.routes.filter { $0.method == .get }.map(\.path.description)
        #expect(getRoutes.count >= 11, "the router lists \(getRoutes)")
        try await Application(router: router).test(.router) { client in
            // A saved photo, so the photo routes have something to show.
            let saved = try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .post) { response in
                #expect(response.status == .created)
                let decoder = JSONDecoder()
                decoder.keyDecodingStrategy = .convertFromSnakeCase
                return try decoder.decode(PhotoRecord.self, from: Data(response.body.readableBytesView)).name
            }
            // A timelapse job of that photo, so the job route has one to show.
            let job = try await client.execute(uri: "/v1/timelapses", method: .post, body: ByteBuffer(string: #"{"camera": "synth"}"#)) { response in
                #expect(response.status == .accepted)
                return try APIJSON.decoder().decode(TimelapseJob.self, from: Data(response.body.readableBytesView)).id
            }
            for route in getRoutes {
                let uri = route.replacingOccurrences(of: "timelapses/{id}", with: "timelapses/\(job)")
                    .replacingOccurrences(of: "assets/{name}", with: "assets/camd-icon.svg")
                    .replacingOccurrences(of: "{id}", with: "synth").replacingOccurrences(of: "{name}", with: saved)
                    // The HLS playlist's route comes first and waits for the first segment, which is then kept.
                    .replacingOccurrences(of: "{media}", with: "0.m4s")
                let path = uri.hasPrefix("/") ? uri : "/" + uri
                // Endless under GET: checked below.
                if path.hasSuffix("/stream") || path.hasSuffix("/video") || path.hasSuffix("/events") { continue }
                let get = try await client.execute(uri: path, method: .get) { $0 }
                let head = try await client.execute(uri: path, method: .head) { $0 }
                #expect(head.status == get.status, "HEAD \(path): \(head.status), GET: \(get.status)")
                #expect(head.status != .notFound, "HEAD \(path) is not routed")
                #expect(head.body.readableBytes == 0, "HEAD \(path) has a body")
                #expect(Self.comparable(head.headers) == Self.comparable(get.headers), "HEAD \(path): \(head.headers), GET: \(get.headers)")
                if get.headers[.contentLength] != nil, !path.hasSuffix("/snapshot") {
                    #expect(head.headers[.contentLength] != nil, "HEAD \(path) has no Content-Length where GET has one")
                }
            }
            // A photo's length is known without rendering anything: HEAD says it exactly.
            let photo = try await client.execute(uri: "/v1/photos/\(saved)", method: .get) { $0 }
            let photoHead = try await client.execute(uri: "/v1/photos/\(saved)", method: .head) { $0 }
            #expect(photoHead.headers[.contentLength] == String(photo.body.readableBytes))
        }
        await cameras.sessions[0].stop()
    }

    @Test func headOnSnapshotAndStreamEncodesNothingAndStartsNothing() async throws {
        let settings = CameraSettings(id: "synth", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: 30)
        let cameras = Cameras([CaptureSession(settings: settings)])
        let session = cameras.sessions[0]
        let router = buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test")))
        try await Application(router: router).test(.router) { client in
            // A stopped camera: GET would start it on demand; HEAD must not.
            try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .head) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/jpeg")
            }
            #expect(await session.status().state == .idle, "HEAD started the camera")

            await session.start()
            let before = await session.status().framesEncoded
            for path in ["/v1/cameras/synth/snapshot", "/v1/cameras/synth/stream", "/v1/cameras/synth/stream?fps=2", "/v1/cameras/synth/video",
                         "/v1/events", "/v1/events?camera=synth"] {
                try await client.execute(uri: path, method: .head) { response in
                    #expect(response.status == .ok, "HEAD \(path)")
                    #expect(response.body.readableBytes == 0)
                }
            }
            #expect(await session.status().streamClients == 0, "HEAD on the stream subscribed")
            #expect(await session.status().video.live.clients.isEmpty, "HEAD on the video joined")
            try await Task.sleep(for: .milliseconds(300))
            #expect(await session.status().framesEncoded == before, "HEAD made the encoders work")
            #expect(try await client.execute(uri: "/v1/cameras/synth/stream", method: .head) { $0.headers[.contentType] }
                    == "multipart/x-mixed-replace; boundary=camdframe")

            // The same checks of the query as GET, with the same status.
            for path in ["/v1/cameras/synth/snapshot?max_age_ms=-1", "/v1/cameras/synth/stream?fps=0", "/v1/cameras/nope/snapshot"] {
                let get = try await client.execute(uri: path, method: .get) { $0.status }
                let head = try await client.execute(uri: path, method: .head) { $0.status }
                #expect(head == get, "HEAD \(path): \(head), GET: \(get)")
                #expect(head != .ok)
            }
        }
        await session.stop()
    }

    static func comparable(_ headers: HTTPFields) -> [String: String] {
        var out: [String: String] = [:]
        for field in headers where !perAnswer.contains(field.name.canonicalName) {
            out[field.name.canonicalName] = field.value
        }
        return out
    }
}

/// A method a path does not take is 405 with `Allow`; a path camd does not have is 404.
@Suite struct MethodNotAllowedTests {
    @Test func aKnownPathWithAnotherMethodIs405WithAllow() async throws {
        let cameras = Cameras([CaptureSession(settings: CameraSettings(id: "synth", device: FrameSources.syntheticName))])
        let router = buildRouter(APIServices(cameras: cameras, photos: PhotoOutput(root: "/nonexistent"), daemon: DaemonInfo(version: "test")))
        try await Application(router: router).test(.router) { client in
            for (method, path, allow) in [(HTTPRequest.Method(rawValue: "TRACE")!, "/v1/status", "GET, HEAD"),
                                          (.delete, "/v1/cameras/synth/snapshot", "GET, HEAD, POST"),
                                          (.post, "/v1/photos/x.jpg", "DELETE, GET, HEAD"),
                                          // A literal segment wins over {name}, as in the router (found by Schemathesis).
                                          (.delete, "/v1/photos/contact-sheet", "GET, HEAD"),
                                          (.put, "/metrics", "GET, HEAD")] {
                try await client.execute(uri: path, method: method) { response in
                    #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                    #expect(response.headers[.allow] == allow, "\(method) \(path)")
                    #expect(String(buffer: response.body).contains("method_not_allowed"))
                }
            }
            try await client.execute(uri: "/v1/nothing-here", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/v1/cameras/synth/snapshot/extra", method: .get) { #expect($0.status == .notFound) }
        }
    }
}
