import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A client of an endless HTTP response on a real TCP port that reads only when told to:
/// a player that stops reading for a while, as a phone on a bad link does, or one of many
/// players read from one thread. Written on sockets, not an HTTP client, because the test
/// needs the receive buffer's size and the moments of not reading in its own hands.
/// Blocking: call it off the cooperative pool.
public final class RawStreamClient: @unchecked Sendable {  // used by one task at a time
    private let fd: Int32
    /// Everything read so far, the response head and chunked coding included.
    public private(set) var received: [UInt8] = []
    public private(set) var closed = false

    /// Connects to 127.0.0.1:`port` and sends `GET path`. `receiveBuffer` sets SO_RCVBUF
    /// before connecting, which fixes the TCP window: camd's writes block once it is full.
    public init(port: Int, path: String, receiveBuffer: Int? = nil) throws {
        // Stored only once connected: a throwing init after every property is set runs
        // deinit, which would close the descriptor a second time (and maybe another
        // test's, reopened under the same number meanwhile).
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        self.fd = fd
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { close(fd) }

    /// Reads what arrives at `clients` for `seconds`, on a thread of its own (`onOwnThread`).
    public static func read(_ clients: [RawStreamClient], for seconds: Double) async {
        _ = try? await onOwnThread { readBlocking(clients, for: seconds) }
    }

    private static func readBlocking(_ clients: [RawStreamClient], for seconds: Double) {
        let end = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while Date() < end {
            var fds = clients.map { pollfd(fd: $0.closed ? -1 : $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), Int32(max(1, min(100, end.timeIntervalSinceNow * 1000)))) > 0 else { continue }
            for (index, entry) in fds.enumerated() where entry.revents != 0 {
                let client = clients[index]
                let count = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    client.received.append(contentsOf: buffer[0..<count])
                } else if count == 0 || errno != EAGAIN {
                    client.closed = true
                }
            }
        }
    }

    /// The response's body so far, its chunked coding undone; a chunk still arriving is left out.
    public var body: [UInt8] {
        guard let headEnd = received.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound else { return [] }
        let head = String(decoding: received[..<headEnd], as: UTF8.self).lowercased()
        guard head.contains("transfer-encoding: chunked") else { return Array(received[headEnd...]) }
        var out: [UInt8] = []
        var at = headEnd
        while let lineEnd = received[at...].firstRange(of: [13, 10])?.lowerBound,
              let size = Int(String(decoding: received[at..<lineEnd], as: UTF8.self).split(separator: ";")[0], radix: 16),
              size > 0, lineEnd + 2 + size + 2 <= received.count {
            out.append(contentsOf: received[(lineEnd + 2)..<(lineEnd + 2 + size)])
            at = lineEnd + 2 + size + 2
        }
        return out
    }

    /// The types of the top-level MP4 boxes of the body that arrived whole, in order.
    public var boxTypes: [String] {
        let bytes = body
        var types: [String] = []
        var at = 0
        while at + 8 <= bytes.count {
            let size = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            guard size >= 8, at + size <= bytes.count else { break }
            types.append(String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self))
            at += size
        }
        return types
    }

    /// The number of whole frames (MP4 fragments: a `moof` and its `mdat`) received.
    public var fragments: Int { boxTypes.filter { $0 == "mdat" }.count }

    /// Writes the body to a file for ffprobe and ffmpeg.
    public func writeBody(to path: String) throws {
        try Data(body).write(to: URL(fileURLWithPath: path))
    }
}
