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
    static let daemonKeys = ["socket", "socket_mode", "socket_group", "read_only_group", "photo_folder", "log_level",
                             "tcp", "tcp_token", "tcp_hosts", "shutdown_timeout", "idle_timeout"]
    static let cameraKeys = ["id", "device", "format", "size", "fps", "quality", "autostart", "idle_stop", "controls", "photos",
                             "image", "location", "encoder_threads", "encode_every_frame"]
    static let photoKeys = ["interval", "name", "keep_count", "keep_bytes", "keep_age"]
    /// The query parameters of the image endpoints, plus `stream_overlay`.
    static let imageKeys = ["width", "height", "fit", "max", "crop", "rotate", "flip", "interpolation", "pad",
                            "overlay", "overlay_corner", "stream_overlay"]
    static let locationKeys = ["latitude", "longitude", "altitude"]
    static let namePlaceholders = ["camera", "date", "time", "ms", "seq"]

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
            var hints: [String: String] = [:]
            for key in DaemonConfiguration.daemonKeys { hints[key] = "it belongs under [daemon]" }
            for key in DaemonConfiguration.cameraKeys { hints[key] = "it belongs in a [[camera]] table" }
            for key in DaemonConfiguration.photoKeys { hints[key] = "it belongs under [camera.photos], below a [[camera]] table" }
            for key in DaemonConfiguration.imageKeys { hints[key] = "it belongs under [camera.image], below a [[camera]] table" }
            try checkKeys(root, known: ["daemon", "camera"], hints: hints)

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

        func readDaemon(_ daemon: Section, into configuration: inout DaemonConfiguration) throws(ConfigurationError) {
            var hints: [String: String] = [:]
            for key in DaemonConfiguration.cameraKeys + DaemonConfiguration.photoKeys { hints[key] = "it belongs in a [[camera]] table" }
            try checkKeys(daemon, known: DaemonConfiguration.daemonKeys, hints: hints)

            let socketExpected = "an absolute path such as \"/run/camd.sock\""
            if let (socket, value) = try string(daemon, "socket", socketExpected) {
                guard socket.hasPrefix("/") else { throw invalid(daemon.path("socket"), socketExpected, value) }
                guard socket.utf8.count <= 107 else {
                    throw fail(.invalidValue, daemon.path("socket"), "is \(socket.utf8.count) bytes long, but a Unix socket path may be at most 107; choose a shorter path")
                }
                configuration.socketPath = socket
            }

            let modeExpected = "a quoted string of octal digits no greater than \"0777\", such as \"0660\""
            if let value = daemon["socket_mode"] {
                guard let text = value.string else {
                    let quoteHint = value.int != nil ? " (quote it: socket_mode = \"0660\")" : ""
                    throw fail(.wrongType, daemon.path("socket_mode"), "must be \(modeExpected); got \(describe(value))\(quoteHint)")
                }
                let digits = text.hasPrefix("0o") ? text.dropFirst(2) : Substring(text)
                guard (1...4).contains(digits.count), digits.allSatisfy({ ("0"..."7").contains($0) }),
                      let mode = UInt32(digits, radix: 8), mode <= 0o777 else {
                    throw invalid(daemon.path("socket_mode"), modeExpected, value)
                }
                configuration.socketMode = mode
            }

            let groupExpected = "a group name such as \"video\", or \"\" for the daemon's own group"
            if let (group, value) = try string(daemon, "socket_group", groupExpected) {
                guard group.isEmpty || isGroupName(group) else { throw invalid(daemon.path("socket_group"), groupExpected, value) }
                configuration.socketGroup = group.isEmpty ? nil : group
            }
            let readOnlyExpected = "a group name such as \"camviewers\""
            if let (group, value) = try string(daemon, "read_only_group", readOnlyExpected) {
                guard group.isEmpty || isGroupName(group) else { throw invalid(daemon.path("read_only_group"), readOnlyExpected, value) }
                if !group.isEmpty, group == configuration.socketGroup {
                    throw fail(.invalidValue, daemon.path("read_only_group"),
                               "is the same as socket_group (\"\(group)\"), whose members may change everything; choose another group or leave read_only_group out")
                }
                configuration.readOnlyGroup = group.isEmpty ? nil : group
            }

            let folderExpected = "an absolute path such as \"/var/lib/camd/photos\""
            if let (folder, value) = try string(daemon, "photo_folder", folderExpected) {
                guard folder.hasPrefix("/") else { throw invalid(daemon.path("photo_folder"), folderExpected, value) }
                configuration.photoRoot = folder
            }

            let levels = DaemonConfiguration.logLevels
            let levelExpected = "one of \(levels.joined(separator: ", "))"
            if let (level, value) = try string(daemon, "log_level", levelExpected) {
                guard levels.contains(level.lowercased()) else {
                    let guess = closest(to: level.lowercased(), in: levels).map { " (did you mean \($0)?)" } ?? ""
                    throw fail(.invalidValue, daemon.path("log_level"), "must be \(levelExpected); got \(describe(value))\(guess)")
                }
                configuration.logLevel = level.lowercased()
            }

            let tcpExpected = "host:port such as \"127.0.0.1:8080\" or \"[::1]:8080\", with a port from 1 to 65535, or \"\" for no TCP"
            var tcpHost: String?
            if let (listen, value) = try string(daemon, "tcp", tcpExpected) {
                if !listen.isEmpty {
                    guard let (host, _) = DaemonConfiguration.hostAndPort(of: listen) else {
                        let noPort = !listen.contains(":") || (listen.hasPrefix("[") && listen.hasSuffix("]"))
                        if noPort {
                            throw fail(.invalidValue, daemon.path("tcp"), "needs a port: write host:port such as \"127.0.0.1:8080\"; got \(describe(value))")
                        }
                        throw invalid(daemon.path("tcp"), tcpExpected, value)
                    }
                    tcpHost = host
                    configuration.tcpListen = listen
                }
            }
            let tokenExpected = "a secret without spaces, such as the output of `openssl rand -hex 32`"
            if let (token, value) = try string(daemon, "tcp_token", tokenExpected) {
                guard !token.isEmpty, !token.contains(where: { $0.isWhitespace || ($0.asciiValue ?? 0x20) < 0x20 }) else {
                    throw invalid(daemon.path("tcp_token"), tokenExpected, value)
                }
                configuration.tcpToken = token
            }
            let hostsExpected = "a list of host names the TCP listener answers to, such as [\"camera.lan\", \"cams.example.org\"]"
            if let value = daemon["tcp_hosts"] {
                guard let list = value.array else {
                    throw fail(.wrongType, daemon.path("tcp_hosts"), "must be \(hostsExpected); got \(describe(value))")
                }
                for element in list {
                    guard let name = element.string, DaemonConfiguration.isHostName(name) else {
                        throw fail(.invalidValue, daemon.path("tcp_hosts"),
                                   "must be \(hostsExpected), each a name without scheme, port or path; got \(describe(element))")
                    }
                    configuration.tcpHosts.append(name)
                }
            }
            if let tcpHost, !DaemonConfiguration.isLoopback(host: tcpHost), configuration.tcpToken == nil {
                throw fail(.missingKey, daemon.path("tcp"),
                           "listens on \(tcpHost), which other machines can reach, so daemon.tcp_token is required: add tcp_token = \"<secret>\" under [daemon] (for example from `openssl rand -hex 32`), or listen on 127.0.0.1")
            }

            if let timeout = try seconds(daemon, "shutdown_timeout", "a number of seconds above 0, or a duration such as \"10s\"", allowZero: false) {
                configuration.shutdownTimeoutSeconds = timeout
            }
            if let timeout = try seconds(daemon, "idle_timeout", "a number of seconds above 0, or a duration such as \"1m\"", allowZero: false) {
                configuration.idleTimeoutSeconds = timeout
            }
        }
    }
}
