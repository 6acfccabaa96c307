import ArgumentParser
import CaptureSession
import Foundation
import JPEG

/// The image options `camctl snapshot` shares with the API's query parameters.
struct ImageOptions: ParsableArguments {
    @Option(help: "Output width (with --height and --fit).") var width: Int?
    @Option(help: "Output height.") var height: Int?
    @Option(help: "contain (whole image, aspect kept), cover (fill, centred crop) or stretch.") var fit: String?
    @Option(help: "Longest side at most N pixels, never upscaled: a cheap thumbnail.") var max: Int?
    @Option(help: "Crop x,y,w,h (before scaling).") var crop: String?
    @Option(help: "Rotate 0, 90, 180, 270, or exif (tag only).") var rotate: String?
    @Option(help: "Flip h, v or hv.") var flip: String?
    @Option(help: "nearest, bilinear or area (default area when shrinking).") var interpolation: String?
    @Option(help: "Pad colour for contain, such as black or #202020.") var pad: String?
    @Option(help: "Text overlay, strftime-style: '%Y-%m-%d %H:%M:%S {camera}'.") var overlay: String?
    @Option(help: "Overlay corner: top-left, top-right, bottom-left, bottom-right.") var overlayCorner: String?

    /// The options as query parameters, named as the API names them.
    var query: [String: String] {
        var query: [String: String] = [:]
        func put(_ name: String, _ value: String?) { if let value { query[name] = value } }
        put("width", width.map(String.init)); put("height", height.map(String.init)); put("fit", fit)
        put("max", max.map(String.init)); put("crop", crop); put("rotate", rotate); put("flip", flip)
        put("interpolation", interpolation); put("pad", pad); put("overlay", overlay); put("overlay_corner", overlayCorner)
        return query
    }

    var isEmpty: Bool { query.isEmpty }

    /// "width=160&overlay=%25Y..." for a daemon URL.
    var queryString: String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~,")
        return query.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.value)" }
            .joined(separator: "&")
    }

    func validate() throws {
        do {
            _ = try Geometry.parse(query: query.filter { Geometry.parameterNames.contains($0.key) })
            if let overlayCorner { _ = try TextOverlay.Corner(parsing: overlayCorner, parameter: "--overlay-corner") }
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// Applies the options to a JPEG captured without the daemon.
    /// `camera` is what the overlay's `{camera}` shows; `card` names the camera in the EXIF.
    func apply(to jpeg: [UInt8], captureTime: Double, camera: String, card: String, sequence: UInt32, quality: Int) throws -> [UInt8] {
        let geometry = try Geometry.parse(query: query.filter { Geometry.parameterNames.contains($0.key) })
        let corner = try overlayCorner.map { try TextOverlay.Corner(parsing: $0) } ?? .bottomLeft
        let text = overlay.map { TextOverlay(template: $0, time: captureTime, camera: camera, sequence: UInt64(sequence), corner: corner) }
        guard geometry.changesPixels || text != nil || geometry.exifOrientation != nil else { return jpeg }
        // Re-encoded: the new JPEG gets its own EXIF, as the unchanged one had, with the orientation tag if asked.
        let pipeline = ImagePipeline()
        let output = try pipeline.jpeg(jpeg: jpeg, geometry: geometry, overlay: text, quality: quality)
        let size = try pipeline.lastDecode.map { try geometry.outputSize(for: $0.fullSize) }
        var exif = EXIF(captureTime: captureTime, make: card, model: card, pixelWidth: size?.width, pixelHeight: size?.height)
        exif.orientation = geometry.exifOrientation
        return exif.inserted(into: output)
    }
}
