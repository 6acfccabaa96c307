/// What an event says, by type. Each case's fields are the JSON's fields beside `id`, `type`
/// and `time`; the API's encoder writes them snake_case.
public enum EventPayload: Sendable, Hashable {
    case cameraState(CameraStateChange)
    case photoSaved(PhotoSaved)
    case photoDeleted(PhotoDeleted)
    case recordingStarted(RecordingStarted)
    case recordingFinished(RecordingFinished)
    case diskFull(DiskSpace)
    case diskRecovered(DiskSpace)
    case configReloaded(ConfigReloaded)
    case gap(Gap)
    case dropped(Dropped)

    public var type: EventType {
        switch self {
        case .cameraState: .cameraState
        case .photoSaved: .photoSaved
        case .photoDeleted: .photoDeleted
        case .recordingStarted: .recordingStarted
        case .recordingFinished: .recordingFinished
        case .diskFull: .diskFull
        case .diskRecovered: .diskRecovered
        case .configReloaded: .configReloaded
        case .gap: .gap
        case .dropped: .dropped
        }
    }

    /// The camera the event is about; nil for the daemon's own events.
    public var camera: String? {
        switch self {
        case .cameraState(let p): p.camera
        case .photoSaved(let p): p.camera
        case .photoDeleted(let p): p.camera
        case .recordingStarted(let p): p.camera
        case .recordingFinished(let p): p.camera
        case .diskFull, .diskRecovered, .configReloaded, .gap, .dropped: nil
        }
    }

    func encodeFields(to encoder: any Encoder) throws {
        switch self {
        case .cameraState(let p): try p.encode(to: encoder)
        case .photoSaved(let p): try p.encode(to: encoder)
        case .photoDeleted(let p): try p.encode(to: encoder)
        case .recordingStarted(let p): try p.encode(to: encoder)
        case .recordingFinished(let p): try p.encode(to: encoder)
        case .diskFull(let p), .diskRecovered(let p): try p.encode(to: encoder)
        case .configReloaded(let p): try p.encode(to: encoder)
        case .gap(let p): try p.encode(to: encoder)
        case .dropped(let p): try p.encode(to: encoder)
        }
    }

    init(type: EventType, from decoder: any Decoder) throws {
        switch type {
        case .cameraState: self = .cameraState(try CameraStateChange(from: decoder))
        case .photoSaved: self = .photoSaved(try PhotoSaved(from: decoder))
        case .photoDeleted: self = .photoDeleted(try PhotoDeleted(from: decoder))
        case .recordingStarted: self = .recordingStarted(try RecordingStarted(from: decoder))
        case .recordingFinished: self = .recordingFinished(try RecordingFinished(from: decoder))
        case .diskFull: self = .diskFull(try DiskSpace(from: decoder))
        case .diskRecovered: self = .diskRecovered(try DiskSpace(from: decoder))
        case .configReloaded: self = .configReloaded(try ConfigReloaded(from: decoder))
        case .gap: self = .gap(try Gap(from: decoder))
        case .dropped: self = .dropped(try Dropped(from: decoder))
        }
    }

    /// `camera_state`: a camera's session moved from `previous` to `state`; `reason` says
    /// why it waits or failed.
    public struct CameraStateChange: Sendable, Hashable, Codable {
        public var camera: String
        public var state: SessionState
        public var previous: SessionState
        public var reason: String?
        public init(camera: String, state: SessionState, previous: SessionState, reason: String? = nil) {
            self.camera = camera
            self.state = state
            self.previous = previous
            self.reason = reason
        }
    }

    /// `photo_saved`: one for every photo, timelapse photos included.
    public struct PhotoSaved: Sendable, Hashable, Codable {
        public var camera: String
        public var name: String
        public var bytes: Int
        public var width: Int
        public var height: Int
        public init(camera: String, name: String, bytes: Int, width: Int, height: Int) {
            self.camera = camera
            self.name = name
            self.bytes = bytes
            self.width = width
            self.height = height
        }
    }

    /// `photo_deleted`: a file of the media library (photo or movie) was deleted, on request
    /// (`api`) or by the camera's retention limits (`retention`).
    public struct PhotoDeleted: Sendable, Hashable, Codable {
        public enum Why: String, Sendable, Hashable, Codable { case api, retention }
        public var name: String
        public var why: Why
        public var camera: String
        public init(name: String, why: Why, camera: String) {
            self.name = name
            self.why = why
            self.camera = camera
        }
    }

    /// `recording_started`: a recording opened a file; `name` is the name it is written for.
    public struct RecordingStarted: Sendable, Hashable, Codable {
        public var camera: String
        public var name: String
        public init(camera: String, name: String) {
            self.camera = camera
            self.name = name
        }
    }

    /// `recording_finished`: a recording's file is complete and has its name (one per segment).
    public struct RecordingFinished: Sendable, Hashable, Codable {
        public var camera: String
        public var name: String
        public var durationSeconds: Double
        public var bytes: Int
        public init(camera: String, name: String, durationSeconds: Double, bytes: Int) {
            self.camera = camera
            self.name = name
            self.durationSeconds = durationSeconds
            self.bytes = bytes
        }
    }

    /// `disk_full` and `disk_recovered`: the photo folder's disk stopped and started taking files.
    public struct DiskSpace: Sendable, Hashable, Codable {
        public var path: String
        public var message: String
        public init(path: String, message: String) {
            self.path = path
            self.message = message
        }
    }

    /// `config_reloaded`: camd.toml was read again; `changed` cameras run with new settings.
    public struct ConfigReloaded: Sendable, Hashable, Codable {
        public var changed: [String]
        /// Cameras whose new settings were refused, with why.
        public var refused: [String: String]
        /// What only a restart applies.
        public var needsRestart: [String]
        public init(changed: [String], refused: [String: String] = [:], needsRestart: [String] = []) {
            self.changed = changed
            self.refused = refused
            self.needsRestart = needsRestart
        }
    }

    /// `gap`: the client asked to resume after an event the backlog no longer holds.
    public struct Gap: Sendable, Hashable, Codable {
        /// How many events were lost.
        public var lost: UInt64
        public var message: String
        public init(lost: UInt64, message: String) {
            self.lost = lost
            self.message = message
        }
    }

    /// `dropped`: the client fell behind and its stream ends here.
    public struct Dropped: Sendable, Hashable, Codable {
        public var message: String
        public init(message: String) { self.message = message }
    }
}
