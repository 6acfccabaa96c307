import JPEG

// The image defaults ([camera.image] in camd.toml, "image" in the API): the geometry keys are
// read by `Geometry.parse(query:)`, the reader of the image endpoints' query parameters, so a
// value is accepted as a default exactly when it would be in a request, with the same words.
extension CameraSettings {
    static let imageKeys: [Key] = [
        geometryKey("width", "a whole number of pixels from 1 to \(Geometry.maximumDimension)", "none",
                    "Output width (with height and fit).", get: { $0.width.map(String.init) }, reset: { $0.width = nil }),
        geometryKey("height", "a whole number of pixels from 1 to \(Geometry.maximumDimension)", "none",
                    "Output height.", get: { $0.height.map(String.init) }, reset: { $0.height = nil }),
        geometryKey("max", "a whole number of pixels from 1 to \(Geometry.maximumDimension)", "none",
                    "Longest side at most this many pixels, never upscaled.", get: { $0.longestSide.map(String.init) },
                    reset: { $0.longestSide = nil }),
        geometryKey("fit", "\"contain\", \"cover\" or \"stretch\"", "\"contain\"",
                    "How width and height are filled: the whole image (contain), a centred crop (cover), or stretched.",
                    get: { $0.fit.rawValue }, reset: { $0.fit = .contain }),
        geometryKey("crop", "\"x,y,w,h\" in pixels, such as \"0,0,640,480\" (or a list [0, 0, 640, 480])", "none",
                    "Crop before scaling.", get: { $0.crop?.description }, reset: { $0.crop = nil }),
        geometryKey("rotate", "0, 90, 180 or 270, or \"exif\"", "0",
                    "Turn the image; exif leaves the turn to the viewer, in the Orientation tag.",
                    get: { $0.rotationInEXIF ? "exif" : String($0.rotate.rawValue) },
                    reset: { $0.rotate = .upright; $0.rotationInEXIF = false }),
        geometryKey("flip", "\"h\", \"v\" or \"hv\"", "none", "Mirror the image.",
                    get: { flip in
                        flip.flip.isEmpty ? nil : (flip.flip.contains(.horizontal) ? "h" : "") + (flip.flip.contains(.vertical) ? "v" : "")
                    }, reset: { $0.flip = [] }),
        geometryKey("interpolation", "\"nearest\", \"bilinear\" or \"area\"", "area when shrinking",
                    "How pixels are resampled.", get: { $0.interpolation?.rawValue }, reset: { $0.interpolation = nil }),
        geometryKey("pad", "a colour name such as \"black\" or six hex digits such as \"1a2b3c\"", "none",
                    "Fill the bars of fit = contain with this colour to the full width and height.",
                    get: { $0.pad?.hex }, reset: { $0.pad = nil }),
        Key("image.overlay", .string("a text template of at most \(ImageSettings.overlayLimit) bytes, such as \"%Y-%m-%d %H:%M:%S {camera}\"",
                                     problem: { $0.utf8.count > ImageSettings.overlayLimit ? "" : nil }),
            get: { $0.image.overlay ?? "" }, set: { $0.image.overlay = $1.isEmpty ? nil : $1 }, default: "", "none", restart: .encoders,
            "Text drawn on snapshots and photos: strftime's %Y-%m-%d %H:%M:%S, {camera} and {seq} are filled in."),
        Key("image.overlay_corner", .text("\"top-left\", \"top-right\", \"bottom-left\" or \"bottom-right\"",
                                          { TextOverlay.Corner(rawValue: $0) }, format: \.rawValue),
            at: \.image.overlayCorner, default: .bottomLeft, "\"bottom-left\"", restart: .encoders, "Where the overlay goes."),
        Key("image.chroma", .text("\"4:2:0\" or \"camera\"", { JPEGChroma(rawValue: $0) }, format: \.rawValue),
            at: \.image.chroma, default: .halved, "\"4:2:0\"", restart: .encoders,
            "Colour resolution of the JPEGs camd encodes: 4:2:0 halves it each way, as most JPEGs (smaller, quicker); "
                + "camera keeps all the camera sends (4:2:2 from YUYV). MJPEG cameras' frames pass through as they come."),
        Key("image.stream_overlay", .boolean, at: \.image.streamOverlay, default: false, "false", restart: .encoders,
            "Also draw the overlay on every frame of the live stream (once per frame, for all clients)."),
    ]

    /// A geometry key: its value becomes a query parameter's text for `Geometry.parse`.
    private static func geometryKey(_ name: String, _ expected: String, _ defaultText: String, _ summary: String,
                                    get: @escaping @Sendable (Geometry) -> String?,
                                    reset: @escaping @Sendable (inout Geometry) -> Void) -> Key {
        let reader = ValueReader<String?>(expected, read: { value throws(ValueProblem) in
            switch value {
            case .integer(let number): return String(number)
            case .number(let number) where number == number.rounded() && abs(number) < 1e9: return String(Int(number))
            case .string(let text), .text(let text): return text
            case .list(let items) where name == "crop":
                let numbers = items.compactMap { item -> Int64? in if case .integer(let n) = item { return n } else { return nil } }
                guard numbers.count == 4, items.count == 4 else { throw .wrongType }
                return numbers.map(String.init).joined(separator: ",")
            default: throw .wrongType
            }
        }, write: { text in
            // Sizes and turns are numbers in the API's JSON; "exif", crops and colours stay text.
            guard let text else { return .null }
            return ["width", "height", "max", "rotate"].contains(name) ? Int64(text).map(SettingValue.integer) ?? .string(text) : .string(text)
        })
        return Key("image.\(name)", reader, get: { get($0.image.geometry) }, set: { settings, text throws(ValueProblem) in
            guard let text else { return reset(&settings.image.geometry) }
            do throws(ImageError) {
                settings.image.geometry = try Geometry.parse(query: [name: text], defaults: settings.image.geometry)
            } catch {
                // The message starts with the parameter's name, which the key takes the place of.
                var message = error.description
                if message.hasPrefix("\(name) ") { message.removeFirst(name.count + 1) }
                throw .invalid(message)
            }
        }, default: nil, defaultText, restart: .encoders, summary)
    }
}

extension Geometry.Color {
    /// Six hex digits, as `pad` takes them.
    var hex: String {
        [red, green, blue].map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}
