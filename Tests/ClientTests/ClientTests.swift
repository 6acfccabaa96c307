@testable import Client
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The client against a stand-in daemon on a Unix socket that sends canned bytes: what
/// camctl makes of whole, chunked, cut-short and malformed answers.
@Suite struct DaemonClientTests {
    /// A socket that accepts one connection, reads the request, answers `response` and closes.
    final class CannedDaemon: @unchecked Sendable {  // `request` is written by the accept thread before `done`, read after it
        let path: String
        private let listener: Int32
        private let done = DispatchSemaphore(value: 0)
        private var received = ""

        init(_ response: String) throws {
            let path = NSTemporaryDirectory() + "camd-client-\(UUID().uuidString.prefix(8)).sock"
            let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0, listen(listener, 1) == 0 else { throw ClientError("cannot listen on \(path)") }
            self.path = path
            self.listener = listener
            let bytes = Array(response.utf8)
            Thread { [self] in
                let connection = accept(listener, nil, nil)
                var buffer = [UInt8](repeating: 0, count: 65536)
                let count = read(connection, &buffer, buffer.count)
                received = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
                _ = bytes.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                close(connection)
                done.signal()
            }.start()
        }

        /// Waits for the exchange to end; the request as the daemon read it.
        func finish() -> String {
            done.wait()
            close(listener)
            unlink(path)
            return received
        }
    }

    func answer(_ response: String, _ body: [UInt8]? = nil) throws -> (DaemonReply?, String, ClientError?) {
        let daemon = try CannedDaemon(response)
        do {
            let reply = try DaemonClient(socketPath: daemon.path).request("POST", "/v1/cameras/a/configure", body: body, timeout: 5)
            return (reply, daemon.finish(), nil)
        } catch {
            return (nil, daemon.finish(), error)
        }
    }

    @Test func contentLengthBodies() throws {
        let (reply, request, _) = try answer("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", Array("{\"quality\": 70}".utf8))
        #expect(reply?.status == 200)
        #expect(reply?.headers["content-type"] == "application/json")
        #expect(reply?.text == "{}")
        #expect(request.hasPrefix("POST /v1/cameras/a/configure HTTP/1.1\r\n"))
        #expect(request.lowercased().contains("content-length: 15"))
        #expect(request.hasSuffix("\r\n\r\n{\"quality\": 70}"))
    }

    @Test func chunkedBodies() throws {
        let (reply, _, _) = try answer("HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nwait\r\n6;x=y\r\ning...\r\n0\r\n\r\n")
        #expect(reply?.status == 503)
        #expect(reply?.text == "waiting...")
    }

    @Test func brokenResponsesAreErrors() throws {
        for broken in ["HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "garbage\r\n\r\n", "HTTP/1.1 200 OK\r\n", ""] {
            let (reply, _, error) = try answer(broken)
            #expect(reply == nil && error != nil, "\(broken.debugDescription) gave \(String(describing: reply))")
        }
    }

    @Test func noDaemonMeansNil() {
        #expect(DaemonClient.locate(explicit: "/nonexistent/camd.sock") == nil)
        #expect(throws: ClientError.self) { try DaemonClient(socketPath: "/nonexistent/camd.sock").request("GET", "/v1/status") }
    }
}
