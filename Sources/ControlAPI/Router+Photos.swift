import CaptureSession
import Foundation
import HTTPTypes
import Hummingbird

func addPhotoRoutes(_ v1: RouterGroup<CamdRequestContext>, _ services: APIServices) {
    v1.get("photos") { request, _ in
        let query = request.uri.queryParameters
        let camera = query.get("camera")
        if let camera, services.cameras[camera] == nil, !CameraSettings.isValidID(camera) {
            throw APIError.badRequest("camera must be a camera id; got \"\(camera)\"", code: "bad_parameter")
        }
        let since = try time(query.get("since"), "since")
        let until = try time(query.get("until"), "until")
        let limit = try query.get("limit").map { text -> Int in
            guard let value = Int(text), value >= 1, value <= 100_000 else {
                throw APIError.badRequest("limit must be a whole number from 1 to 100000; got \"\(text)\"", code: "bad_parameter")
            }
            return value
        }
        return try JSONBody.response(await services.photos.list(camera: camera, since: since, until: until, limit: limit))
    }
    v1.get("photos/:name") { _, context in
        let name = context.parameters.get("name") ?? ""
        let (record, path) = try await services.photos.file(named: name)
        let bytes = try await BlockingIO.run { try Data(contentsOf: URL(fileURLWithPath: path)) }
        return Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "max-age=3600",
                                               HTTPField.Name("X-Capture-Time")!: String(format: "%.6f", record.captureTime)],
                        body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
    v1.delete("photos/:name") { request, context in
        let name = context.parameters.get("name") ?? ""
        await audit(request, context, services)
        try await services.photos.delete(named: name)
        return Response(status: .noContent)
    }
}

/// A time given as seconds since 1970 or as ISO 8601 ("2026-11-22T06:00:00Z").
private func time(_ text: String?, _ name: String) throws -> Double? {
    guard let text else { return nil }
    if let seconds = Double(text) { return seconds }
    if let date = ISO8601DateFormatter().date(from: text) { return date.timeIntervalSince1970 }
    throw APIError.badRequest("\(name) must be seconds since 1970 or an ISO 8601 time such as 2026-11-22T06:00:00Z; got \"\(text)\"",
                              code: "bad_parameter")
}
