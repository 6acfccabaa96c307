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

    /// The options as the settings `Snapshot.take` applies to a frame captured without the daemon.
    func settings() throws(ImageError) -> ImageSettings {
        var settings = ImageSettings(geometry: try Geometry.parse(query: query.filter { Geometry.parameterNames.contains($0.key) }),
                                     overlay: overlay)
        if let overlayCorner { settings.overlayCorner = try TextOverlay.Corner(parsing: overlayCorner) }
        return settings
    }
}
