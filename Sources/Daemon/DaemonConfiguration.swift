#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CaptureSession

/// What camd's configuration file (`/etc/camd/camd.toml`) asks for: where to listen,
/// who may connect, where photos go, and how each camera runs.
///
/// Values left out of the file keep the defaults below; `docs/configuration.md` lists every key.
/// Decisions that depend on the machine (the socket path when none is given, the cameras when
/// none are listed) are made at run time, not here.
public struct DaemonConfiguration: Sendable, Hashable {
    /// Where the control socket lives; nil lets the daemon choose (`/run/camd.sock`, or
    /// `$XDG_RUNTIME_DIR/camd.sock` when run by a user).
    public var socketPath: String?
    /// The socket file's permission bits.
    public var socketMode: UInt32
    /// The group that owns the socket, so its members may use camd; nil keeps the daemon's group.
    public var socketGroup: String?
    /// Members of this group may read (list, stream, fetch photos) but not change anything.
    public var readOnlyGroup: String?
    /// Where photos are saved; nil lets the daemon choose (`$STATE_DIRECTORY/photos`,
    /// `/var/lib/camd/photos`, or `$XDG_STATE_HOME/camd/photos` when run by a user).
    public var photoRoot: String?
    /// One of `DaemonConfiguration.logLevels`.
    public var logLevel: String
    /// `host:port` to also serve the API over TCP (`[::1]:8080` for IPv6); nil for no TCP.
    public var tcpListen: String?
    /// The bearer token TCP clients must send; required when `tcpListen` is not a loopback address.
    public var tcpToken: String?
    /// A second token that may only watch (GET and HEAD, signing in and out; RTSP too);
    /// it needs `tcpToken` and must differ from it.
    public var tcpViewToken: String?
    /// `host:port` to serve the cameras' H.264 over RTSP (`rtsp://host:port/<camera-id>`); nil for no RTSP.
    /// Off loopback it needs `tcpToken`, which RTSP clients send as their Basic password.
    public var rtspListen: String?
    /// Host names (besides its address, loopback and `localhost`) the TCP listener answers
    /// to: a LAN name or a reverse proxy's. Any other Host gets 421 (DNS rebinding).
    public var tcpHosts: [String] = []
    /// How long a graceful shutdown may take before camd stops waiting.
    public var shutdownTimeoutSeconds: Double
    /// How long a client connection may stay without a request before camd closes it.
    public var idleTimeoutSeconds: Double
    /// The cameras to run; empty means every camera found, named from its stable device name.
    public var cameras: [CameraSettings]

    /// The file camd reads when not told otherwise.
    public static let defaultPath = "/etc/camd/camd.toml"
    /// The log levels `logLevel` may name, quietest last.
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    public init(socketPath: String? = nil, socketMode: UInt32 = 0o660, socketGroup: String? = "video",
                readOnlyGroup: String? = nil, photoRoot: String? = nil, logLevel: String = "info",
                tcpListen: String? = nil, tcpToken: String? = nil, shutdownTimeoutSeconds: Double = 5,
                idleTimeoutSeconds: Double = 30, cameras: [CameraSettings] = []) {
        self.socketPath = socketPath
        self.socketMode = socketMode
        self.socketGroup = socketGroup
        self.readOnlyGroup = readOnlyGroup
        self.photoRoot = photoRoot
        self.logLevel = logLevel
        self.tcpListen = tcpListen
        self.tcpToken = tcpToken
        self.shutdownTimeoutSeconds = shutdownTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.cameras = cameras
    }

    /// Reads and checks the configuration file at `path`.
    ///
    /// A missing file gives the defaults when `defaultsIfMissing` says so; when it is nil that
    /// holds only for `defaultPath`, since camd runs fine without a config file but a path
    /// someone named must exist.
    public static func load(path: String, defaultsIfMissing: Bool? = nil) throws(ConfigurationError) -> DaemonConfiguration {
        let (contents, code) = readFile(path)
        guard let bytes = contents else {
            if code == ENOENT && (defaultsIfMissing ?? (path == defaultPath)) { return DaemonConfiguration() }
            throw ConfigurationError(kind: .unreadable, source: path, message: unreadableMessage(path, code))
        }
        guard let text = String(validatingUTF8Bytes: bytes) else {
            throw ConfigurationError(kind: .unreadable, source: path,
                                     message: "the file is not UTF-8 text; save it as UTF-8 (TOML requires it)")
        }
        return try parse(text, source: path)
    }

    private static func unreadableMessage(_ path: String, _ code: Int32) -> String {
        switch code {
        case ENOENT:
            return "no such file; check the path, or create it (docs/configuration.md has an example)"
        case EACCES:
            return "permission denied; make the file readable by the user camd runs as (for example `chmod 644 \(path)`)"
        case EISDIR:
            return "is a folder, not a file; give the path of the .toml file inside it"
        default:
            return "cannot read the file: \(String(cString: strerror(code)))"
        }
    }

    /// The whole file, or nil and the errno that stopped reading it.
    private static func readFile(_ path: String) -> (contents: [UInt8]?, code: Int32) {
        var fd: Int32
        repeat { fd = open(path, O_RDONLY | O_CLOEXEC) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { return (nil, errno) }
        defer { close(fd) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return (nil, errno)
            }
            if count == 0 { return (contents, 0) }
            contents.append(contentsOf: chunk[0..<count])
        }
    }
}

// MARK: - Values users write

extension DaemonConfiguration {
    /// Splits a listen address into host and port: "127.0.0.1:8080", "localhost:8080",
    /// "[::1]:8080" (brackets removed from the host). Nil without a host or a port from 1 to 65535.
    public static func hostAndPort(of listen: String) -> (host: String, port: UInt16)? {
        let host: Substring, portText: Substring
        if listen.hasPrefix("[") {
            guard let close = listen.firstIndex(of: "]") else { return nil }
            host = listen[listen.index(after: listen.startIndex)..<close]
            let after = listen[close...].dropFirst()
            guard after.first == ":" else { return nil }
            portText = after.dropFirst()
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            guard let colon = listen.lastIndex(of: ":") else { return nil }
            host = listen[..<colon]
            portText = listen[listen.index(after: colon)...]
            guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") })
            else { return nil }
        }
        guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = UInt16(portText), port > 0 else { return nil }
        return (String(host), port)
    }

    /// Whether `name` is a DNS host name (letters, digits, '-' and '.'), as `tcp_hosts` lists them.
    public static func isHostName(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return !name.isEmpty && name.utf8.count <= 253 && labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }

    /// Whether `host` (without brackets) only reaches this machine: `localhost`, `127.x.x.x` or `::1`.
    public static func isLoopback(host: String) -> Bool {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "::1" || lowered == "0:0:0:0:0:0:0:1" { return true }
        let parts = lowered.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}

extension StringProtocol {
    var trimmingWhitespace: SubSequence {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}

extension String {
    /// Nil unless `bytes` are valid UTF-8 without NUL (which TOML forbids and C strings cut short).
    init?(validatingUTF8Bytes bytes: [UInt8]) {
        guard !bytes.contains(0) else { return nil }
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var scalars = String.UnicodeScalarView()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: break loop
            case .error: return nil
            }
        }
        self = String(scalars)
    }
}
