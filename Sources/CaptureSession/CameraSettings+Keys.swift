import Foundation
import JPEG
import V4L2
import VideoCore

// Every camera setting, declared once. camd.toml's [[camera]] tables, `systemctl reload`,
// `POST /v1/cameras/{id}/configure`, `GET /v1/cameras/{id}` and camctl read and write
// them through this list; docs/configuration.md's camera tables are made from it.
extension CameraSettings {
    public typealias Key = SettingKey<CameraSettings>

    /// Every setting but `id`, in the order docs list them.
    public static let keys: [Key] = deviceKeys + encoderKeys + photoKeys + imageKeys + videoKeys + hookKeys

    /// The groups whose keys are set one by one (`photos.keep_count`); every other
    /// table-valued setting (`controls`, `location`) is set as a whole.
    public static let groups = ["photos", "image", "video"]

    public static func key(_ name: String) -> Key? { keys.first { $0.key == name } }

    /// The keys a table holds: the top level ("") or a group ("photos").
    public static func names(in group: String) -> [String] {
        group.isEmpty ? ["id"] + unique(keys.map { $0.group ?? $0.key })
            : keys.filter { $0.group == group }.map { String($0.name) }
    }

    private static func unique(_ names: [String]) -> [String] {
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted }
    }

    static let deviceKeys: [Key] = [
        Key("device", .string("a camera: a path such as \"/dev/video0\", a /dev/v4l/by-id name, a card name, an index, or testsrc",
                              problem: { $0.trimmingCharacters(in: .whitespaces).isEmpty ? "" : nil }),
            at: \.device, "the first camera found", restart: .device, "Which camera (see `camctl devices`)."),
        Key("format", .text("a pixel format's FourCC such as \"YUYV\" or \"MJPG\" (or \"MJPEG\")", PixelFormat.init(parsing:),
                            format: \.description),
            at: \.format, "chosen by camd", restart: .device, "The pixel format to capture."),
        Key("size", .text("WIDTHxHEIGHT with both above 0 and at most \(FrameSize.largestSide), such as \"1280x720\"",
                          { FrameSize(parsing: $0).flatMap { $0.isWithinLimits ? $0 : nil } }, format: \.description),
            at: \.size, "chosen by camd", restart: .device, "The frame size; the nearest size the camera offers is used."),
        Key("fps", .number("a number above 0 and at most 1000", { $0 > 0 && $0 <= 1000 }),
            at: \.fps, "chosen by camd", restart: .device, "The frame rate to ask for."),
        Key("controls", controlsReader, at: \.controls, default: [:], "none", restart: .device,
            "Device controls set whenever the camera opens, by v4l2-ctl name: brightness = 140, a boolean, or a menu item's name (a libcamera camera's Brightness: brightness = 0.25)."),
    ]

    static let encoderKeys: [Key] = [
        Key("quality", .wholeNumber(1...100, "a whole number from 1 to 100"), at: \.quality, default: 85, "85", restart: .encoders,
            "JPEG quality of the stream, snapshots and photos."),
        Key("encoder_threads", .wholeNumber(1...encoderThreadLimit, "a whole number from 1 to \(encoderThreadLimit)"),
            at: \.encoderThreads, default: defaultEncoderThreads, "one per core (at most 8)", restart: .encoders,
            "Encoder threads for the stream: frames are encoded side by side when one encode takes longer than a frame."),
        Key("encode_every_frame", .boolean, at: \.encodeEveryFrame, default: false, "false", restart: .encoders,
            "Encode every frame even with nobody watching, so a snapshot is answered from a JPEG already made (µStreamer's way)."),
        Key("autostart", .boolean, at: \.autostart, default: true, "true", restart: .none,
            "Start capturing when camd starts; otherwise on the first request."),
        Key("idle_stop", .duration("a number of seconds (0 or more) or a duration such as \"30s\" or \"5m\"", { $0 >= 0 }),
            at: \.idleStopSeconds, default: 30, "30", restart: .none,
            "Stop a camera that a request started after this long unused; 0 stops it as soon as the request ends."),
        Key("location", locationReader, at: \.location, "none", restart: .none,
            "Where the camera stands, written into every photo's GPS tags: { latitude = 51.5007, longitude = -0.1246, altitude = 12 }."),
    ]

    static let photoKeys: [Key] = [
        Key("photos.interval", .duration("a number of seconds from 0.1, or a duration such as \"90s\", \"10m\", \"2h\" or \"7d\"", { $0 >= 0.1 }),
            at: \.photos.intervalSeconds, "none (no timelapse)", restart: .none, "Save a photo this often while the camera runs (a timelapse)."),
        Key("photos.name", .string("a file name ending in .jpg, such as \"\(PhotoSettings.defaultPattern)\"", problem: PhotoSettings.patternProblem),
            at: \.photos.namePattern, default: PhotoSettings.defaultPattern, "\"\(PhotoSettings.defaultPattern)\"", restart: .none,
            "Photo file names: {camera}, {date} (YYYYMMDD), {time} (HHMMSS), {ms} and {seq} (6 digits) are filled in."),
        Key("photos.keep_count", .wholeNumber(1...Int.max, "a whole number above 0"), at: \.photos.keepCount, "no limit", restart: .none,
            "Keep at most this many of the camera's photos; the oldest go first."),
        Key("photos.keep_bytes", .byteSize("a whole number of bytes above 0, or a size such as \"500M\" or \"2G\""),
            at: \.photos.keepBytes, "no limit", restart: .none, "Keep at most this many bytes of the camera's photos."),
        Key("photos.keep_age", .duration("a number of seconds above 0 or a duration such as \"12h\" or \"7d\"", { $0 > 0 }),
            at: \.photos.keepSeconds, "no limit", restart: .none, "Delete the camera's photos older than this."),
    ]
}

