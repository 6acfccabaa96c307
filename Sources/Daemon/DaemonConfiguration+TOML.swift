import CaptureSession
import JPEG
import TOMLKit
import V4L2
import VideoCore

extension DaemonConfiguration {
    /// Reads a configuration from TOML text, checking every key and value.
    ///
    /// - Parameter source: where the text came from, used in error messages (a path, or "<stdin>").
    /// - Throws: `ConfigurationError` for the first problem found: a syntax error (with the
    ///   parser's line and column), an unknown key (with the closest known one), a value of the
    ///   wrong type or out of range (with what would be right), or duplicate camera ids.
    public static func parse(_ text: String, source: String) throws(ConfigurationError) -> DaemonConfiguration {
        guard !text.utf8.contains(0) else {
            throw ConfigurationError(kind: .unreadable, source: source, message: "the text contains a NUL byte, which TOML forbids; save the file as plain UTF-8 text")
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let line = error.source.begin.line
            throw ConfigurationError(kind: .syntax, source: source, line: line, column: error.source.begin.column,
                                     message: "not valid TOML: \(error.description)\(syntaxHint(text, line: line))")
        } catch {
            throw ConfigurationError(kind: .syntax, source: source, message: "not valid TOML: \(error)")
        }
        // The locator runs only on text the TOML parser accepted, so its scanner can be simple.
        return try Reader(source: source, lines: KeyLines(text)).configuration(from: Section(path: "", table: root))
    }

    /// A nudge for the one syntax error TOML's rules make likely here: `socket_mode = 0660`.
    private static func syntaxHint(_ text: String, line: Int) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count, lines[line - 1].trimmingWhitespace.hasPrefix("socket_mode") else { return "" }
        return "; write socket_mode as a quoted string of octal digits, such as socket_mode = \"0660\""
    }
}

// MARK: - Checking values

extension DaemonConfiguration {
    static let daemonKeys = ["socket", "socket_mode", "socket_group", "read_only_group", "photo_folder", "log_level",
                             "tcp", "tcp_token", "tcp_hosts", "shutdown_timeout", "idle_timeout"]
    static let cameraKeys = ["id", "device", "format", "size", "fps", "quality", "autostart", "idle_stop", "controls", "photos",
                             "image", "location", "encoder_threads", "encode_every_frame"]
    static let photoKeys = ["interval", "name", "keep_count", "keep_bytes", "keep_age"]
    /// The query parameters of the image endpoints, plus `stream_overlay`.
    static let imageKeys = ["width", "height", "fit", "max", "crop", "rotate", "flip", "interpolation", "pad",
                            "overlay", "overlay_corner", "stream_overlay"]
    static let locationKeys = ["latitude", "longitude", "altitude"]
    static let namePlaceholders = ["camera", "date", "time", "ms", "seq"]

    /// One TOML table and where it sits ("", "daemon", "camera[2].photos").
    struct Section {
        let path: String
        let table: TOMLTable

        func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
        subscript(key: String) -> (any TOMLValueConvertible)? { table[key] }
    }

    /// Turns the parsed TOML into a configuration, one table at a time, stopping at the first problem.
    struct Reader {
        let source: String
        let lines: KeyLines

        func configuration(from root: Section) throws(ConfigurationError) -> DaemonConfiguration {
            var hints: [String: String] = [:]
            for key in DaemonConfiguration.daemonKeys { hints[key] = "it belongs under [daemon]" }
            for key in DaemonConfiguration.cameraKeys { hints[key] = "it belongs in a [[camera]] table" }
            for key in DaemonConfiguration.photoKeys { hints[key] = "it belongs under [camera.photos], below a [[camera]] table" }
            for key in DaemonConfiguration.imageKeys { hints[key] = "it belongs under [camera.image], below a [[camera]] table" }
            try checkKeys(root, known: ["daemon", "camera"], hints: hints)

            var configuration = DaemonConfiguration()
            if let value = root["daemon"] {
                guard let table = value.table else {
                    throw fail(.wrongType, "daemon", "must be a table: write [daemon] on a line of its own above its keys; got \(describe(value))")
                }
                try readDaemon(Section(path: "daemon", table: table), into: &configuration)
            }
            if let value = root["camera"] {
                guard let array = value.array else {
                    let why = value.table != nil ? "a single [camera] table" : describe(value)
                    throw fail(.wrongType, "camera", "must be a list of tables: write [[camera]] (double brackets) above each camera's keys; got \(why)")
                }
                var firstUse: [String: Int] = [:]
                for (index, element) in array.enumerated() {
                    let path = "camera[\(index)]"
                    guard let table = element.table else {
                        throw fail(.wrongType, path, "must be a table of camera settings; got \(describe(element))")
                    }
                    let camera = try readCamera(Section(path: path, table: table))
                    if let first = firstUse[camera.id] {
                        throw fail(.invalidValue, "\(path).id", "\"\(camera.id)\" is already the id of camera[\(first)]; give each camera its own id")
                    }
                    firstUse[camera.id] = index
                    configuration.cameras.append(camera)
                }
            }
            return configuration
        }

