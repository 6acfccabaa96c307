import CaptureSession
import Hummingbird
import JPEG

/// What a snapshot or photo request asks to be done to the image: geometry
/// (size, fit, crop, rotation, flip) and a text overlay, from the query string.
struct RenderRequest: Sendable {
    var geometry: Geometry
    /// A strftime-style template (`%Y-%m-%d %H:%M:%S {camera}`), drawn in `corner`.
    var overlay: String?
    var corner: TextOverlay.Corner

    static let overlayParameters: Set<String> = ["overlay", "overlay_corner"]

    /// Parses the query, refusing parameters this endpoint does not know (`allowed` adds its own).
    init(_ request: Request, allowing allowed: Set<String> = []) throws {
        var query: [String: String] = [:]
        for (key, value) in request.uri.queryParameters {
            let name = String(key)
            guard Geometry.parameterNames.contains(name) || Self.overlayParameters.contains(name) || allowed.contains(name) else {
                let known = (Geometry.parameterNames.union(Self.overlayParameters).union(allowed)).sorted().joined(separator: ", ")
                throw APIError.badRequest("unknown parameter \"\(name)\"; this endpoint takes \(known)", code: "bad_parameter")
            }
            query[name] = String(value)
        }
        do {
            geometry = try Geometry.parse(query: query.filter { Geometry.parameterNames.contains($0.key) })
            corner = try query["overlay_corner"].map { try TextOverlay.Corner(parsing: $0) } ?? .bottomLeft
        } catch let error as ImageError {
            throw APIError(error)
        }
        overlay = query["overlay"].flatMap { $0.isEmpty ? nil : $0 }
        if let overlay, overlay.utf8.count > 200 {
            throw APIError.badRequest("overlay must be at most 200 characters", code: "bad_parameter")
        }
    }

    /// Whether the image is served as captured.
    var isIdentity: Bool { !geometry.changesPixels && overlay == nil && geometry.exifOrientation == nil }

    /// Renders a JPEG off the event loop and tags it with EXIF (capture time, camera, orientation).
    func apply(to jpeg: [UInt8], captureTime: Double, camera: String, card: String?, sequence: UInt64,
               quality: Int) async throws -> [UInt8] {
        var rendered = jpeg
        if !isIdentity {
            let geometry = self.geometry, corner = self.corner
            let overlay = self.overlay.map {
                TextOverlay(template: $0, time: captureTime, camera: camera, sequence: sequence, corner: corner)
            }
            do {
                rendered = try await BlockingIO.run { () throws(ImageError) -> [UInt8] in
                    try ImagePipeline().jpeg(jpeg: jpeg, geometry: geometry, overlay: overlay, quality: quality)
                }
            } catch {
                throw APIError(error)
            }
        }
        var exif = EXIF(captureTime: captureTime, make: card, model: card)
        exif.orientation = geometry.exifOrientation
        return exif.inserted(into: rendered)
    }
}

extension APIError {
    /// The status each image failure maps to: a bad parameter is the caller's.
    init(_ error: ImageError) {
        switch error {
        case .invalidParameter(_, let message): self.init(.badRequest, "bad_parameter", message)  // the message names the parameter
        case .tooManyPhotos: self.init(.badRequest, "too_many_photos", error.description)
        case .noPhotos: self.init(.notFound, "no_photos", error.description)
        case .unreadableImage, .encodingFailed: self.init(.internalServerError, "image_failed", error.description)
        }
    }
}