// MARK: Readers of the table-valued settings

extension CameraSettings {
    public static let controlsReader = ValueReader<[String: String]>(
        "a table of control names and values: a number, true or false, or a menu item's name",
        read: { value throws(ValueProblem) in
            guard case .table(let entries) = value else { throw .wrongType }
            var controls: [String: String] = [:]
            for (name, value) in entries {
                let spelled = DeviceControl.key(for: name)
                guard spelled == name else {
                    let fix = spelled.isEmpty ? "use the name `camctl controls` or `v4l2-ctl -l` shows" : "write \(spelled)"
                    throw .at(name, .unknownKey, "is not a control name as v4l2-ctl spells it (lowercase, words joined by '_'); \(fix)")
                }
                let expected = "must be a number, true or false, or a menu item's name in quotes; got \(value)"
                switch value {
                case .integer(let number): controls[name] = String(number)
                case .number(let number) where number.isFinite: controls[name] = String(number)  // libcamera's Brightness = 0.25
                case .bool(let flag): controls[name] = String(flag)
                case .string(let text) where !text.trimmingCharacters(in: .whitespaces).isEmpty: controls[name] = text
                case .text(let text) where !text.trimmingCharacters(in: .whitespaces).isEmpty: controls[name] = text
                case .string, .text: throw .at(name, .invalidValue, expected)
                default: throw .at(name, .wrongType, expected)
                }
            }
            return controls
        },
        write: { controls in
            .table(controls.sorted { $0.key < $1.key }.map { name, text in
                if let number = Int64(text) { return (name, .integer(number)) }
                if let number = Double(text), number.isFinite { return (name, .number(number)) }
                if let flag = Bool(text) { return (name, .bool(flag)) }
                return (name, .string(text))
            })
        })

    static let locationReader = ValueReader<EXIF.GPSPosition>(
        "a table with latitude and longitude in degrees and, if known, altitude in metres, such as { latitude = 51.5007, longitude = -0.1246 }",
        read: { value throws(ValueProblem) in
            guard case .table(let entries) = value else { throw .wrongType }
            let known = ["latitude", "longitude", "altitude"]
            if let unknown = entries.first(where: { !known.contains($0.key) }) {
                throw .at(unknown.key, .unknownKey, "is not a known key; known keys here are \(known.joined(separator: ", "))")
            }
            let ranges: [String: (ClosedRange<Double>, String)] = [
                "latitude": (-90...90, "degrees north from -90 to 90 (south is negative), such as 51.5007"),
                "longitude": (-180...180, "degrees east from -180 to 180 (west is negative), such as -0.1246"),
                "altitude": (-100_000...100_000, "metres above sea level (negative below), within ±100000"),
            ]
            var numbers: [String: Double] = [:]
            for key in known {
                guard let given = value[key] else { continue }
                let (range, expected) = ranges[key]!
                do throws(ValueProblem) {
                    numbers[key] = try ValueReader<Double>.number(expected, { range.contains($0) }).read(given)
                } catch {
                    throw .at(key, error.kind, "must be \(expected); got \(given)")
                }
            }
            for key in ["latitude", "longitude"] where numbers[key] == nil {
                throw .at(key, .missingKey, "is missing; a location needs both latitude and longitude, such as { latitude = 51.5007, longitude = -0.1246 }")
            }
            do throws(ImageError) {
                return try EXIF.GPSPosition(latitude: numbers["latitude"]!, longitude: numbers["longitude"]!, altitude: numbers["altitude"])
            } catch {
                throw .at(error.parameter ?? "latitude", .invalidValue, error.description)
            }
        },
        write: { position in
            var entries: [(key: String, value: SettingValue)] = [("latitude", .number(position.latitude)), ("longitude", .number(position.longitude))]
            if let altitude = position.altitude { entries.append(("altitude", .number(altitude))) }
            return .table(entries)
        })
}

