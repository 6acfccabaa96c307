import CaptureSession
import V4L2

// The API's messages (docs/api.md), shared by camd's routes (ControlAPI) and camctl (through
// Client): both ends encode and decode these types, so they cannot drift apart.

/// `GET /v1/status`.
public struct DaemonStatus: Codable, Sendable {
    public var version: String
    public var pid: Int32
    public var uptimeSeconds: Double
    public var startedAt: String
    public var cameras: [CameraStatus]

    public init(version: String, pid: Int32, uptimeSeconds: Double, startedAt: String, cameras: [CameraStatus]) {
        self.version = version
        self.pid = pid
        self.uptimeSeconds = uptimeSeconds
        self.startedAt = startedAt
        self.cameras = cameras
    }
}

/// Every error: `{"error": {"code": "...", "message": "..."}}`.
public struct ErrorBody: Codable, Sendable {
    public struct Detail: Codable, Sendable {
        public var code: String
        public var message: String
    }

    public var error: Detail

    public init(code: String, message: String) {
        error = Detail(code: code, message: message)
    }
}

/// `GET /v1/cameras/{id}`: the status and the settings.
public struct CameraDetail: Codable, Sendable {
    public var status: CameraStatus
    /// Every setting, as `CameraSettings.table` writes them.
    public var settings: CameraSettings

    public init(status: CameraStatus, settings: CameraSettings) {
        self.status = status
        self.settings = settings
    }
}

/// A device control in the API's JSON (`GET`/`PUT /v1/cameras/{id}/controls`).
public struct ControlState: Codable, Sendable {
    public var name: String
    public var label: String
    public var type: String
    public var value: Int64?
    public var minimum: Int64
    public var maximum: Int64
    public var step: UInt64
    public var `default`: Int64
    public var menu: [String: String]?
    public var readOnly: Bool
    public var inactive: Bool

    public init(_ control: DeviceControl) {
        name = control.name
        label = control.label
        type = control.kind.rawValue
        value = control.value
        minimum = control.minimum
        maximum = control.maximum
        step = control.step
        self.default = control.defaultValue
        menu = control.menu.isEmpty ? nil : Dictionary(uniqueKeysWithValues: control.menu.map { (String($0.index), $0.name) })
        readOnly = control.isReadOnly
        inactive = control.isInactive
    }
}
