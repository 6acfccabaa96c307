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

/// A control's number in JSON: a whole number as it is (all 64 bits kept), a real one (a
/// libcamera camera's Brightness, -1...1) with its fraction.
public enum ControlNumber: Codable, Sendable, Hashable, CustomStringConvertible {
    case integer(Int64)
    case real(Double)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let whole = try? container.decode(Int64.self) {
            self = .integer(whole)
        } else {
            self = .real(try container.decode(Double.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .integer(let whole): try container.encode(whole)
        case .real(let number): try container.encode(number)
        }
    }

    public var description: String {
        switch self {
        case .integer(let whole): String(whole)
        case .real(let number): String(number)
        }
    }
}

/// A device control in the API's JSON (`GET`/`PUT /v1/cameras/{id}/controls`).
public struct ControlState: Codable, Sendable {
    public var name: String
    public var label: String
    /// integer, boolean, menu, button, integer64, string, bitmask, intmenu, other, or float
    /// (a real number: its value, minimum, maximum and default have fractions, and step is 0).
    public var type: String
    public var value: ControlNumber?
    public var minimum: ControlNumber
    public var maximum: ControlNumber
    public var step: UInt64
    public var `default`: ControlNumber
    public var menu: [String: String]?
    public var readOnly: Bool
    public var inactive: Bool

    public init(_ control: DeviceControl) {
        name = control.name
        label = control.label
        type = control.kind.rawValue
        if let real = control.real {
            value = real.value.map(ControlNumber.real)
            minimum = .real(real.minimum)
            maximum = .real(real.maximum)
            self.default = .real(real.defaultValue)
        } else {
            value = control.value.map(ControlNumber.integer)
            minimum = .integer(control.minimum)
            maximum = .integer(control.maximum)
            self.default = .integer(control.defaultValue)
        }
        step = control.step
        menu = control.menu.isEmpty ? nil : Dictionary(uniqueKeysWithValues: control.menu.map { (String($0.index), $0.name) })
        readOnly = control.isReadOnly
        inactive = control.isInactive
    }
}
