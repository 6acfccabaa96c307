import CaptureSession
import JPEG
import TOMLKit
import V4L2
import VideoCore

extension DaemonConfiguration {
    /// Reads a configuration from TOML text, checking every key and value.
    ///
    /// - Parameter source: where the text came from, used in error messages (a path, or "<stdin>").
    /// - Throws: `ConfigurationError` for the first problem found: a syntax error (with the
    ///   parser's line and column), an unknown key (with the closest known one), a value of the
    ///   wrong type or out of range (with what would be right), or duplicate camera ids.
    public static func parse(_ text: String, source: String) throws(ConfigurationError) -> DaemonConfiguration {
        guard !text.utf8.contains(0) else {
            throw ConfigurationError(kind: .unreadable, source: source, message: "the text contains a NUL byte, which TOML forbids; save the file as plain UTF-8 text")
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let line = error.source.begin.line
            throw ConfigurationError(kind: .syntax, source: source, line: line, column: error.source.begin.column,
                                     message: "not valid TOML: \(error.description)\(syntaxHint(text, line: line))")
        } catch {
            throw ConfigurationError(kind: .syntax, source: source, message: "not valid TOML: \(error)")
        }
        // The locator runs only on text the TOML parser accepted, so its scanner can be simple.
        return try Reader(source: source, lines: KeyLines(text)).configuration(from: Section(path: "", table: root))
    }

    /// A nudge for the one syntax error TOML's rules make likely here: `socket_mode = 0660`.
    private static func syntaxHint(_ text: String, line: Int) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count, lines[line - 1].trimmingWhitespace.hasPrefix("socket_mode") else { return "" }
        return "; write socket_mode as a quoted string of octal digits, such as socket_mode = \"0660\""
    }
}

// MARK: - Checking values

extension DaemonConfiguration {
    static let daemonKeys = DaemonConfiguration.keys.map(\.key)
    static let cameraKeys = CameraSettings.names(in: "")
    static let photoKeys = CameraSettings.names(in: "photos")
    /// The query parameters of the image endpoints, plus the overlay's keys.
    static let imageKeys = CameraSettings.names(in: "image")
    static let locationKeys = ["latitude", "longitude", "altitude"]

    /// One TOML table and where it sits ("", "daemon", "camera[2].photos").
    struct Section {
        let path: String
        let table: TOMLTable

        func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
        subscript(key: String) -> (any TOMLValueConvertible)? { table[key] }
    }

    /// Turns the parsed TOML into a configuration, one table at a time, stopping at the first problem.
    /// Reads each part of the file: [daemon] here, the cameras in +TOMLCameras, typed values
    /// and errors in +TOMLValues; line numbers come from +KeyLines.
    struct Reader {
        /// For the reader's extensions in other files, which do not see DaemonConfiguration's scope.
        typealias Section = DaemonConfiguration.Section
        let source: String
        let lines: KeyLines

        func configuration(from root: Section) throws(ConfigurationError) -> DaemonConfiguration {
            try checkKeys(root, known: ["daemon", "camera"], hints: hints(
                (DaemonConfiguration.daemonKeys, "it belongs under [daemon]"),
                (DaemonConfiguration.cameraKeys, "it belongs in a [[camera]] table"),
                (DaemonConfiguration.photoKeys, "it belongs under [camera.photos], below a [[camera]] table"),
                (DaemonConfiguration.imageKeys, "it belongs under [camera.image], below a [[camera]] table")))

            var configuration = DaemonConfiguration()
            if let value = root["daemon"] {
                guard let table = value.table else {
                    throw fail(.wrongType, "daemon", "must be a table: write [daemon] on a line of its own above its keys; got \(describe(value))")
                }
                try readDaemon(Section(path: "daemon", table: table), into: &configuration)
            }
            if let value = root["camera"] {
                guard let array = value.array else {
                    let why = value.table != nil ? "a single [camera] table" : describe(value)
                    throw fail(.wrongType, "camera", "must be a list of tables: write [[camera]] (double brackets) above each camera's keys; got \(why)")
                }
                var firstUse: [String: Int] = [:]
                for (index, element) in array.enumerated() {
                    let path = "camera[\(index)]"
                    guard let table = element.table else {
                        throw fail(.wrongType, path, "must be a table of camera settings; got \(describe(element))")
                    }
                    let camera = try readCamera(Section(path: path, table: table))
                    if let first = firstUse[camera.id] {
                        throw fail(.invalidValue, "\(path).id", "\"\(camera.id)\" is already the id of camera[\(first)]; give each camera its own id")
                    }
                    firstUse[camera.id] = index
                    configuration.cameras.append(camera)
                }
            }
            return configuration
        }

        // MARK: [daemon]

        /// [daemon]'s values, read by their declarations (DaemonConfiguration+Keys).
        func readDaemon(_ daemon: Section, into configuration: inout DaemonConfiguration) throws(ConfigurationError) {
            try checkKeys(daemon, known: DaemonConfiguration.daemonKeys,
                          hints: hints((DaemonConfiguration.cameraKeys + DaemonConfiguration.photoKeys, "it belongs in a [[camera]] table")))
            let fields = orderedKeys(daemon).compactMap { key in daemon[key].map { (key: key, value: settingValue($0, at: daemon.path(key))) } }
            do throws(SettingError) {
                try configuration.apply(fields)
            } catch {
                throw fail(ConfigurationError.Kind(error.kind), daemon.path(error.key), error.message)
            }
        }
    }
}
