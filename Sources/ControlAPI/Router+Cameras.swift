import APIModel
import CaptureSession
import Foundation
import HTTPTypes
import Hummingbird
import JPEG
import V4L2
import VideoCore

func camera(_ context: CamdRequestContext, _ services: APIServices) throws -> CaptureSession {
    let id = context.parameters.get("id") ?? ""
    guard let session = services.cameras[id] else { throw APIError.unknownCamera(id, known: services.cameras.ids) }
    return session
}

func addCameraRoutes(_ v1: RouterGroup<CamdRequestContext>, _ services: APIServices) {
    v1.get("cameras") { _, _ in
        var all: [CameraStatus] = []
        for session in services.cameras.sessions { all.append(await session.status()) }
        return try JSONBody.response(all)
    }
    v1.get("cameras/:id") { _, context in
        let session = try camera(context, services)
        return try JSONBody.response(CameraDetail(status: await session.status(), settings: await session.settings))
    }
    v1.post("cameras/:id/start") { request, context in
        let session = try camera(context, services)
        await audit(request, context, services)
        return try JSONBody.response(await session.start())
    }
    v1.post("cameras/:id/stop") { request, context in
        let session = try camera(context, services)
        await audit(request, context, services)
        return try JSONBody.response(await session.stop())
    }
    v1.post("cameras/:id/configure") { request, context in
        let session = try camera(context, services)
        let fields = try await JSONBody.object(request, context: context)
        await audit(request, context, services)
        // Merged inside the camera's actor, on the settings as they are when its turn
        // comes: two concurrent configures both take effect.
        return try JSONBody.response(try await session.configure { current in try ConfigureRequest.apply(fields, to: current) })
    }
    v1.get("cameras/:id/snapshot") { request, context in
        let session = try camera(context, services)
        let settings = await session.settings
        let query = try SnapshotQuery(request, defaults: settings.image)
        let shot = try await session.renderedSnapshot(query.render.image, maxAge: query.maxAge, quality: settings.quality,
                                                      location: settings.location)
        return Response(status: .ok, headers: snapshotHeaders(shot), body: .init(byteBuffer: ByteBuffer(bytes: shot.jpeg)))
    }
    // HEAD answers what GET would (the same checks of the query and the camera, the same
    // status) without starting the camera, capturing or encoding: monitors probe with it.
    v1.head("cameras/:id/snapshot") { request, context in
        let session = try camera(context, services)
        _ = try SnapshotQuery(request, defaults: await session.settings.image)
        try await session.checkServable()
        return headOnly([.contentType: "image/jpeg", .cacheControl: "no-store"])
    }
    v1.post("cameras/:id/snapshot") { request, context in
        let session = try camera(context, services)
        let settings = await session.settings
        let render = try RenderRequest(request, defaults: settings.image)
        await audit(request, context, services)
        let shot = try await session.renderedSnapshot(render.image, quality: settings.quality, location: settings.location)
        do {
            let record = try await services.photos.save(shot.jpeg, camera: session.id, settings: settings.photos,
                                                        captureTime: shot.captureTime, sequence: shot.sequence,
                                                        width: shot.size.width, height: shot.size.height)
            await session.recordPhotoSave(error: nil)
            return try JSONBody.response(record, status: .created)
        } catch let error as PhotoError {
            await session.recordPhotoSave(error: error.description)
            throw APIError(error)
        }
    }
    v1.get("cameras/:id/stream") { request, context in
        let session = try camera(context, services)
        return MJPEGStream.response(try await session.subscribe(), maxFPS: try streamFPS(request))
    }
    // The stream's headers, then the end: no subscription, so no frame is encoded for it.
    v1.head("cameras/:id/stream") { request, context in
        let session = try camera(context, services)
        _ = try streamFPS(request)
        try await session.checkServable()
        return headOnly(MJPEGStream.headers)
    }
    v1.get("cameras/:id/controls") { _, context in
        let session = try camera(context, services)
        return try JSONBody.response(try await session.controls().map(ControlState.init))
    }
    v1.put("cameras/:id/controls") { request, context in
        let session = try camera(context, services)
        let fields = try await JSONBody.object(request, context: context)
        guard !fields.isEmpty else {
            throw APIError.badRequest("give controls to set as a JSON object, such as {\"brightness\": 140}", code: "bad_field")
        }
        // Read as the `controls` setting reads them, so a value is accepted here exactly when configure takes it.
        let controls: [String: String]
        do throws(ValueProblem) {
            controls = try CameraSettings.controlsReader.read(.table(fields))
        } catch {
            throw APIError.badRequest(error.settingError(key: "controls", expected: CameraSettings.controlsReader.expected, value: .table(fields)).description,
                                      code: "bad_field")
        }
        let assignments = controls.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        await audit(request, context, services)
        return try JSONBody.response(try await session.setControls(assignments).map(ControlState.init))
    }
}