        // MARK: [daemon]

        private func readDaemon(_ daemon: Section, into configuration: inout DaemonConfiguration) throws(ConfigurationError) {
            var hints: [String: String] = [:]
            for key in DaemonConfiguration.cameraKeys + DaemonConfiguration.photoKeys { hints[key] = "it belongs in a [[camera]] table" }
            try checkKeys(daemon, known: DaemonConfiguration.daemonKeys, hints: hints)

            let socketExpected = "an absolute path such as \"/run/camd.sock\""
            if let (socket, value) = try string(daemon, "socket", socketExpected) {
                guard socket.hasPrefix("/") else { throw invalid(daemon.path("socket"), socketExpected, value) }
                guard socket.utf8.count <= 107 else {
                    throw fail(.invalidValue, daemon.path("socket"), "is \(socket.utf8.count) bytes long, but a Unix socket path may be at most 107; choose a shorter path")
                }
                configuration.socketPath = socket
            }

            let modeExpected = "a quoted string of octal digits no greater than \"0777\", such as \"0660\""
            if let value = daemon["socket_mode"] {
                guard let text = value.string else {
                    let quoteHint = value.int != nil ? " (quote it: socket_mode = \"0660\")" : ""
                    throw fail(.wrongType, daemon.path("socket_mode"), "must be \(modeExpected); got \(describe(value))\(quoteHint)")
                }
                let digits = text.hasPrefix("0o") ? text.dropFirst(2) : Substring(text)
                guard (1...4).contains(digits.count), digits.allSatisfy({ ("0"..."7").contains($0) }),
                      let mode = UInt32(digits, radix: 8), mode <= 0o777 else {
                    throw invalid(daemon.path("socket_mode"), modeExpected, value)
                }
                configuration.socketMode = mode
            }

            let groupExpected = "a group name such as \"video\", or \"\" for the daemon's own group"
            if let (group, value) = try string(daemon, "socket_group", groupExpected) {
                guard group.isEmpty || isGroupName(group) else { throw invalid(daemon.path("socket_group"), groupExpected, value) }
                configuration.socketGroup = group.isEmpty ? nil : group
            }
            let readOnlyExpected = "a group name such as \"camviewers\""
            if let (group, value) = try string(daemon, "read_only_group", readOnlyExpected) {
                guard group.isEmpty || isGroupName(group) else { throw invalid(daemon.path("read_only_group"), readOnlyExpected, value) }
                if !group.isEmpty, group == configuration.socketGroup {
                    throw fail(.invalidValue, daemon.path("read_only_group"),
                               "is the same as socket_group (\"\(group)\"), whose members may change everything; choose another group or leave read_only_group out")
                }
                configuration.readOnlyGroup = group.isEmpty ? nil : group
            }

            let folderExpected = "an absolute path such as \"/var/lib/camd/photos\""
            if let (folder, value) = try string(daemon, "photo_folder", folderExpected) {
                guard folder.hasPrefix("/") else { throw invalid(daemon.path("photo_folder"), folderExpected, value) }
                configuration.photoRoot = folder
            }

            let levels = DaemonConfiguration.logLevels
            let levelExpected = "one of \(levels.joined(separator: ", "))"
            if let (level, value) = try string(daemon, "log_level", levelExpected) {
                guard levels.contains(level.lowercased()) else {
                    let guess = closest(to: level.lowercased(), in: levels).map { " (did you mean \($0)?)" } ?? ""
                    throw fail(.invalidValue, daemon.path("log_level"), "must be \(levelExpected); got \(describe(value))\(guess)")
                }
                configuration.logLevel = level.lowercased()
            }

            let tcpExpected = "host:port such as \"127.0.0.1:8080\" or \"[::1]:8080\", with a port from 1 to 65535, or \"\" for no TCP"
            var tcpHost: String?
            if let (listen, value) = try string(daemon, "tcp", tcpExpected) {
                if !listen.isEmpty {
                    guard let (host, _) = DaemonConfiguration.hostAndPort(of: listen) else {
                        let noPort = !listen.contains(":") || (listen.hasPrefix("[") && listen.hasSuffix("]"))
                        if noPort {
                            throw fail(.invalidValue, daemon.path("tcp"), "needs a port: write host:port such as \"127.0.0.1:8080\"; got \(describe(value))")
                        }
                        throw invalid(daemon.path("tcp"), tcpExpected, value)
                    }
                    tcpHost = host
                    configuration.tcpListen = listen
                }
            }
            let tokenExpected = "a secret without spaces, such as the output of `openssl rand -hex 32`"
            if let (token, value) = try string(daemon, "tcp_token", tokenExpected) {
                guard !token.isEmpty, !token.contains(where: { $0.isWhitespace || ($0.asciiValue ?? 0x20) < 0x20 }) else {
                    throw invalid(daemon.path("tcp_token"), tokenExpected, value)
                }
                configuration.tcpToken = token
            }
            let hostsExpected = "a list of host names the TCP listener answers to, such as [\"camera.lan\", \"cams.example.org\"]"
            if let value = daemon["tcp_hosts"] {
                guard let list = value.array else {
                    throw fail(.wrongType, daemon.path("tcp_hosts"), "must be \(hostsExpected); got \(describe(value))")
                }
                for element in list {
                    guard let name = element.string, DaemonConfiguration.isHostName(name) else {
                        throw fail(.invalidValue, daemon.path("tcp_hosts"),
                                   "must be \(hostsExpected), each a name without scheme, port or path; got \(describe(element))")
                    }
                    configuration.tcpHosts.append(name)
                }
            }
            if let tcpHost, !DaemonConfiguration.isLoopback(host: tcpHost), configuration.tcpToken == nil {
                throw fail(.missingKey, daemon.path("tcp"),
                           "listens on \(tcpHost), which other machines can reach, so daemon.tcp_token is required: add tcp_token = \"<secret>\" under [daemon] (for example from `openssl rand -hex 32`), or listen on 127.0.0.1")
            }

            if let timeout = try seconds(daemon, "shutdown_timeout", "a number of seconds above 0, or a duration such as \"10s\"", allowZero: false) {
                configuration.shutdownTimeoutSeconds = timeout
            }
            if let timeout = try seconds(daemon, "idle_timeout", "a number of seconds above 0, or a duration such as \"1m\"", allowZero: false) {
                configuration.idleTimeoutSeconds = timeout
            }
        }

