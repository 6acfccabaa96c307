import Foundation
import Testing

/// Both tokens from camd.toml reach the real daemon's TCP listener: the viewer token lets a
/// client watch and nothing more, the full token signs a browser in, and a browser without
/// credentials is shown the sign-in page.
@Suite(.serialized) struct SignInDaemonTests {
    @Test func theTokensFromCamdTomlGuardTheTCPListener() async throws {
        let daemon = try RunningDaemon(tcp: true, daemonLines: "tcp_token = \"full-secret\"\ntcp_view_token = \"view-secret\"\n")
        defer { daemon.cleanUp() }
        try await daemon.waitUntilServing()
        let port = try #require(daemon.tcpPort)
        let host = "127.0.0.1:\(port)"
        func ask(_ request: String) throws -> String { try TestConnection(.tcp(port)).exchange(request) }
        func status(_ answer: String) -> Int { Int(answer.dropFirst(9).prefix(3)) ?? 0 }
        func basic(_ text: String) -> String { "Basic " + Data(text.utf8).base64EncodedString() }

        // python-requests' Basic from http://octoprint:view-secret@host/... : watching only.
        let read = try ask("GET /v1/status HTTP/1.1\r\nHost: \(host)\r\nUser-Agent: python-requests/2.31.0\r\nAccept-Encoding: gzip, deflate\r\nAccept: */*\r\nAuthorization: \(basic("octoprint:view-secret"))\r\nConnection: close\r\n\r\n")
        #expect(status(read) == 200, "\(read.prefix(300))")
        let change = try ask("POST /v1/cameras/cam/stop HTTP/1.1\r\nHost: \(host)\r\nAuthorization: \(basic("octoprint:view-secret"))\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        #expect(status(change) == 403, "\(change.prefix(300))")
        #expect(change.contains("read_only"))

        // A browser: the sign-in page, then a session with the full token.
        let page = try ask("GET / HTTP/1.1\r\nHost: \(host)\r\nAccept: text/html\r\nSec-Fetch-Mode: navigate\r\nConnection: close\r\n\r\n")
        #expect(status(page) == 401)
        #expect(page.lowercased().contains("www-authenticate: basic realm=\"camd\""), "\(page.prefix(300))")
        #expect(page.contains("camd-signin"))
        let body = #"{"token": "full-secret"}"#
        let signIn = try ask("POST /v1/session HTTP/1.1\r\nHost: \(host)\r\nOrigin: http://\(host)\r\nSec-Fetch-Site: same-origin\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        #expect(status(signIn) == 204, "\(signIn.prefix(300))")
        let cookie = try #require(signIn.firstMatch(of: /(?i)set-cookie: (camd_session=[A-Za-z0-9_-]+)/)?.1)
        let session = try ask("GET /v1/session HTTP/1.1\r\nHost: \(host)\r\nCookie: \(cookie)\r\nConnection: close\r\n\r\n")
        #expect(session.replacingOccurrences(of: " ", with: "").contains(#""access":"full""#), "\(session.prefix(300))")
    }
}
