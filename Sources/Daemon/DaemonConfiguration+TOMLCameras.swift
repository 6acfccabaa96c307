import CaptureSession
import JPEG
import TOMLKit
import V4L2
import VideoCore

// Reading camd.toml: the [[camera]] tables and what they hold (image, location, controls, photos).
extension DaemonConfiguration.Reader {
    // MARK: [[camera]]

    func readCamera(_ camera: Section) throws(ConfigurationError) -> CameraSettings {
        var hints: [String: String] = [:]
        for key in DaemonConfiguration.photoKeys { hints[key] = "it belongs under [camera.photos]" }
        for key in DaemonConfiguration.imageKeys { hints[key] = "it belongs under [camera.image]" }
        for key in DaemonConfiguration.locationKeys { hints[key] = "it belongs in location = { latitude = ..., longitude = ... }" }
        for key in DaemonConfiguration.daemonKeys { hints[key] = "it belongs under [daemon]" }
        try checkKeys(camera, known: DaemonConfiguration.cameraKeys, hints: hints)

        let idExpected = "1 to 64 letters, digits, '-' or '_' (it appears in URLs and file names), such as \"bench\""
        guard let (id, idValue) = try string(camera, "id", idExpected) else {
            throw fail(.missingKey, camera.path, "has no id; add a line such as id = \"bench\" (1 to 64 letters, digits, '-' or '_')")
        }
        guard CameraSettings.isValidID(id) else { throw invalid(camera.path("id"), idExpected, idValue) }
        var settings = CameraSettings(id: id)

        let deviceExpected = "a device such as \"/dev/video0\" or \"/dev/v4l/by-id/usb-...-video-index0\""
        if let (device, value) = try string(camera, "device", deviceExpected) {
            guard !device.trimmingWhitespace.isEmpty else { throw invalid(camera.path("device"), deviceExpected, value) }
            settings.device = device
        }

        let formatExpected = "a pixel format's FourCC such as \"YUYV\" or \"MJPG\" (or \"MJPEG\")"
        if let (text, value) = try string(camera, "format", formatExpected) {
            guard let format = PixelFormat(parsing: text) else { throw invalid(camera.path("format"), formatExpected, value) }
            settings.format = format
        }

        let sizeExpected = "WIDTHxHEIGHT with both above 0 and at most \(FrameSize.largestSide), such as \"1280x720\""
        if let (text, value) = try string(camera, "size", sizeExpected) {
            guard let size = FrameSize(parsing: text), size.isWithinLimits else { throw invalid(camera.path("size"), sizeExpected, value) }
            settings.size = size
        }

        let fpsExpected = "a number above 0 and at most 1000"
        if let (fps, value) = try number(camera, "fps", fpsExpected) {
            guard fps > 0, fps <= 1000 else { throw invalid(camera.path("fps"), fpsExpected, value) }
            settings.fps = fps
        }

        let qualityExpected = "a whole number from 1 to 100"
        if let (quality, value) = try integer(camera, "quality", qualityExpected) {
            guard (1...100).contains(quality) else { throw invalid(camera.path("quality"), qualityExpected, value) }
            settings.quality = quality
        }

        let threadsExpected = "a whole number from 1 to \(CameraSettings.encoderThreadLimit)"
        if let (threads, value) = try integer(camera, "encoder_threads", threadsExpected) {
            guard (1...CameraSettings.encoderThreadLimit).contains(threads) else {
                throw invalid(camera.path("encoder_threads"), threadsExpected, value)
            }
            settings.encoderThreads = threads
        }

        if let value = camera["encode_every_frame"] {
            guard let every = value.bool else {
                throw fail(.wrongType, camera.path("encode_every_frame"), "must be true or false; got \(describe(value))")
            }
            settings.encodeEveryFrame = every
        }

        if let value = camera["autostart"] {
            guard let autostart = value.bool else { throw fail(.wrongType, camera.path("autostart"), "must be true or false; got \(describe(value))") }
            settings.autostart = autostart
        }

        if let idle = try seconds(camera, "idle_stop", "a number of seconds (0 or more) or a duration such as \"30s\" or \"5m\"", allowZero: true) {
            settings.idleStopSeconds = idle
        }

        if let table = try subtable(camera, "controls", ": write [camera.controls] below the camera's keys, then name = value lines") {
            settings.controls = try readControls(table)
        }
        if let table = try subtable(camera, "photos", ": write [camera.photos] below the camera's keys") {
            settings.photos = try readPhotos(table)
        }
        if let table = try subtable(camera, "image", ": write [camera.image] below the camera's keys") {
            settings.image = try readImage(table)
        }
        if let table = try subtable(camera, "location", " such as location = { latitude = 51.5007, longitude = -0.1246, altitude = 12 }") {
            settings.location = try readLocation(table)
        }
        return settings
    }

    /// The table under `key`, or nil when the key is absent; anything else is an
    /// error that says how to write the table (`hint` follows "must be a table").
    func subtable(_ section: Section, _ key: String, _ hint: String) throws(ConfigurationError) -> Section? {
        guard let value = section[key] else { return nil }
        guard let table = value.table else {
            throw fail(.wrongType, section.path(key), "must be a table\(hint); got \(describe(value))")
        }
        return Section(path: section.path(key), table: table)
    }

