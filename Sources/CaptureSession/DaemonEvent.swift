/// Something that happened in camd, as the event log keeps it and `GET /v1/events` sends it.
///
/// Its JSON is one flat object: `id`, `type` and `time`, then the payload's own fields
/// (snake_case with the API's encoder): `{"id":7,"type":"photo_saved","time":…,"camera":"front",…}`.
public struct DaemonEvent: Sendable, Hashable, Codable {
    /// Increases by one with every event the log publishes; `gap` and `dropped`, which only
    /// one client sees, carry the id of the last event before them, so resuming from it loses nothing.
    public var id: UInt64
    /// When it happened, in seconds since 1970 (UTC), as photos' capture times are.
    public var time: Double
    public var payload: EventPayload

    public init(id: UInt64, time: Double, payload: EventPayload) {
        self.id = id
        self.time = time
        self.payload = payload
    }

    public var type: EventType { payload.type }
    /// The camera it is about; nil for events about the whole daemon.
    public var camera: String? { payload.camera }

    private enum CodingKeys: String, CodingKey { case id, type, time }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type, forKey: .type)
        try container.encode(time, forKey: .time)
        try payload.encodeFields(to: encoder)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UInt64.self, forKey: .id)
        time = try container.decode(Double.self, forKey: .time)
        payload = try EventPayload(type: try container.decode(EventType.self, forKey: .type), from: decoder)
    }
}

/// The kinds of events; the raw value is the `type` in the JSON and the SSE `event:` name.
public enum EventType: String, Sendable, Hashable, Codable, CaseIterable {
    case cameraState = "camera_state"
    case photoSaved = "photo_saved"
    case photoDeleted = "photo_deleted"
    case recordingStarted = "recording_started"
    case recordingFinished = "recording_finished"
    case diskFull = "disk_full"
    case diskRecovered = "disk_recovered"
    case configReloaded = "config_reloaded"
    /// To one client only: events it asked for are no longer in the backlog.
    case gap
    /// To one client only, last: it fell behind and its stream ends.
    case dropped
}