        // MARK: [[camera]]

        private func readCamera(_ camera: Section) throws(ConfigurationError) -> CameraSettings {
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
        private func subtable(_ section: Section, _ key: String, _ hint: String) throws(ConfigurationError) -> Section? {
            guard let value = section[key] else { return nil }
            guard let table = value.table else {
                throw fail(.wrongType, section.path(key), "must be a table\(hint); got \(describe(value))")
            }
            return Section(path: section.path(key), table: table)
        }

        // MARK: [camera.image]

        /// The image defaults, checked by the same code that checks query parameters, so
        /// a value is accepted in the file exactly when it would be in a request.
        private func readImage(_ image: Section) throws(ConfigurationError) -> ImageSettings {
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
        private func readLocation(_ location: Section) throws(ConfigurationError) -> EXIF.GPSPosition {
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

        private func readControls(_ controls: Section) throws(ConfigurationError) -> [String: String] {
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

        private func readPhotos(_ photos: Section) throws(ConfigurationError) -> PhotoSettings {
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
        private func patternProblem(_ pattern: String) -> String? {
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

        // MARK: Typed values

        /// The string at `key` and its TOML value, nil when absent; a wrong type is an error.
        private func string(_ section: Section, _ key: String, _ expected: String) throws(ConfigurationError) -> (String, any TOMLValueConvertible)? {
            guard let value = section[key] else { return nil }
            guard let text = value.string else { throw fail(.wrongType, section.path(key), "must be \(expected); got \(describe(value))") }
            return (text, value)
        }

        private func integer(_ section: Section, _ key: String, _ expected: String) throws(ConfigurationError) -> (Int, any TOMLValueConvertible)? {
            guard let value = section[key] else { return nil }
            guard let number = value.int else { throw fail(.wrongType, section.path(key), "must be \(expected); got \(describe(value))") }
            return (number, value)
        }

        /// An integer or a float, as a finite `Double`.
        private func number(_ section: Section, _ key: String, _ expected: String) throws(ConfigurationError) -> (Double, any TOMLValueConvertible)? {
            guard let value = section[key] else { return nil }
            guard let number = value.int.map({ Double($0) }) ?? value.double else {
                throw fail(.wrongType, section.path(key), "must be \(expected); got \(describe(value))")
            }
            guard number.isFinite else { throw invalid(section.path(key), expected, value) }
            return (number, value)
        }

        /// Seconds from a number or a duration string ("90s", "10m", "2h", "7d").
        private func seconds(_ section: Section, _ key: String, _ expected: String, allowZero: Bool) throws(ConfigurationError) -> Double? {
            guard let value = section[key] else { return nil }
            let seconds: Double?
            if let text = value.string {
                seconds = DaemonConfiguration.seconds(parsing: text)
            } else if let number = value.int.map({ Double($0) }) ?? value.double {
                seconds = number
            } else {
                throw fail(.wrongType, section.path(key), "must be \(expected); got \(describe(value))")
            }
            guard let seconds, seconds.isFinite, allowZero ? seconds >= 0 : seconds > 0 else {
                throw invalid(section.path(key), expected, value)
            }
            return seconds
        }

        // MARK: Errors

        /// Unknown keys are errors so typos do not pass silently; the first in the file is reported.
        private func checkKeys(_ section: Section, known: [String], hints: [String: String]) throws(ConfigurationError) {
            let unknown = section.table.keys.filter { !known.contains($0) }
            guard let key = unknown.min(by: { (lines.line(of: section.path($0)) ?? .max, $0) < (lines.line(of: section.path($1)) ?? .max, $1) }) else {
                return
            }
            let isTable = section[key].map { $0.type == .table || $0.type == .array } ?? false
            let noun = section.path.isEmpty && isTable ? "table" : "key"
            let advice: String
            if let hint = hints[key] {
                advice = hint
            } else if let guess = closest(to: key, in: known) {
                advice = "did you mean \(guess)?"
            } else if section.path.isEmpty {
                advice = "the file holds only a [daemon] table and [[camera]] tables"
            } else {
                advice = "known keys here are \(known.joined(separator: ", "))"
            }
            throw fail(.unknownKey, section.path(key), "is not a known \(noun); \(advice)")
        }

        private func invalid(_ path: String, _ expected: String, _ value: any TOMLValueConvertible) -> ConfigurationError {
            fail(.invalidValue, path, "must be \(expected); got \(describe(value))")
        }

        /// An error about `path`, located at the line that assigns it (or the nearest enclosing table).
        private func fail(_ kind: ConfigurationError.Kind, _ path: String, _ message: String) -> ConfigurationError {
            ConfigurationError(kind: kind, source: source, keyPath: path, line: lines.line(of: path), message: "\(path) \(message)")
        }

        private func describe(_ value: any TOMLValueConvertible) -> String {
            switch value.type {
            case .string: return value.string.map { String(reflecting: $0) } ?? "a string"
            case .int: return value.int.map { String($0) } ?? "an integer"
            case .double: return value.double.map { String($0) } ?? "a number"
            case .bool: return value.bool.map { String($0) } ?? "a boolean"
            case .table: return "a table"
            case .array: return "a list"
            case .date: return "a date"
            case .time: return "a time of day"
            case .dateTime: return "a date and time"
            }
        }

        private func isGroupName(_ name: String) -> Bool {
            name.utf8.count <= 32 && !name.hasPrefix("-") && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }
        }
    }
}

// MARK: - Suggestions

/// The candidate nearest to `word` by edit distance (a swap of neighbours counts as one edit),
/// when it is near enough to be a likely typo, or the only candidate `word` abbreviates ("warn").
func closest(to word: String, in candidates: [String]) -> String? {
    let word = word.lowercased()
    let extensions = candidates.filter { word.count >= 2 && $0.hasPrefix(word) }
    if extensions.count == 1 { return extensions[0] }
    // One edit in a short word already changes most of it.
    let limit = word.count <= 3 ? 1 : max(2, word.count / 3)
    let scored = candidates.map { (candidate: $0, distance: editDistance(word, $0)) }
    guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= limit, best.distance < max(word.count, 1)
    else { return nil }
    return best.candidate
}

/// Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { table[i][0] = i }
    for j in 0...b.count { table[0][j] = j }
    for i in 1...a.count {
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
            }
        }
    }
    return table[a.count][b.count]
}

// MARK: - Finding lines

extension DaemonConfiguration {
    /// The line each key and table header of a TOML text is on, by key path
    /// (`daemon.socket`, `camera[1]`, `camera[1].photos.keep_bytes`).
    ///
    /// TOMLKit does not expose source positions, so this scans the text itself. It understands
    /// comments, all four string forms, arrays, inline tables, dotted and quoted keys, and
    /// `[[array]]` headers. Its limits: it assumes the text is valid TOML (run it after parsing);
    /// a quoted key containing '.' or '[' cannot be looked up; and when a key is not found
    /// (say, one inside an inline table written in an unusual way) `line(of:)` falls back to
    /// the enclosing table's line, or nil.
    struct KeyLines: Sendable {
        private var lineOfPath: [String: Int] = [:]

