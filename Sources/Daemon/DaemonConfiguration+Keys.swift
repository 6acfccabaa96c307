import CaptureSession

// Every [daemon] setting, declared once: camd.toml and `systemctl reload` read them through
// this list, camd's --log-level uses the same declaration, and docs/configuration.md's
// [daemon] table is made from it.
extension DaemonConfiguration {
    public typealias Key = SettingKey<DaemonConfiguration>

    public static let keys: [Key] = [
        Key("socket", .string("an absolute path such as \"/run/camd.sock\"", problem: socketProblem), at: \.socketPath,
            "/run/camd.sock as a system service; $XDG_RUNTIME_DIR/camd.sock when run by a user", "Where the control socket lives."),
        Key("socket_mode", socketModeReader, at: \.socketMode, default: 0o660, "\"0660\"",
            "The socket file's permission bits, as a quoted octal string."),
        Key("socket_group", groupReader("a group name such as \"video\", or \"\" for the daemon's own group"), at: \.socketGroup,
            default: "video", "\"video\"", "The group that owns the socket: its members may use camd."),
        Key("read_only_group", groupReader("a group name such as \"camviewers\""), at: \.readOnlyGroup, default: nil, "none",
            "Members of this group may read (list, stream, fetch photos) but change nothing."),
        Key("photo_folder", .string("an absolute path such as \"/var/lib/camd/photos\"", problem: { $0.hasPrefix("/") ? nil : "" }),
            at: \.photoRoot, "$STATE_DIRECTORY/photos under systemd, else /var/lib/camd/photos; $XDG_STATE_HOME/camd/photos when run by a user",
            "Where photos are saved, a folder per camera."),
        Key("log_level", .choice(logLevels), at: \.logLevel, default: "info", "\"info\"",
            "How much camd logs: \(logLevels.joined(separator: ", ")) (quietest last)."),
        Key("tcp", tcpReader, at: \.tcpListen, default: nil, "none (no TCP)",
            "host:port to also serve the API over TCP, such as \"127.0.0.1:8080\"; \"\" for none."),
        Key("tcp_token", tokenReader, at: \.tcpToken, "none", "The bearer token TCP clients must send; required off loopback."),
        Key("tcp_view_token", tokenReader, at: \.tcpViewToken, "none",
            "A second token, different from tcp_token, that may only watch: GET and HEAD over TCP, and RTSP."),
        Key("tcp_hosts", hostsReader, at: \.tcpHosts, default: [], "[]",
            "Host names, besides its address and localhost, the TCP listener answers to (a LAN name, a reverse proxy's)."),
        Key("rtsp", rtspReader, at: \.rtspListen, default: nil, "none (no RTSP)",
            "host:port to serve each camera's H.264 over RTSP at rtsp://host:port/<camera-id>, such as \"0.0.0.0:8554\"; \"\" for none."),
        Key("shutdown_timeout", .duration("a number of seconds above 0, or a duration such as \"10s\"", { $0 > 0 }),
            at: \.shutdownTimeoutSeconds, default: 5, "5", "How long a graceful stop may take."),
        Key("idle_timeout", .duration("a number of seconds above 0, or a duration such as \"1m\"", { $0 > 0 }),
            at: \.idleTimeoutSeconds, default: 30, "30", "How long a connection may stay without a request."),
    ]

    public static func key(_ name: String) -> Key? { keys.first { $0.key == name } }

    /// Applies [daemon]'s values, then checks what depends on more than one key.
    mutating func apply(_ fields: [(key: String, value: SettingValue)]) throws(SettingError) {
        for (name, value) in fields {
            guard let key = Self.key(name) else { throw SettingError(.unknownKey, key: name, "is not a known key") }
            try key.apply(value, to: &self)
        }
        if let group = readOnlyGroup, group == socketGroup {
            throw SettingError(.invalidValue, key: "read_only_group",
                               "is the same as socket_group (\"\(group)\"), whose members may change everything; choose another group or leave read_only_group out")
        }
        try requireToken(key: "tcp", listen: tcpListen)
        try requireToken(key: "rtsp", listen: rtspListen,
                         use: " (RTSP clients send it as their password, rtsp://camd:<token>@host:port/<camera-id>)")
        if let view = tcpViewToken {
            guard let token = tcpToken else {
                throw SettingError(.missingKey, key: "tcp_view_token",
                                   "is set without tcp_token: without tcp_token the TCP listener asks nobody for credentials, so a viewer token would limit no one; add tcp_token = \"<secret>\" under [daemon] (for example from `openssl rand -hex 32`), or remove tcp_view_token")
            }
            if view == token {
                throw SettingError(.invalidValue, key: "tcp_view_token",
                                   "is the same as tcp_token, which may change everything, so viewers could too; make it a different secret (for example from `openssl rand -hex 32`)")
            }
        }
    }