    // MARK: [camera.image]

    /// The image defaults, checked by the same code that checks query parameters, so
    /// a value is accepted in the file exactly when it would be in a request.
    func readImage(_ image: Section) throws(ConfigurationError) -> ImageSettings {
        var hints: [String: String] = [:]
        for key in DaemonConfiguration.cameraKeys { hints[key] = "it belongs in the [[camera]] table itself, above [camera.image]" }
        for key in DaemonConfiguration.photoKeys { hints[key] = "it belongs under [camera.photos]" }
        try checkKeys(image, known: DaemonConfiguration.imageKeys, hints: hints)

        let expected: [String: String] = [
            "width": "a whole number of pixels from 1 to \(Geometry.maximumDimension)",
            "height": "a whole number of pixels from 1 to \(Geometry.maximumDimension)",
            "max": "a whole number of pixels from 1 to \(Geometry.maximumDimension)",
            "rotate": "0, 90, 180 or 270, or \"exif\"",
            "fit": "\"contain\", \"cover\" or \"stretch\"",
            "crop": "\"x,y,w,h\" in pixels, such as \"0,0,640,480\" (or a list [0, 0, 640, 480])",
            "flip": "\"h\", \"v\" or \"hv\"",
            "interpolation": "\"nearest\", \"bilinear\" or \"area\"",
            "pad": "a colour name such as \"black\" or six hex digits such as \"1a2b3c\"",
        ]
        var query: [String: String] = [:]
        for name in Geometry.parameterNames {
            guard let value = image[name] else { continue }
            if let number = value.int, ["width", "height", "max", "rotate"].contains(name) {
                query[name] = String(number)
            } else if let text = value.string {
                query[name] = text
            } else if name == "crop", let list = value.array, list.count == 4, list.allSatisfy({ $0.int != nil }) {
                query[name] = (0..<4).map { String(list[$0].int!) }.joined(separator: ",")
            } else {
                throw fail(.wrongType, image.path(name), "must be \(expected[name] ?? "a string"); got \(describe(value))")
            }
        }
        var settings = ImageSettings()
        let corner = try string(image, "overlay_corner", "\"top-left\", \"top-right\", \"bottom-left\" or \"bottom-right\"")
        do throws(ImageError) {
            settings.geometry = try Geometry.parse(query: query)
            if let (text, _) = corner { settings.overlayCorner = try TextOverlay.Corner(parsing: text) }
        } catch {
            // The message starts with the parameter's name; the key path takes its place.
            let name = error.parameter ?? "image"
            var message = error.description
            if message.hasPrefix("\(name) ") { message.removeFirst(name.count + 1) }
            throw fail(.invalidValue, image.path(name), message)
        }

        let overlayExpected = "a text template of at most \(ImageSettings.overlayLimit) bytes, such as \"%Y-%m-%d %H:%M:%S {camera}\""
        if let (template, value) = try string(image, "overlay", overlayExpected) {
            guard template.utf8.count <= ImageSettings.overlayLimit else { throw invalid(image.path("overlay"), overlayExpected, value) }
            settings.overlay = template.isEmpty ? nil : template
        }
        if let value = image["stream_overlay"] {
            guard let flag = value.bool else {
                throw fail(.wrongType, image.path("stream_overlay"), "must be true or false; got \(describe(value))")
            }
            if flag, settings.overlay == nil {
                throw fail(.missingKey, image.path("stream_overlay"), "is true but there is no overlay to draw: add overlay = \"%Y-%m-%d %H:%M:%S\" to [camera.image], or set stream_overlay = false")
            }
            settings.streamOverlay = flag
        }
        return settings
    }

    // MARK: location

    /// The camera's fixed position for the GPS tags of its photos.
    func readLocation(_ location: Section) throws(ConfigurationError) -> EXIF.GPSPosition {
        try checkKeys(location, known: DaemonConfiguration.locationKeys, hints: [:])
        let latitudeExpected = "degrees north from -90 to 90 (south is negative), such as 51.5007"
        let longitudeExpected = "degrees east from -180 to 180 (west is negative), such as -0.1246"
        guard let (latitude, latitudeValue) = try number(location, "latitude", latitudeExpected) else {
            throw fail(.missingKey, location.path("latitude"), "is missing; a location needs both latitude and longitude, such as location = { latitude = 51.5007, longitude = -0.1246 }")
        }
        guard let (longitude, longitudeValue) = try number(location, "longitude", longitudeExpected) else {
            throw fail(.missingKey, location.path("longitude"), "is missing; a location needs both latitude and longitude, such as location = { latitude = 51.5007, longitude = -0.1246 }")
        }
        guard (-90...90).contains(latitude) else { throw invalid(location.path("latitude"), latitudeExpected, latitudeValue) }
        guard (-180...180).contains(longitude) else { throw invalid(location.path("longitude"), longitudeExpected, longitudeValue) }
        let altitudeExpected = "metres above sea level (negative below), within ±100000"
        let altitude = try number(location, "altitude", altitudeExpected)
        if let (metres, value) = altitude, abs(metres) > 100_000 { throw invalid(location.path("altitude"), altitudeExpected, value) }
        do {
            return try EXIF.GPSPosition(latitude: latitude, longitude: longitude, altitude: altitude?.0)
        } catch {
            throw fail(.invalidValue, location.path(error.parameter ?? "latitude"), error.description)
        }
    }

