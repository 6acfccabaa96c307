#if canImport(Glibc)
import Glibc
#endif

/// A failure to talk to camd.
public struct ClientError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// One HTTP response from camd.
public struct DaemonReply: Sendable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: [UInt8]

    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// A small, blocking HTTP/1.1 client for camd's Unix socket: what a command-line
/// tool needs (one request per connection), nothing more.
public struct DaemonClient: Sendable {
    public let socketPath: String

    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// Where camd listens, in the order camctl looks: an explicit path, $CAMD_SOCKET,
    /// the system socket, then the user's.
    public static func candidatePaths(explicit: String?) -> [String] {
        if let explicit { return [explicit] }
        var paths: [String] = []
        if let env = getenv("CAMD_SOCKET") { paths.append(String(cString: env)) }
        paths.append("/run/camd.sock")
        if let runtime = getenv("XDG_RUNTIME_DIR") { paths.append(String(cString: runtime) + "/camd.sock") }
        paths.append("/tmp/camd-\(geteuid()).sock")
        return paths
    }

    /// The first daemon that answers, or nil when none runs (or none lets this user connect).
    public static func locate(explicit: String? = nil) -> DaemonClient? {
        for path in candidatePaths(explicit: explicit) {
            guard let fd = try? connect(path) else { continue }
            close(fd)
            return DaemonClient(socketPath: path)
        }
        return nil
    }

    public func request(_ method: String, _ path: String, body: [UInt8]? = nil, timeout seconds: Double = 60) throws(ClientError) -> DaemonReply {
        let fd = try Self.connect(socketPath)
        defer { close(fd) }
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head = "\(method) \(path) HTTP/1.1\r\nHost: camd\r\nConnection: close\r\nUser-Agent: camctl\r\n"
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        head += "\r\n"
        try send(fd, Array(head.utf8) + (body ?? []))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw ClientError(errno == EAGAIN ? "camd did not answer within \(Int(seconds)) s" : "reading from \(socketPath): \(String(cString: strerror(errno)))")
            }
            received.append(contentsOf: buffer[0..<count])
        }
        return try Self.parse(received)
    }

    /// Parses a whole HTTP/1.1 response (Content-Length, chunked, or to end of stream).
    public static func parse(_ bytes: [UInt8]) throws(ClientError) -> DaemonReply {
        guard let end = find([13, 10, 13, 10], in: bytes, from: 0) else { throw ClientError("camd sent an incomplete response") }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw ClientError("camd sent a malformed status line")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingSpaces
        }
        var body = Array(bytes[(end + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            body = try dechunk(body)
        } else if let length = headers["content-length"].flatMap({ Int($0) }) {
            guard body.count >= length else { throw ClientError("camd's response was cut short (\(body.count) of \(length) bytes)") }
            body = Array(body.prefix(length))
        }
        return DaemonReply(status: status, headers: headers, body: body)
    }

    static func dechunk(_ bytes: [UInt8]) throws(ClientError) -> [UInt8] {
        var output: [UInt8] = [], offset = 0
        while let lineEnd = find([13, 10], in: bytes, from: offset) {
            let sizeText = String(decoding: bytes[offset..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingSpaces, radix: 16) else { throw ClientError("camd sent a malformed chunk") }
            if size == 0 { return output }
            let start = lineEnd + 2
            guard start + size <= bytes.count else { throw ClientError("camd's response was cut short") }
            output.append(contentsOf: bytes[start..<(start + size)])
            offset = start + size + 2
        }
        throw ClientError("camd's chunked response was cut short")
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0] && Array(haystack[index..<(index + needle.count)]) == needle { return index }
            index += 1
        }
        return nil
    }

    static func connect(_ path: String) throws(ClientError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ClientError("cannot create a socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw ClientError("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else {
            let reason = String(cString: strerror(errno))
            let denied = errno == EACCES
            close(fd)
            throw ClientError(denied ? "cannot connect to \(path): permission denied (the socket is for group video; see `ls -l \(path)`)"
                                     : "cannot connect to \(path): \(reason)")
        }
        return fd
    }

    private func send(_ fd: Int32, _ bytes: [UInt8]) throws(ClientError) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ClientError("writing to \(socketPath): \(String(cString: strerror(errno)))")
            }
            sent += count
        }
    }
}

extension Substring {
    var trimmingSpaces: String { String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()) }
}