/// The query of `GET`/`HEAD .../snapshot`: image options and `max_age_ms`.
struct SnapshotQuery {
    var render: RenderRequest
    /// Seconds; nil for the camera's default.
    var maxAge: Double?

    init(_ request: Request, defaults: ImageSettings) throws {
        render = try RenderRequest(request, allowing: ["max_age_ms"], defaults: defaults)
        maxAge = try request.uri.queryParameters.get("max_age_ms").map { text -> Double in
            guard let seconds = Self.maxAgeSeconds(text) else {
                throw APIError.badRequest("max_age_ms must be a number of milliseconds from 0 to 3600000; got \"\(text)\"", code: "bad_parameter")
            }
            return seconds
        }
    }

    /// A `max_age_ms` value in seconds; nil unless it is 0 to 3,600,000 ms. The router's and
    /// the event loop's reading (`ReadySnapshots`).
    static func maxAgeSeconds(_ text: some StringProtocol) -> Double? {
        guard let ms = Double(text), ms >= 0, ms <= 3_600_000 else { return nil }
        return ms / 1000
    }
}

/// The stream's `fps` parameter: frames a second at most, nil for every frame.
func streamFPS(_ request: Request) throws -> Double? {
    try request.uri.queryParameters.get("fps").map { text -> Double in
        guard let value = Double(text), value > 0, value <= 1000 else {
            throw APIError.badRequest("fps must be a number above 0 and at most 1000; got \"\(text)\"", code: "bad_parameter")
        }
        return value
    }
}

/// A response to HEAD whose GET body's length is not known without making it: no
/// Content-Length (an empty body would claim 0), so NIO frames it as GET's would be.
func headOnly(_ headers: HTTPFields) -> Response {
    var response = Response(status: .ok, headers: headers)
    response.headers[.contentLength] = nil
    return response
}

/// The headers of a snapshot answer (`GET .../snapshot`) on the router: which frame it is
/// (capture time, sequence, captured size) and its type. Appended, not set by name: a new
/// `HTTPFields` has none of them, and setting one looks for the name first. A poll answered on
/// the event loop gets the same fields, written as bytes (`ByteBuffer.writeSnapshotAnswer`).
func snapshotHeaders(_ shot: RenderedSnapshot) -> HTTPFields {
    var headers = HTTPFields()
    headers.reserveCapacity(5)
    headers.append(HTTPField(name: FrameHeader.captureTime, value: FrameHeader.seconds(shot.captureTime)))
    headers.append(HTTPField(name: FrameHeader.sequence, value: String(shot.sequence)))
    headers.append(HTTPField(name: FrameHeader.size, value: shot.frameSize.description))
    headers.append(HTTPField(name: .contentType, value: "image/jpeg"))
    headers.append(HTTPField(name: .cacheControl, value: "no-store"))
    return headers
}

/// The names of the frame headers of `snapshotHeaders`, made once: every snapshot answer carries them.
enum FrameHeader {
    static let captureTime = HTTPField.Name("X-Capture-Time")!
    static let sequence = HTTPField.Name("X-Frame-Sequence")!
    static let size = HTTPField.Name("X-Frame-Size")!

    /// Seconds with six decimals, as `%.6f` writes a time after 1970, without Foundation's
    /// formatter (half of a ready snapshot's own cost on the event loop).
    /// The fraction is taken off first, which is exact, so its microseconds are rounded as
    /// printf rounds them (a tie to even; ties happen, a frame time being a binary fraction).
    static func seconds(_ value: Double) -> String {
        guard let (seconds, micros) = secondsAndMicros(value) else { return String(value) }
        let fraction = String(micros)
        return "\(seconds)." + String(repeating: "0", count: 6 - fraction.utf8.count) + fraction
    }

    /// The whole seconds and microseconds `seconds` writes; nil for a value it writes as
    /// `String(value)` (not finite, negative, or too large for six decimals).
    static func secondsAndMicros(_ value: Double) -> (seconds: UInt64, micros: UInt64)? {
        guard value.isFinite, value >= 0, value < 1e15 else { return nil }
        let whole = value.rounded(.down)
        var micros = UInt64(((value - whole) * 1_000_000).rounded(.toNearestOrEven))
        var seconds = UInt64(whole)
        if micros >= 1_000_000 {
            seconds += 1
            micros -= 1_000_000
        }
        return (seconds, micros)
    }
}