    func readControls(_ controls: Section) throws(ConfigurationError) -> [String: String] {
        var result: [String: String] = [:]
        for name in controls.table.keys.sorted(by: { (lines.line(of: controls.path($0)) ?? .max) < (lines.line(of: controls.path($1)) ?? .max) }) {
            guard let value = controls[name] else { continue }
            let spelled = DeviceControl.key(for: name)
            guard spelled == name else {
                let fix = spelled.isEmpty ? "use the name `camctl controls` or `v4l2-ctl -l` shows" : "write \(spelled)"
                throw fail(.unknownKey, controls.path(name), "is not a control name as v4l2-ctl spells it (lowercase, words joined by '_'); \(fix)")
            }
            let expected = "a whole number, true or false, or a menu item's name in quotes"
            if let number = value.int {
                result[name] = String(number)
            } else if let flag = value.bool {
                result[name] = flag ? "true" : "false"
            } else if let text = value.string, !text.trimmingWhitespace.isEmpty {
                result[name] = text
            } else {
                throw fail(value.type == .string ? .invalidValue : .wrongType, controls.path(name), "must be \(expected); got \(describe(value))")
            }
        }
        return result
    }

    // MARK: [camera.photos]

    func readPhotos(_ photos: Section) throws(ConfigurationError) -> PhotoSettings {
        var hints: [String: String] = [:]
        for key in DaemonConfiguration.cameraKeys { hints[key] = "it belongs in the [[camera]] table itself, above [camera.photos]" }
        try checkKeys(photos, known: DaemonConfiguration.photoKeys, hints: hints)
        var settings = PhotoSettings()

        if let interval = try seconds(photos, "interval", "a number of seconds above 0 or a duration such as \"90s\", \"10m\", \"2h\" or \"7d\"", allowZero: false) {
            settings.intervalSeconds = interval
        }

        let nameExpected = "a file name ending in .jpg, such as \"\(PhotoSettings.defaultPattern)\""
        if let (pattern, value) = try string(photos, "name", nameExpected) {
            if let problem = patternProblem(pattern) {
                throw fail(.invalidValue, photos.path("name"), "\(problem); got \(describe(value))")
            }
            settings.namePattern = pattern
        }

        let countExpected = "a whole number above 0"
        if let (count, value) = try integer(photos, "keep_count", countExpected) {
            guard count > 0 else { throw invalid(photos.path("keep_count"), countExpected, value) }
            settings.keepCount = count
        }

        let bytesExpected = "a whole number of bytes above 0, or a size such as \"500M\" or \"2G\""
        if let value = photos["keep_bytes"] {
            let bytes: Int64?
            if let number = value.int {
                bytes = Int64(number)
            } else if let text = value.string {
                bytes = DaemonConfiguration.byteCount(parsing: text)
            } else {
                throw fail(.wrongType, photos.path("keep_bytes"), "must be \(bytesExpected); got \(describe(value))")
            }
            guard let bytes, bytes > 0 else { throw invalid(photos.path("keep_bytes"), bytesExpected, value) }
            settings.keepBytes = bytes
        }

        if let age = try seconds(photos, "keep_age", "a number of seconds above 0 or a duration such as \"12h\" or \"7d\"", allowZero: false) {
            settings.keepSeconds = age
        }
        return settings
    }

    /// What is wrong with a photo name pattern, or nil when it is fine.
    func patternProblem(_ pattern: String) -> String? {
        let known = DaemonConfiguration.namePlaceholders.map { "{\($0)}" }.joined(separator: ", ")
        if pattern.contains("/") { return "must be a file name without '/' (every photo goes in the photo folder)" }
        if !pattern.hasSuffix(".jpg") { return "must end in .jpg, such as \"\(PhotoSettings.defaultPattern)\"" }
        if pattern.hasPrefix(".") { return "must not start with '.' (camd's unfinished files do)" }
        var rest = Substring(pattern)
        while let open = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) {
            guard rest[open] == "{", let close = rest[open...].firstIndex(of: "}") else {
                return "has an unmatched brace; placeholders are \(known)"
            }
            let name = String(rest[rest.index(after: open)..<close])
            guard DaemonConfiguration.namePlaceholders.contains(name) else {
                let guess = closest(to: name, in: DaemonConfiguration.namePlaceholders).map { " (did you mean {\($0)}?)" } ?? ""
                return "uses {\(name)}, which camd does not know\(guess); placeholders are \(known)"
            }
            rest = rest[rest.index(after: close)...]
        }
        return nil
    }
}