        init(_ text: String) {
            var scanner = Scanner(bytes: Array(text.utf8))
            scanner.scanDocument()
            lineOfPath = scanner.lineOfPath
        }

        /// The line of `path`, else of the nearest enclosing key or table that has one.
        func line(of path: String) -> Int? {
            var path = Substring(path)
            while !path.isEmpty {
                if let line = lineOfPath[String(path)] { return line }
                if path.hasSuffix("]"), let open = path.lastIndex(of: "[") {
                    path = path[..<open]
                } else if let dot = path.lastIndex(of: ".") {
                    path = path[..<dot]
                } else {
                    return nil
                }
            }
            return nil
        }

        private struct Scanner {
            let bytes: [UInt8]
            var index = 0
            var line = 1
            var lineOfPath: [String: Int] = [:]
            /// How many `[[name]]` headers have been seen, by the header's indexed path.
            var arrayCounts: [String: Int] = [:]

            init(bytes: [UInt8]) { self.bytes = bytes }

            var current: UInt8? { index < bytes.count ? bytes[index] : nil }
            func peek(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }

            mutating func advance() {
                if bytes[index] == UInt8(ascii: "\n") { line += 1 }
                index += 1
            }

            mutating func record(_ path: String, _ line: Int) {
                if lineOfPath[path] == nil { lineOfPath[path] = line }
            }

