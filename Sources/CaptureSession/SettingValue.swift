/// A setting's value as a front end gave it, before the setting's declaration reads it:
/// camd.toml and the API's JSON carry types, camctl's `key=value` arguments carry text that
/// each setting reads its own way (`quality=70`, `photos.keep_bytes=500M`). The API's JSON
/// bodies are decoded into this type too, so a boolean, a whole number and a string stay
/// apart exactly as the client sent them.
public indirect enum SettingValue: Sendable, Equatable, CustomStringConvertible {
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case list([SettingValue])
    /// Keys in the order they were given (camd.toml's line order; sorted for JSON).
    case table([(key: String, value: SettingValue)])
    /// Text from a command line, typed by the setting that reads it.
    case text(String)
    /// JSON's null: back to the setting's default.
    case null
    /// A value no setting takes (a TOML date), described as the user wrote it.
    case other(String)

    /// The value as an error shows it, as the user would write it: strings quoted, command-line
    /// text quoted unless it reads as a number or a boolean, so `quality=0` and `quality = 0`
    /// are both "got 0".
    public var description: String {
        switch self {
        case .bool(let value): return String(value)
        case .integer(let value): return String(value)
        case .number(let value): return value.exactWhole.map { "\($0).0" } ?? String(value)
        case .string(let text): return String(reflecting: text)
        case .list: return "a list"
        case .table: return "a table"
        case .text(let text):
            if Int64(text) != nil || text == "true" || text == "false" { return text }
            let numeral = text.allSatisfy { "0123456789.-+eE".contains($0) } && text.first != "."
            if numeral, let number = Double(text), number.isFinite { return text }
            return String(reflecting: text)
        case .null: return "null"
        case .other(let what): return what
        }
    }

    /// The table's value at `key`, when this is a table.
    public subscript(key: String) -> SettingValue? {
        guard case .table(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    public static func == (a: SettingValue, b: SettingValue) -> Bool {
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return x == y
        case (.integer(let x), .integer(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)), (.text(let x), .text(let y)), (.other(let x), .other(let y)): return x == y
        case (.list(let x), .list(let y)): return x == y
        case (.table(let x), .table(let y)):
            return x.count == y.count && x.allSatisfy { entry in y.contains { $0.key == entry.key && $0.value == entry.value } }
        case (.null, .null): return true
        default: return false
        }
    }
}

extension Double {
    /// The value as a whole number when it is one that prints exactly (below 1e15), else nil.
    var exactWhole: Int64? { self == rounded() && abs(self) < 1e15 ? Int64(self) : nil }
}

extension SettingValue {
    /// Adds `value` to `entries` at `key`: "photos.keep_count" into the table at "photos"
    /// (made when it is not there yet), a key without a dot at the top.
    static func insert(_ value: SettingValue, at key: String, into entries: inout [(key: String, value: SettingValue)]) {
        let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return entries.append((key, value)) }
        if let index = entries.firstIndex(where: { $0.key == parts[0] }), case .table(var inner) = entries[index].value {
            inner.append((parts[1], value))
            entries[index].value = .table(inner)
        } else {
            entries.append((parts[0], .table([(parts[1], value)])))
        }
    }

    /// A number as the API's JSON writes it: whole numbers as integers.
    static func writing(_ number: Double) -> SettingValue { number.exactWhole.map(SettingValue.integer) ?? .number(number) }
}

extension SettingValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Foundation's decoder is strict about JSON types: `true` is no number, `1` no Bool.
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .integer(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([SettingValue].self) { self = .list(value) }
        else {
            let object = try container.decode([String: SettingValue].self)
            self = .table(object.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .integer(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .string(let text), .text(let text), .other(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .list(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .table(let entries):
            // As a dictionary: a JSONEncoder's key strategy leaves a dictionary's keys as they are.
            var container = encoder.singleValueContainer()
            try container.encode(Dictionary(entries.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first }))
        }
    }
}