    /// A listener that other machines can reach (`tcp`, `rtsp`) needs `tcp_token`; `use`
    /// says how that listener's clients send it. `tcp_view_token` alone is not enough: it
    /// limits what a token holder may do, and only where tcp_token is asked for.
    private func requireToken(key: String, listen: String?, use: String = "") throws(SettingError) {
        guard let listen, let (host, _) = Self.hostAndPort(of: listen), !Self.isLoopback(host: host), tcpToken == nil else { return }
        let viewOnly = tcpViewToken == nil ? "" : " (tcp_view_token alone is not enough: it only lets viewers watch)"
        throw SettingError(.missingKey, key: key,
                           "listens on \(host), which other machines can reach, so daemon.tcp_token is required\(use)\(viewOnly): add tcp_token = \"<secret>\" under [daemon] (for example from `openssl rand -hex 32`), or listen on 127.0.0.1")
    }

    /// A secret without spaces or control characters.
    private static let tokenReader = ValueReader<String>.string("a secret without spaces, such as the output of `openssl rand -hex 32`", problem: { token in
        token.isEmpty || token.contains { $0.isWhitespace || ($0.asciiValue ?? 0x20) < 0x20 } ? "" : nil
    })

    @Sendable private static func socketProblem(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return "" }
        guard path.utf8.count <= 107 else { return "is \(path.utf8.count) bytes long, but a Unix socket path may be at most 107; choose a shorter path" }
        return nil
    }

    private static let socketModeReader = ValueReader<UInt32>(
        "a quoted string of octal digits no greater than \"0777\", such as \"0660\"",
        read: { value throws(ValueProblem) in
            switch value {
            case .string(let text), .text(let text):
                let digits = text.hasPrefix("0o") ? text.dropFirst(2) : Substring(text)
                guard (1...4).contains(digits.count), digits.allSatisfy({ ("0"..."7").contains($0) }),
                      let mode = UInt32(digits, radix: 8), mode <= 0o777 else { throw .invalid }
                return mode
            case .integer:
                // socket_mode = 0660 is the likeliest mistake: TOML reads it as the number 660.
                throw ValueProblem(.wrongType, "must be a quoted string of octal digits no greater than \"0777\", such as \"0660\"; got \(value) (quote it: socket_mode = \"0660\")")
            default: throw .wrongType
            }
        },
        write: { .string("0" + String($0, radix: 8)) })

    /// A group name, or "" for none.
    private static func groupReader(_ expected: String) -> ValueReader<String?> {
        ValueReader(expected, read: { value throws(ValueProblem) in
            switch value {
            case .string(let group), .text(let group):
                if group.isEmpty { return nil }
                let isName = group.utf8.count <= 32 && !group.hasPrefix("-")
                    && group.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }
                guard isName else { throw .invalid }
                return group
            default: throw .wrongType
            }
        }, write: { $0.map(SettingValue.string) ?? .string("") })
    }

    private static let tcpReader = listenReader(port: 8080, none: "no TCP")
    private static let rtspReader = listenReader(port: 8554, none: "no RTSP")

    /// A `host:port` to listen on, or "" for none.
    private static func listenReader(port: Int, none: String) -> ValueReader<String?> {
        ValueReader("host:port such as \"127.0.0.1:\(port)\" or \"[::1]:\(port)\", with a port from 1 to 65535, or \"\" for \(none)",
                    read: { value throws(ValueProblem) in
            switch value {
            case .string(let listen), .text(let listen):
                if listen.isEmpty { return nil }
                guard hostAndPort(of: listen) != nil else {
                    let noPort = !listen.contains(":") || (listen.hasPrefix("[") && listen.hasSuffix("]"))
                    if noPort { throw .invalid("needs a port: write host:port such as \"127.0.0.1:\(port)\"; got \(value)") }
                    throw .invalid
                }
                return listen
            default: throw .wrongType
            }
        }, write: { .string($0 ?? "") })
    }

    private static let hostsReader = ValueReader<[String]>(
        "a list of host names the TCP listener answers to, such as [\"camera.lan\", \"cams.example.org\"]",
        read: { value throws(ValueProblem) in
            let items: [SettingValue]
            switch value {
            case .list(let list): items = list
            case .text(let text): items = text.split(separator: ",").map { .text(String($0)) }
            default: throw .wrongType
            }
            return try items.map { item throws(ValueProblem) in
                switch item {
                case .string(let name) where isHostName(name), .text(let name) where isHostName(name): return name
                default:
                    throw .invalid("must be a list of host names the TCP listener answers to, such as [\"camera.lan\", \"cams.example.org\"], each a name without scheme, port or path; got \(item)")
                }
            }
        }, write: { .list($0.map(SettingValue.string)) })
}
