import CaptureSession
import JPEG
import TOMLKit
import V4L2
import VideoCore

// Reading camd.toml: typed values, and errors that name the key and say what was expected.
extension DaemonConfiguration.Reader {
    // MARK: Typed values

    /// The string at `key` and its TOML value, nil when absent; a wrong type is an error.
    func string(_ section: Section, _ key: String, _ expected: String) throws(ConfigurationError) -> (String, any TOMLValueConvertible)? {
        guard let value = section[key] else { return nil }
        guard let text = value.string else { throw fail(.wrongType, section.path(key), "must be \(expected); got \(describe(value))") }
        return (text, value)
    }

    func integer(_ section: Section, _ key: String, _ expected: String) throws(ConfigurationError) -> (Int, any TOMLValueConvertible)? {
        guard let value = section[key] else { return nil }
        guard let number = value.int else { throw fail(.wrongType, section.path(key), "must be \(expected); got \(describe(value))") }
        return (number, value)
    }

    /// An integer or a float, as a finite `Double`.
    func number(_ section: Section, _ key: String, _ expected: String) throws(ConfigurationError) -> (Double, any TOMLValueConvertible)? {
        guard let value = section[key] else { return nil }
        guard let number = value.int.map({ Double($0) }) ?? value.double else {
            throw fail(.wrongType, section.path(key), "must be \(expected); got \(describe(value))")
        }
        guard number.isFinite else { throw invalid(section.path(key), expected, value) }
        return (number, value)
    }

    /// Seconds from a number or a duration string ("90s", "10m", "2h", "7d").
    func seconds(_ section: Section, _ key: String, _ expected: String, allowZero: Bool) throws(ConfigurationError) -> Double? {
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
    func checkKeys(_ section: Section, known: [String], hints: [String: String]) throws(ConfigurationError) {
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

    func isGroupName(_ name: String) -> Bool {
        name.utf8.count <= 32 && !name.hasPrefix("-") && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }
    }
}
