/// One setting, declared once: its key, what it takes, its default, what a change to it
/// restarts, and how a value is read into and out of the settings it belongs to (`Root`).
/// camd.toml, `systemctl reload`, `POST /v1/cameras/{id}/configure` and camctl all read
/// values through these declarations, so they accept the same values with the same errors,
/// and docs/configuration.md's tables are made from them.
public struct SettingKey<Root>: Sendable {
    /// The key as camd.toml and the API spell it, with its group: "quality", "photos.keep_bytes".
    public let key: String
    /// What the setting takes, in words: "a whole number from 1 to 100".
    public let expected: String
    /// The default, in words: "85", "none", "one per core, at most 8".
    public let defaultText: String
    public let summary: String
    /// What a running camera restarts when this setting changes.
    public let restart: ConfigureRestart
    private let write: @Sendable (inout Root, SettingValue) throws(ValueProblem) -> Void
    private let reset: @Sendable (inout Root) -> Void
    private let read: @Sendable (Root) -> SettingValue

    /// The last part of the key ("keep_bytes"), as it appears inside its group's table.
    public var name: Substring { key.split(separator: ".").last ?? Substring(key) }
    /// The group ("photos"), or nil for a key of its own.
    public var group: String? { key.contains(".") ? String(key.split(separator: ".")[0]) : nil }

    /// A setting stored at `path`, read by `reader`; `defaultValue` is what null sets.
    public init<Value: Sendable>(_ key: String, _ reader: ValueReader<Value>, at path: any WritableKeyPath<Root, Value> & Sendable,
                                 default defaultValue: Value, _ defaultText: String, restart: ConfigureRestart = .none, _ summary: String) {
        self.init(key, reader, get: { $0[keyPath: path] }, set: { $0[keyPath: path] = $1 }, default: defaultValue, defaultText,
                  restart: restart, summary)
    }

    /// An optional setting stored at `path`; null (or leaving it out) means none.
    public init<Value: Sendable>(_ key: String, _ reader: ValueReader<Value>, at path: any WritableKeyPath<Root, Value?> & Sendable,
                                 _ defaultText: String, restart: ConfigureRestart = .none, _ summary: String) {
        self.key = key
        self.expected = reader.expected
        self.defaultText = defaultText
        self.restart = restart
        self.summary = summary
        write = { root, value throws(ValueProblem) in root[keyPath: path] = try reader.read(value) }
        reset = { $0[keyPath: path] = nil }
        read = { root in root[keyPath: path].map(reader.write) ?? .null }
    }

    /// A setting kept by `get` and `set`, for values stored in another shape than they are written.
    public init<Value: Sendable>(_ key: String, _ reader: ValueReader<Value>, get: @escaping @Sendable (Root) -> Value,
                                 set: @escaping @Sendable (inout Root, Value) throws(ValueProblem) -> Void,
                                 default defaultValue: Value, _ defaultText: String, restart: ConfigureRestart = .none, _ summary: String) {
        self.key = key
        self.expected = reader.expected
        self.defaultText = defaultText
        self.restart = restart
        self.summary = summary
        write = { root, value throws(ValueProblem) in try set(&root, try reader.read(value)) }
        reset = { root in try? set(&root, defaultValue) }
        read = { reader.write(get($0)) }
    }

    /// Sets the setting from `value`; null sets its default. The error names the key.
    public func apply(_ value: SettingValue, to root: inout Root) throws(SettingError) {
        if value == .null { return reset(&root) }
        do throws(ValueProblem) {
            try write(&root, value)
        } catch {
            throw error.settingError(key: key, expected: expected, value: value)
        }
    }

    /// The setting's value in `root`, as the API's JSON shows it; null when unset.
    public func value(in root: Root) -> SettingValue { read(root) }
}

/// Why a value was refused, as the front end that read it reports it: camd.toml adds the
/// file, line and camera (`camera[0].photos.keep_bytes`), the API answers 400 with
/// `description`, camctl prints it.
public struct SettingError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case wrongType, invalidValue, unknownKey, missingKey
    }

    public var kind: Kind
    /// The full key: "photos.keep_bytes", "controls.brightness".
    public var key: String
    /// What follows the key: "must be a whole number from 1 to 100; got 0".
    public var message: String

    public init(_ kind: Kind, key: String, _ message: String) {
        self.kind = kind
        self.key = key
        self.message = message
    }

    public var description: String { "\(key) \(message)" }
}

/// Why a `ValueReader` refused a value; the setting that asked adds its key and the value.
public struct ValueProblem: Error, Sendable {
    var kind: SettingError.Kind
    /// A message of its own, after the key; nil for "must be <expected>; got <value>".
    var message: String?
    /// A key inside the value (a table's entry: "latitude" of `location`).
    var subkey: String?

    public init(_ kind: SettingError.Kind, _ message: String? = nil, subkey: String? = nil) {
        self.kind = kind
        self.message = message
        self.subkey = subkey
    }

    /// The value is of a type the setting never takes (a string for a number).
    public static let wrongType = ValueProblem(.wrongType)
    /// The value has the right type but is out of range or malformed.
    public static let invalid = ValueProblem(.invalidValue)

    public static func invalid(_ message: String) -> ValueProblem { ValueProblem(.invalidValue, message) }

    public static func at(_ subkey: String, _ kind: SettingError.Kind, _ message: String) -> ValueProblem {
        ValueProblem(kind, message, subkey: subkey)
    }

    public func settingError(key: String, expected: String, value: SettingValue) -> SettingError {
        SettingError(kind, key: subkey.map { "\(key).\($0)" } ?? key, message ?? "must be \(expected); got \(value)")
    }
}
