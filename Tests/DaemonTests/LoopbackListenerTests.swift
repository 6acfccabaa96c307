import Foundation
import Testing

/// What any web page the user opens can make the browser send to camd's loopback TCP
/// listener, against the real daemon: cross-site writes and DNS rebinding are refused
/// and change nothing, while curl, scripts and camd's own origin work as before.
@Suite(.serialized) struct LoopbackListenerTests {
    @Test func pagesOfOtherSitesCannotDriveTheTCPListener() async throws {
        let daemon = try RunningDaemon(tcp: true, daemonLines: "tcp_hosts = [\"camera.lan\"]\n")
        defer { daemon.cleanUp() }
        try await daemon.waitUntilServing()
        let port = try #require(daemon.tcpPort)
        let own = "127.0.0.1:\(port)"
        func ask(_ request: String) throws -> String { try TestConnection(.tcp(port)).exchange(request) }
        func status(_ answer: String) -> Int { Int(answer.dropFirst(9).prefix(3)) ?? 0 }
        func camera() throws -> String {
            try ask("GET /v1/cameras/cam HTTP/1.1\r\nHost: \(own)\r\nConnection: close\r\n\r\n").replacingOccurrences(of: " ", with: "")
        }
        let quality = try #require(try camera().firstMatch(of: /"quality":(\d+)/)?.1).description

        // The issue's three commands.
        let body = #"{"quality": 5}"#
        let configure = try ask("POST /v1/cameras/cam/configure HTTP/1.1\r\nHost: \(own)\r\nContent-Type: text/plain\r\nOrigin: http://evil.example\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        #expect(status(configure) == 403, "\(configure.prefix(300))")
        let stop = try ask("POST /v1/cameras/cam/stop HTTP/1.1\r\nHost: \(own)\r\nContent-Type: application/x-www-form-urlencoded\r\nOrigin: http://evil.example\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        #expect(status(stop) == 403, "\(stop.prefix(300))")
        let rebound = try ask("GET /v1/cameras/cam/snapshot HTTP/1.1\r\nHost: evil.example:\(port)\r\nConnection: close\r\n\r\n")
        #expect(status(rebound) == 421, "\(rebound.prefix(300))")
        #expect(rebound.contains("tcp_hosts"))
        #expect(!rebound.contains("image/jpeg"))

        // Without an Origin, a browser's Sec-Fetch-Site; bodies a page posts without a preflight.
        let crossSite = try ask("POST /v1/cameras/cam/stop HTTP/1.1\r\nHost: \(own)\r\nSec-Fetch-Site: cross-site\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        #expect(status(crossSite) == 403)
        for type in ["text/plain", "application/x-www-form-urlencoded"] {
            let posted = try ask("POST /v1/cameras/cam/configure HTTP/1.1\r\nHost: \(own)\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
            #expect(status(posted) == 415, "\(type): \(posted.prefix(300))")
        }
        let deletion = try ask("DELETE /v1/photos/x.jpg HTTP/1.1\r\nHost: \(own)\r\nOrigin: http://evil.example\r\nConnection: close\r\n\r\n")
        #expect(status(deletion) == 403)

        // Nothing changed.
        let after = try camera()
        #expect(after.contains("\"state\":\"running\""), "\(after.prefix(400))")
        #expect(after.contains("\"quality\":\(quality)"), "\(after.prefix(400))")

        // curl and scripts (no Origin, JSON), camd's own origin, a tcp_hosts name: as before.
        let json = #"{"quality": 77}"#
        let fromCurl = try ask("POST /v1/cameras/cam/configure HTTP/1.1\r\nHost: \(own)\r\nContent-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\nConnection: close\r\n\r\n\(json)")
        #expect(status(fromCurl) == 200, "\(fromCurl.prefix(300))")
        #expect(try camera().contains("\"quality\":77"))
        let sameOrigin = try ask("POST /v1/cameras/cam/configure HTTP/1.1\r\nHost: \(own)\r\nOrigin: http://\(own)\r\nSec-Fetch-Site: same-origin\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        #expect(status(sameOrigin) == 200, "\(sameOrigin.prefix(300))")
        let named = try ask("GET /v1/cameras/cam/snapshot HTTP/1.1\r\nHost: camera.lan:\(port)\r\nConnection: close\r\n\r\n")
        #expect(status(named) == 200)
        let localhost = try ask("HEAD /v1/status HTTP/1.1\r\nHost: localhost:\(port)\r\nConnection: close\r\n\r\n")
        #expect(status(localhost) == 200)

        // The Unix socket keeps `curl -d` (a form-typed body) working: browsers cannot reach it.
        let overUnix = try TestConnection(.unix(daemon.socketPath)).exchange(
            "POST /v1/cameras/cam/configure HTTP/1.1\r\nHost: camd\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(json.utf8.count)\r\nConnection: close\r\n\r\n\(json)")
        #expect(status(overUnix) == 200, "\(overUnix.prefix(300))")
    }

    @Test func aForeignOriginIsRefusedEvenWithTheToken() async throws {
        let daemon = try RunningDaemon(tcp: true, daemonLines: "tcp_token = \"s3cret\"\n")
        defer { daemon.cleanUp() }
        try await daemon.waitUntilServing()
        let port = try #require(daemon.tcpPort)
        let answer = try TestConnection(.tcp(port)).exchange(
            "POST /v1/cameras/cam/stop HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer s3cret\r\nOrigin: http://evil.example\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 403"), "\(answer.prefix(300))")
        let withToken = try TestConnection(.tcp(port)).exchange(
            "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer s3cret\r\nConnection: close\r\n\r\n")
        #expect(withToken.hasPrefix("HTTP/1.1 200"))
    }
}
