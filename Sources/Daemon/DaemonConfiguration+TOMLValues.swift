import CaptureSession
import JPEG
import TOMLKit
import V4L2
import VideoCore

// Reading camd.toml: typed values, and errors that name the key and say what was expected.
extension DaemonConfiguration.Reader {
    // MARK: Values

    /// The section's keys in the order the file gives them, so the first problem in the file is the one reported.
    func orderedKeys(_ section: Section) -> [String] {
        section.table.keys.sorted { (lines.line(of: section.path($0)) ?? .max, $0) < (lines.line(of: section.path($1)) ?? .max, $1) }
    }

    /// A TOML value as the settings' declarations read it; tables keep the file's order.
    func settingValue(_ value: any TOMLValueConvertible, at path: String) -> SettingValue {
        switch value.type {
        case .string: return value.string.map(SettingValue.string) ?? .other(describe(value))
        case .int: return value.int.map { .integer(Int64($0)) } ?? .other(describe(value))
        case .double: return value.double.map(SettingValue.number) ?? .other(describe(value))
        case .bool: return value.bool.map(SettingValue.bool) ?? .other(describe(value))
        case .array: return .list((value.array.map { Array($0) } ?? []).map { settingValue($0, at: path) })
        case .table:
            guard let table = value.table else { return .other(describe(value)) }
            let section = Section(path: path, table: table)
            return .table(orderedKeys(section).compactMap { key in section[key].map { (key, settingValue($0, at: section.path(key))) } })
        default: return .other(describe(value))
        }
    }

    // MARK: Errors

    /// Hints for keys written in the wrong table: each key of a list gets its list's hint
    /// (a later list's, when a key is in two).
    func hints(_ places: (keys: [String], hint: String)...) -> [String: String] { hints(places) }

    func hints(_ places: [(keys: [String], hint: String)]) -> [String: String] {
        var hints: [String: String] = [:]
        for (keys, hint) in places { for key in keys { hints[key] = hint } }
        return hints
    }

    /// Unknown keys are errors so typos do not pass silently; the first in the file is reported.
    func checkKeys(_ section: Section, known: [String], hints: [String: String]) throws(ConfigurationError) {
        let unknown = section.table.keys.filter { !known.contains($0) }
        guard let key = orderedKeys(section).first(where: { unknown.contains($0) }) else { return }
        let isTable = section[key].map { $0.type == .table || $0.type == .array } ?? false
        let noun = section.path.isEmpty && isTable ? "table" : "key"
        let advice: String
        if let hint = hints[key] {
            advice = hint
        } else if let guess = Suggestion.closest(to: key, in: known) {
            advice = "did you mean \(guess)?"
        } else if section.path.isEmpty {
            advice = "the file holds only a [daemon] table and [[camera]] tables"
        } else {
            advice = "known keys here are \(known.joined(separator: ", "))"
        }
        throw fail(.unknownKey, section.path(key), "is not a known \(noun); \(advice)")
    }

    func invalid(_ path: String, _ expected: String, _ value: any TOMLValueConvertible) -> ConfigurationError {
        fail(.invalidValue, path, "must be \(expected); got \(describe(value))")
    }

    /// An error about `path`, located at the line that assigns it (or the nearest enclosing table).
    func fail(_ kind: ConfigurationError.Kind, _ path: String, _ message: String) -> ConfigurationError {
        ConfigurationError(kind: kind, source: source, keyPath: path, line: lines.line(of: path), message: "\(path) \(message)")
    }

    func describe(_ value: any TOMLValueConvertible) -> String {
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
}

extension ConfigurationError.Kind {
    init(_ kind: SettingError.Kind) {
        switch kind {
        case .wrongType: self = .wrongType
        case .invalidValue: self = .invalidValue
        case .unknownKey: self = .unknownKey
        case .missingKey: self = .missingKey
        }
    }
}