// MARK: Whole-settings checks

extension CameraSettings {
    /// Applies a table of settings as a request or camctl gives it: groups (`photos`,
    /// `image`) key by key, every other key as a whole; null sets a key's default. Then
    /// checks what depends on more than one key (unless `checkingWhole` is false). Nothing in
    /// `self` changes on an error.
    public mutating func apply(_ fields: [(key: String, value: SettingValue)], checkingWhole: Bool = true) throws(SettingError) {
        var next = self
        for (name, value) in fields {
            if Self.groups.contains(name) {
                if value == .null {
                    for key in Self.keys where key.group == name { try key.apply(.null, to: &next) }
                    continue
                }
                guard case .table(let inner) = value else {
                    throw SettingError(.wrongType, key: name, "must be a table of \(Self.names(in: name).joined(separator: ", ")); got \(value)")
                }
                for (innerName, innerValue) in inner { try next.applyOne("\(name).\(innerName)", innerValue, group: name) }
            } else {
                try next.applyOne(name, value, group: "")
            }
        }
        if checkingWhole { try next.check() }
        self = next
    }

    private mutating func applyOne(_ key: String, _ value: SettingValue, group: String) throws(SettingError) {
        guard let declaration = Self.key(key) else {
            // Only an unknown key needs the list of known ones, for its message.
            let known = Self.names(in: group).filter { $0 != "id" }
            let name = String(key.split(separator: ".").last ?? "")
            let advice = Suggestion.closest(to: name, in: known).map { "did you mean \($0)?" }
                ?? "known keys here are \(known.joined(separator: ", "))"
            throw SettingError(.unknownKey, key: key, "is not a known key; \(advice)")
        }
        try declaration.apply(value, to: &self)
    }

    /// What depends on more than one key.
    public func check() throws(SettingError) {
        if image.streamOverlay, image.overlay == nil {
            throw SettingError(.missingKey, key: "image.stream_overlay",
                               "is true but there is no overlay to draw: set image.overlay too (such as \"%Y-%m-%d %H:%M:%S\"), or set stream_overlay to false")
        }
    }

    /// Every setting as the API's JSON shows it: `id`, then each key, groups as tables.
    public var table: SettingValue {
        var entries: [(key: String, value: SettingValue)] = [("id", .string(id))]
        for key in Self.keys { SettingValue.insert(key.value(in: self), at: key.key, into: &entries) }
        return .table(entries)
    }
}

extension CameraSettings: Codable {
    /// The settings as `table` shows them.
    public func encode(to encoder: any Encoder) throws {
        try table.encode(to: encoder)
    }

    /// Settings read back from `table`'s JSON (camctl reading `GET /v1/cameras/{id}`).
    public init(from decoder: any Decoder) throws {
        let value = try SettingValue(from: decoder)
        guard case .table(let entries) = value, case .string(let id)? = value["id"] else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "camera settings need an id"))
        }
        self.init(id: id)
        do throws(SettingError) {
            try apply(entries.filter { $0.key != "id" })
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }
}

extension PhotoSettings {
    public static let namePlaceholders = ["camera", "date", "time", "ms", "seq"]

    /// What is wrong with a photo name pattern, or nil when it is fine.
    @Sendable public static func patternProblem(_ pattern: String) -> String? {
        let known = namePlaceholders.map { "{\($0)}" }.joined(separator: ", ")
        if pattern.contains("/") { return "must be a file name without '/' (every photo goes in the photo folder)" }
        if !pattern.hasSuffix(".jpg") { return "must end in .jpg, such as \"\(defaultPattern)\"" }
        if pattern.hasPrefix(".") { return "must not start with '.' (camd's unfinished files do)" }
        if pattern.utf8.contains(0) { return "must not contain a NUL character" }
        var rest = Substring(pattern)
        while let open = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) {
            guard rest[open] == "{", let close = rest[open...].firstIndex(of: "}") else {
                return "has an unmatched brace; placeholders are \(known)"
            }
            let name = String(rest[rest.index(after: open)..<close])
            guard namePlaceholders.contains(name) else {
                let guess = Suggestion.closest(to: name, in: namePlaceholders).map { " (did you mean {\($0)}?)" } ?? ""
                return "uses {\(name)}, which camd does not know\(guess); placeholders are \(known)"
            }
            rest = rest[rest.index(after: close)...]
        }
        if pattern.utf8.count > 200 { return "is longer than 200 bytes" }
        return nil
    }
}
