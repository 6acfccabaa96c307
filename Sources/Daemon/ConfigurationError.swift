/// A configuration file that camd cannot use: where the problem is and what to write instead.
///
/// `description` reads like a compiler message, so editors and terminals can jump to it:
/// `/etc/camd/camd.toml:14: camera[1].fps must be a number above 0 and at most 1000; got "fast"`.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What sort of problem this is, for code that reacts differently to each.
    public enum Kind: String, Sendable, Hashable {
        /// The file could not be read (missing at an explicit path, permissions, not UTF-8).
        case unreadable
        /// The text is not valid TOML; `line` and `column` come from the TOML parser.
        case syntax
        /// A key or table camd does not know, usually a typo.
        case unknownKey
        /// A key camd needs is not there (a camera without an `id`).
        case missingKey
        /// A value of the wrong TOML type (a string where a number belongs).
        case wrongType
        /// A value of the right type that camd cannot use (quality 0, an unknown log level).
        case invalidValue
    }

    public var kind: Kind
    /// The file the text came from, as given to `load(path:)` or `parse(_:source:)`.
    public var source: String
    /// The key the problem is about, as `daemon.socket_mode` or `camera[1].photos.keep_bytes`
    /// (cameras count from 0 in file order); nil when the problem is the whole file.
    public var keyPath: String?
    /// The 1-based line of the problem, when it could be found.
    public var line: Int?
    /// The 1-based column, for syntax errors only.
    public var column: Int?
    /// What is wrong and what would be right, without the location prefix.
    public var message: String

    public init(kind: Kind, source: String, keyPath: String? = nil, line: Int? = nil, column: Int? = nil, message: String) {
        self.kind = kind
        self.source = source
        self.keyPath = keyPath
        self.line = line
        self.column = column
        self.message = message
    }

    /// `source:line:column: message`, leaving out the parts that are not known.
    public var description: String {
        var location = source
        if let line {
            location += ":\(line)"
            if let column { location += ":\(column)" }
        }
        return "\(location): \(message)"
    }
}