            mutating func scanDocument() {
                var table = ""
                while current != nil {
                    skipBlank(newlines: true)
                    guard let byte = current else { return }
                    let start = index
                    if byte == UInt8(ascii: "[") {
                        if let path = scanHeader() { table = path }
                    } else {
                        scanKeyValue(prefix: table)
                    }
                    skipToLineEnd()
                    if index == start { advance() }  // never stall on text this scanner does not expect
                }
            }

            /// `[a.b]` or `[[a.b]]`; returns the indexed path ("camera[2].photos").
            mutating func scanHeader() -> String? {
                let headerLine = line
                advance()
                let isArray = current == UInt8(ascii: "[")
                if isArray { advance() }
                guard let keys = scanKey(), current == UInt8(ascii: "]") else { return nil }
                var path = ""
                for (position, key) in keys.enumerated() {
                    path = path.isEmpty ? key : "\(path).\(key)"
                    if isArray && position == keys.count - 1 {
                        let count = arrayCounts[path, default: 0]
                        arrayCounts[path] = count + 1
                        path += "[\(count)]"
                    } else if let count = arrayCounts[path] {
                        path += "[\(count - 1)]"
                    }
                }
                record(path, headerLine)
                return path
            }

            mutating func scanKeyValue(prefix: String) {
                let keyLine = line
                guard let keys = scanKey(), current == UInt8(ascii: "=") else { return }
                advance()
                let path = ([prefix].filter { !$0.isEmpty } + keys).joined(separator: ".")
                record(path, keyLine)
                skipBlank(newlines: false)
                scanValue(path: path)
            }

