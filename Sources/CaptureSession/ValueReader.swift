import Foundation

/// How a setting reads a value of one type from what a front end gave, and writes it back
/// for the API's JSON. The kinds below are the only spellings camd takes: durations and byte
/// sizes read alike wherever they appear ("90s", "500M", or plain numbers).
public struct ValueReader<Value: Sendable>: Sendable {
    /// What the setting takes, in words, for errors and docs.
    public let expected: String
    public let read: @Sendable (SettingValue) throws(ValueProblem) -> Value
    public let write: @Sendable (Value) -> SettingValue

    public init(_ expected: String, read: @escaping @Sendable (SettingValue) throws(ValueProblem) -> Value,
                write: @escaping @Sendable (Value) -> SettingValue) {
        self.expected = expected
        self.read = read
        self.write = write
    }

    /// The same reading, with a further check of the value (nil when it is fine, else a problem).
    public func checked(_ expected: String? = nil, _ check: @escaping @Sendable (Value) -> ValueProblem?) -> ValueReader<Value> {
        let read = self.read
        return ValueReader(expected ?? self.expected, read: { value throws(ValueProblem) in
            let result = try read(value)
            if let problem = check(result) { throw problem }
            return result
        }, write: write)
    }
}

extension ValueReader where Value == Int {
    /// A whole number in `range`; an integral float (85.0) counts as whole.
    public static func wholeNumber(_ range: ClosedRange<Int>, _ expected: String) -> ValueReader {
        ValueReader(expected, read: { value throws(ValueProblem) in
            let number: Int
            switch value {
            case .integer(let whole) where whole >= Int64(Int.min) && whole <= Int64(Int.max): number = Int(whole)
            case .integer: throw .invalid
            case .number(let real) where real.exactWhole != nil: number = Int(real)
            case .text(let text):
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                if let whole = Int(trimmed) {
                    number = whole
                } else if let whole = Double(trimmed)?.exactWhole {
                    number = Int(whole)
                } else {
                    throw .invalid
                }
            default: throw .wrongType
            }
            guard range.contains(number) else { throw .invalid }
            return number
        }, write: { .integer(Int64($0)) })
    }
}

extension ValueReader where Value == Double {
    /// A finite number that `accepts`.
    public static func number(_ expected: String, _ accepts: @escaping @Sendable (Double) -> Bool) -> ValueReader {
        ValueReader(expected, read: { value throws(ValueProblem) in
            let number: Double
            switch value {
            case .integer(let whole): number = Double(whole)
            case .number(let real): number = real
            case .text(let text):
                guard let real = Double(text.trimmingCharacters(in: .whitespaces)) else { throw .invalid }
                number = real
            default: throw .wrongType
            }
            guard number.isFinite, accepts(number) else { throw .invalid }
            return number
        }, write: SettingValue.writing)
    }

    /// Seconds: a number, or a duration such as "90s", "10m", "2h", "7d", "1h30m" (see
    /// `seconds(parsing:)`), at most `ValueSpelling.longestDuration`.
    public static func duration(_ expected: String, _ accepts: @escaping @Sendable (Double) -> Bool) -> ValueReader {
        ValueReader(expected, read: { value throws(ValueProblem) in
            let seconds: Double?
            switch value {
            case .integer(let whole): seconds = Double(whole)
            case .number(let real): seconds = real
            case .string(let text), .text(let text): seconds = ValueSpelling.seconds(parsing: text)
            default: throw .wrongType
            }
            guard let seconds, seconds.isFinite, seconds <= ValueSpelling.longestDuration, accepts(seconds) else { throw .invalid }
            return seconds
        }, write: SettingValue.writing)
    }
}

extension ValueReader where Value == Int64 {
    /// Bytes: a whole number, or a size such as "500M" or "2G" (see `byteCount(parsing:)`); above 0.
    public static func byteSize(_ expected: String) -> ValueReader {
        ValueReader(expected, read: { value throws(ValueProblem) in
            let bytes: Int64?
            switch value {
            case .integer(let whole): bytes = whole
            case .number(let real) where real == real.rounded() && abs(real) < 9e18: bytes = Int64(real)
            case .number: throw .invalid
            case .string(let text), .text(let text): bytes = ValueSpelling.byteCount(parsing: text)
            default: throw .wrongType
            }
            guard let bytes, bytes > 0 else { throw .invalid }
            return bytes
        }, write: { .integer($0) })
    }
}

extension ValueReader where Value == Bool {
    public static let boolean = ValueReader("true or false", read: { value throws(ValueProblem) in
        switch value {
        case .bool(let flag): return flag
        case .text("true"): return true
        case .text("false"): return false
        case .text: throw .invalid
        default: throw .wrongType
        }
    }, write: { .bool($0) })
}

