@testable import Client
import Testing

@Suite struct ResponseParsingTests {
    @Test func contentLengthBodies() throws {
        let raw = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}trailing".utf8)
        let reply = try DaemonClient.parse(raw)
        #expect(reply.status == 200)
        #expect(reply.headers["content-type"] == "application/json")
        #expect(reply.text == "{}")
    }

    @Test func chunkedBodies() throws {
        let raw = Array("HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nwait\r\n6;x=y\r\ning...\r\n0\r\n\r\n".utf8)
        let reply = try DaemonClient.parse(raw)
        #expect(reply.status == 503)
        #expect(reply.text == "waiting...")
    }

    @Test func brokenResponsesAreErrors() {
        #expect(throws: ClientError.self) { try DaemonClient.parse(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort".utf8)) }
        #expect(throws: ClientError.self) { try DaemonClient.parse(Array("garbage\r\n\r\n".utf8)) }
        #expect(throws: ClientError.self) { try DaemonClient.parse(Array("HTTP/1.1 200 OK\r\n".utf8)) }
    }

    @Test func noDaemonMeansNil() {
        #expect(DaemonClient.locate(explicit: "/nonexistent/camd.sock") == nil)
    }
}
