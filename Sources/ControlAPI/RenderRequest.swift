import CaptureSession
import Hummingbird
import JPEG
import VideoCore

/// What a snapshot or photo request asks to be done to the image: geometry
/// (size, fit, crop, rotation, flip) and a text overlay, from the query string,
/// on top of the camera's configured defaults (`[camera.image]`).
struct RenderRequest: Sendable {
    /// The defaults with the query's values put over them, key by key.
    var image: ImageSettings

    var geometry: Geometry { image.geometry }
    /// A strftime-style template (`%Y-%m-%d %H:%M:%S {camera}`), drawn in `corner`.
    var overlay: String? { image.overlay }
    var corner: TextOverlay.Corner { image.overlayCorner }

    static let overlayParameters: Set<String> = ["overlay", "overlay_corner"]

    /// Parses the query, refusing parameters this endpoint does not know (`allowed` adds its own).
    /// A parameter given replaces the same key of `defaults`; `overlay=` (empty) turns a configured overlay off.
    init(_ request: Request, allowing allowed: Set<String> = [], defaults: ImageSettings = ImageSettings()) throws {
        var query: [String: String] = [:]
        for (key, value) in request.uri.queryParameters {
            let name = String(key)
            guard Geometry.parameterNames.contains(name) || Self.overlayParameters.contains(name) || allowed.contains(name) else {
                let known = (Geometry.parameterNames.union(Self.overlayParameters).union(allowed)).sorted().joined(separator: ", ")
                throw APIError.badRequest("unknown parameter \"\(name)\"; this endpoint takes \(known)", code: "bad_parameter")
            }
            query[name] = String(value)
        }
        image = defaults
        do throws(ImageError) {
            image.geometry = try Geometry.parse(query: query.filter { Geometry.parameterNames.contains($0.key) }, defaults: defaults.geometry)
            if let text = query["overlay_corner"] { image.overlayCorner = try TextOverlay.Corner(parsing: text) }
        } catch {
            throw APIError(error)
        }
        if let text = query["overlay"] { image.overlay = text.isEmpty ? nil : text }
        if let overlay, overlay.utf8.count > ImageSettings.overlayLimit {
            throw APIError.badRequest("overlay must be at most \(ImageSettings.overlayLimit) characters", code: "bad_parameter")
        }
    }

    /// Whether the image is served as captured.
    var isIdentity: Bool { image.isIdentity }

    /// Renders a JPEG off the event loop and tags it with EXIF (capture time, camera, orientation, position).
    /// The copy keeps `jpeg`'s own Orientation tag unless the request sets one (`rotate=exif`).
    func apply(to jpeg: [UInt8], captureTime: Double, camera: String, card: String?, sequence: UInt64,
               quality: Int, location: EXIF.GPSPosition? = nil) async throws -> [UInt8] {
        let size = (try? JPEGDecoder().header(jpeg).size) ?? FrameSize(width: 0, height: 0)
        return try await render(jpeg, size: size, captureTime: captureTime, camera: camera, card: card,
                                sequence: sequence, quality: quality, location: location,
                                keptOrientation: EXIF.Orientation(readingFrom: jpeg)).jpeg
    }

    /// As `apply`, for a frame whose size is known; also returns the stored size of the result.
    func render(_ jpeg: [UInt8], size: FrameSize, captureTime: Double, camera: String, card: String?, sequence: UInt64,
                quality: Int, location: EXIF.GPSPosition? = nil,
                keptOrientation: EXIF.Orientation? = nil) async throws -> (jpeg: [UInt8], size: FrameSize) {
        do throws(ImageError) {
            return try await image.render(jpeg, size: size, captureTime: captureTime, camera: camera, card: card,
                                          sequence: sequence, quality: quality, location: location,
                                          keptOrientation: keptOrientation)
        } catch {
            throw APIError(error)
        }
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