extension ValueReader {
    /// Text that `parse` turns into a value (nil when it cannot), written back by `format`.
    public static func text(_ expected: String, _ parse: @escaping @Sendable (String) -> Value?,
                            format: @escaping @Sendable (Value) -> String) -> ValueReader {
        ValueReader(expected, read: { value throws(ValueProblem) in
            switch value {
            case .string(let text), .text(let text):
                guard let result = parse(text) else { throw .invalid }
                return result
            default: throw .wrongType
            }
        }, write: { .string(format($0)) })
    }
}

extension ValueReader where Value == String {
    /// Text that `problem` finds nothing wrong with (it returns a message after the key, or nil).
    public static func string(_ expected: String, problem: @escaping @Sendable (String) -> String? = { _ in nil }) -> ValueReader {
        ValueReader(expected, read: { value throws(ValueProblem) in
            switch value {
            case .string(let text), .text(let text):
                if let message = problem(text) { throw message.isEmpty ? .invalid : .invalid("\(message); got \(value)") }
                return text
            default: throw .wrongType
            }
        }, write: { .string($0) })
    }

    /// One of `choices`, in any case; an unknown word gets a "did you mean".
    public static func choice(_ choices: [String]) -> ValueReader {
        let expected = "one of " + choices.joined(separator: ", ")
        return ValueReader(expected, read: { value throws(ValueProblem) in
            switch value {
            case .string(let text), .text(let text):
                if choices.contains(text.lowercased()) { return text.lowercased() }
                let guess = Suggestion.closest(to: text, in: choices).map { " (did you mean \($0)?)" } ?? ""
                throw .invalid("must be \(expected); got \(value)\(guess)")
            default: throw .wrongType
            }
        }, write: { .string($0) })
    }
}

/// The spellings of durations and byte sizes, one reader for every front end.
public enum ValueSpelling {
    /// The longest duration any setting takes: 100 years. Longer ones are typos, and a
    /// `Duration` made of 1e136 seconds traps (Schemathesis sent one as `idle_stop`).
    public static let longestDuration = 100 * 365 * 86_400.0

    /// Seconds from what a user writes: a number ("90", "1.5") or number-unit pairs
    /// ("90s", "10m", "2h", "7d", "1w", "250ms", "1h30m"). Nil when malformed; zero is allowed
    /// here, callers decide whether it makes sense.
    public static func seconds(parsing text: String) -> Double? {
        let units: [(suffix: Substring, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400), ("w", 604_800)]
        var rest = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
        guard !rest.isEmpty else { return nil }
        if rest.allSatisfy(\.isDecimalDigitOrPoint) { return Double(rest) }
        var total = 0.0
        while !rest.isEmpty {
            let number = rest.prefix(while: \.isDecimalDigitOrPoint)
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            let letters = rest.prefix { $0.isASCII && $0.isLetter }
            guard let unit = units.first(where: { $0.suffix == letters }) else { return nil }
            rest = rest.dropFirst(letters.count).drop { $0 == " " }
            total += value * unit.seconds
        }
        return total.isFinite ? total : nil
    }

    /// Bytes from what a user writes: a whole number ("1000000") or a number with a
    /// binary unit ("500K", "500M", "2G", "1.5T"; also "2GB", "2GiB", any case), where
    /// K, M, G and T are powers of 1024. Nil when malformed or too large for `Int64`.
    public static func byteCount(parsing text: String) -> Int64? {
        let upper = text.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        var body = Substring(upper)
        let binarySuffix = body.hasSuffix("IB")
        if binarySuffix { body = body.dropLast(2) } else if body.hasSuffix("B") { body = body.dropLast() }
        var power = 0
        if let last = body.last, let index = Array("KMGT").firstIndex(of: last) {
            power = index + 1
            body = body.dropLast()
        } else if binarySuffix {
            return nil  // "iB" needs a unit before it
        }
        body = Substring(body.trimmingCharacters(in: .whitespaces))
        guard !body.isEmpty, body.allSatisfy(\.isDecimalDigitOrPoint) else { return nil }
        if power == 0 { return Int64(body) }  // plain bytes are whole
        guard let value = Double(body) else { return nil }
        let bytes = (value * Double(1 << (10 * power))).rounded(.down)
        guard bytes < 9.2e18 else { return nil }
        return Int64(bytes)
    }
}

extension Character {
    var isDecimalDigitOrPoint: Bool { ("0"..."9").contains(self) || self == "." }
}
