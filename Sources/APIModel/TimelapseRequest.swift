/// `POST /v1/timelapses`: which saved photos become a movie, and how. camctl encodes it,
/// camd's route decodes it; the values' rules are `TimelapseSettings`'.
public struct TimelapseRequest: Codable, Sendable, Hashable {
    /// The camera whose photos are used (its id, which is also its photo folder).
    public var camera: String
    /// From this time (inclusive) and until this one (exclusive), as the photo list takes
    /// them: seconds since 1970 or ISO 8601 such as "2026-11-22T06:00:00Z". The body may
    /// give either as a JSON number or a string.
    public var since: String?
    public var until: String?
    /// Frames a second; nil for `TimelapseSettings.defaultFPS`.
    public var fps: Double?
    /// "WIDTHxHEIGHT"; nil for the first photo's size.
    public var size: String?

    public init(camera: String, since: String? = nil, until: String? = nil, fps: Double? = nil, size: String? = nil) {
        self.camera = camera
        self.since = since
        self.until = until
        self.fps = fps
        self.size = size
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case camera, since, until, fps, size
    }

    /// Any key the body has, to name one that is not a field.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Reads the fields, refusing a key that is none of them (a typo such as "fsp" would
    /// otherwise be ignored silently), and a time given as a number or a string.
    public init(from decoder: any Decoder) throws {
        let known = Set(CodingKeys.allCases.map(\.stringValue))
        for key in try decoder.container(keyedBy: AnyKey.self).allKeys where !known.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(.init(codingPath: [key], debugDescription:
                "unknown field \"\(key.stringValue)\"; a timelapse takes \(CodingKeys.allCases.map(\.stringValue).joined(separator: ", "))"))
        }
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        camera = try fields.decode(String.self, forKey: .camera)
        since = try Self.time(fields, .since)
        until = try Self.time(fields, .until)
        fps = try fields.decodeIfPresent(Double.self, forKey: .fps)
        size = try fields.decodeIfPresent(String.self, forKey: .size)
    }

    private static func time(_ fields: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> String? {
        if let seconds = try? fields.decodeIfPresent(Double.self, forKey: key) { return String(seconds) }
        return try fields.decodeIfPresent(String.self, forKey: key)
    }
}
