import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Writes log lines to stderr with syslog priority prefixes ("<4>"), which
/// journald turns into levels; outside systemd the prefix is left off.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let prefixed: Bool

    public init(label: String, level: Logger.Level, prefixed: Bool) {
        self.label = label
        self.logLevel = level
        self.prefixed = prefixed
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The syslog priority of a level (sd-daemon.h's SD_* values).
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        let context = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        var line = prefixed ? "<\(Self.priority(event.level))>" : "\(event.level): "
        if !context.isEmpty { line += "[\(context)] " }
        line += "\(event.message)\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
