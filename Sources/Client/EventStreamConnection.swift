#if canImport(Glibc)
import Glibc
#endif

/// A blocking reader of `GET /v1/events` on camd's Unix socket (camctl) or a TCP port
/// (tests): sends the request, then gives each event as it arrives. Call it off any
/// event loop or cooperative pool: `next()` blocks until an event comes.
public final class EventStreamConnection: @unchecked Sendable {  // read by one thread at a time; shutDown only closes
    private let fd: Int32
    private var parser = ServerSentEventParser()
    private var ready: [ServerSentEvent] = []

    /// Connects to camd's Unix socket.
    public convenience init(socketPath: String, path: String, headers: [(String, String)] = []) throws(ClientError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw ClientError("the socket path \(socketPath) is too long for a Unix socket; use a shorter one")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        try self.init(family: AF_UNIX, address: address, describing: socketPath, host: "camd", path: path, headers: headers)
    }

    /// Connects to 127.0.0.1:`port`.
    public convenience init(port: Int, path: String, headers: [(String, String)] = []) throws(ClientError) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        try self.init(family: AF_INET, address: address, describing: "127.0.0.1:\(port)", host: "127.0.0.1:\(port)", path: path, headers: headers)
    }

    private init<Address>(family: Int32, address: Address, describing name: String, host: String, path: String,
                          headers: [(String, String)]) throws(ClientError) {
        fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ClientError("cannot open a socket: \(String(cString: strerror(errno)))") }
        var address = address
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            if code == EACCES {
                throw ClientError("cannot connect to \(name): permission denied (the socket is for group video; see `ls -l \(name)`)")
            }
            throw ClientError("cannot connect to \(name): \(String(cString: strerror(code)))")
        }
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nAccept: text/event-stream\r\nUser-Agent: camctl\r\nConnection: close\r\n"
        for (field, value) in headers { request += "\(field): \(value)\r\n" }
        request += "\r\n"
        let sent = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent > 0 else {
            close(fd)
            throw ClientError("cannot send to \(name): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(fd) }

    /// The response's status once its head has arrived (`next()` reads it).
    public var status: Int? { parser.status }

    /// The body of a response that is not an event stream: camd's error JSON.
    public var errorBody: [UInt8] { parser.otherBody }

    /// A response header field by its lower-case name, once the head has arrived.
    public func header(_ name: String) -> String? { parser.headers[name] }

    /// Reads until the response's head has come (camd sends it at once, with a comment).
    public func waitForHead() throws(ClientError) {
        while parser.status == nil {
            guard try receive() else { throw ClientError("camd closed the connection before answering") }
        }
    }

    /// The next event; nil when camd ended the stream (or answered with an error: see `status`).
    /// - Parameter output: a descriptor written to (camctl's stdout): nil as soon as it is
    ///   closed at the other end (`| head -1` exited), rather than at the next event's write.
    public func next(watching output: Int32? = nil) throws(ClientError) -> ServerSentEvent? {
        while ready.isEmpty {
            guard try receive(watching: output) else { return nil }
        }
        return ready.removeFirst()
    }

    /// Reads what has arrived into the parser; false at the end of the stream.
    private func receive(watching output: Int32? = nil) throws(ClientError) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let output {
                // A pipe's write end reports POLLERR once its reader is gone.
                var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: output, events: 0, revents: 0)]
                if poll(&fds, 2, -1) < 0 { if errno == EINTR { continue } }
                if fds[1].revents & Int16(POLLERR | POLLHUP) != 0 { return false }
                if fds[0].revents == 0 { continue }
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return false }
            if count < 0 {
                if errno == EINTR { continue }
                // Shut down from another thread (Ctrl-C, a test done reading): the end, not an error.
                if errno == ECONNRESET || errno == EBADF { return false }
                throw ClientError("reading the event stream: \(String(cString: strerror(errno)))")
            }
            ready += parser.feed(buffer[..<count])
            return true
        }
    }

    /// Closes the connection, waking a `next()` blocked in another thread.
    public func shutDown() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }
}