            /// A dotted key of bare and quoted parts, leaving the scanner after trailing blanks.
            mutating func scanKey() -> [String]? {
                var keys: [String] = []
                while true {
                    skipBlank(newlines: false)
                    guard let byte = current else { return nil }
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        let start = index + 1
                        skipString()
                        let end = max(start, index - 1)
                        keys.append(String(decoding: bytes[start..<end], as: UTF8.self))
                    } else {
                        let start = index
                        while let c = current, isBareKeyByte(c) { advance() }
                        guard index > start else { return nil }
                        keys.append(String(decoding: bytes[start..<index], as: UTF8.self))
                    }
                    skipBlank(newlines: false)
                    guard current == UInt8(ascii: ".") else { return keys }
                    advance()
                }
            }

            mutating func scanValue(path: String) {
                guard let byte = current else { return }
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "'"):
                    skipString()
                case UInt8(ascii: "["):
                    advance()
                    var element = 0
                    while current != nil && current != UInt8(ascii: "]") {
                        skipBlank(newlines: true)
                        guard let c = current, c != UInt8(ascii: "]") else { break }
                        let start = index
                        if c == UInt8(ascii: ",") { advance(); element += 1; continue }
                        scanValue(path: "\(path)[\(element)]")
                        if index == start { advance() }
                    }
                    if current != nil { advance() }
                case UInt8(ascii: "{"):
                    advance()
                    while current != nil && current != UInt8(ascii: "}") {
                        skipBlank(newlines: false)
                        guard let c = current, c != UInt8(ascii: "}") else { break }
                        let start = index
                        if c == UInt8(ascii: ",") { advance(); continue }
                        scanKeyValue(prefix: path)
                        if index == start { advance() }
                    }
                    if current != nil { advance() }
                default:
                    // A number, boolean or date: runs to a separator.
                    while let c = current, !" \t\r\n,]}#".utf8.contains(c) { advance() }
                }
            }

            /// Skips a basic or literal string, single- or multi-line, starting at its opening quote.
            mutating func skipString() {
                let quote = bytes[index]
                let isMultiline = peek(1) == quote && peek(2) == quote
                if isMultiline {
                    advance(); advance(); advance()
                    while current != nil {
                        if quote == UInt8(ascii: "\""), current == UInt8(ascii: "\\") { advance(); if current != nil { advance() }; continue }
                        if current == quote, peek(1) == quote, peek(2) == quote {
                            advance(); advance(); advance()
                            // Up to two more quotes may belong to the content ("""a""""").
                            while current == quote { advance() }
                            return
                        }
                        advance()
                    }
                } else {
                    advance()
                    while let c = current, c != UInt8(ascii: "\n") {
                        if quote == UInt8(ascii: "\""), c == UInt8(ascii: "\\") { advance(); if current != nil { advance() }; continue }
                        advance()
                        if c == quote { return }
                    }
                }
            }

            /// Skips spaces, tabs and comments, and newlines too when asked.
            mutating func skipBlank(newlines: Bool) {
                while let c = current {
                    if c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\r") {
                        advance()
                    } else if c == UInt8(ascii: "#") {
                        skipToLineEnd()
                    } else if newlines && c == UInt8(ascii: "\n") {
                        advance()
                    } else {
                        return
                    }
                }
            }

            mutating func skipToLineEnd() {
                while current != nil && current != UInt8(ascii: "\n") { advance() }
            }

            func isBareKeyByte(_ c: UInt8) -> Bool {
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F
            }
        }
    }
}
