@testable import ControlAPI
import Testing

@Suite struct AccessPolicyTests {
    let policy = AccessPolicy(fullAccessGroup: 44, readOnlyGroup: 1500, tcpToken: "s3cret")
    let alice = PeerCredentials(pid: 10, uid: 1000, gid: 1000)

    @Test func withoutAReadOnlyGroupTheSocketModeDecides() {
        #expect(AccessPolicy().decide(method: "POST", overTCP: false, authorization: nil, peer: alice, peerGroups: []) == .allow)
    }

    @Test func fullAccessGroupMayChangeThings() {
        #expect(policy.decide(method: "POST", overTCP: false, authorization: nil, peer: alice, peerGroups: [44]) == .allow)
        #expect(policy.decide(method: "DELETE", overTCP: false, authorization: nil, peer: PeerCredentials(pid: 1, uid: 0, gid: 0), peerGroups: []) == .allow)
    }

    @Test func readOnlyGroupMayOnlyRead() {
        #expect(policy.decide(method: "GET", overTCP: false, authorization: nil, peer: alice, peerGroups: [1500]) == .allow)
        guard case .deny(let status, let code, _) = policy.decide(method: "POST", overTCP: false, authorization: nil, peer: alice, peerGroups: [1500]) else {
            Issue.record("a read-only member could POST"); return
        }
        #expect(status == 403 && code == "read_only")
        guard case .deny(_, let other, _) = policy.decide(method: "GET", overTCP: false, authorization: nil, peer: alice, peerGroups: [7]) else {
            Issue.record("a stranger could read"); return
        }
        #expect(other == "forbidden")
    }

    @Test func tcpNeedsTheToken() {
        #expect(policy.decide(method: "GET", overTCP: true, authorization: "Bearer s3cret", peer: nil, peerGroups: []) == .allow)
        for bad in [nil, "Bearer wrong", "s3cret", "Bearer s3cret2"] {
            guard case .deny(let status, _, _) = policy.decide(method: "GET", overTCP: true, authorization: bad, peer: nil, peerGroups: []) else {
                Issue.record("\(bad ?? "no header") was let in"); continue
            }
            #expect(status == 401)
        }
        #expect(AccessPolicy().decide(method: "POST", overTCP: true, authorization: nil, peer: nil, peerGroups: []) == .allow,
                "a loopback listener without a token is open to local users")
    }
}

/// The browser rules of `AccessPolicy.checkSite`: DNS rebinding (Host), cross-site
/// writes (Origin, Sec-Fetch-Site) and bodies a page can post without a preflight.
@Suite struct CrossSiteRuleTests {
    typealias Provenance = AccessPolicy.Provenance

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var method: String
        var overTCP: Bool
        var request: Provenance
        /// nil: allowed.
        var refused: (status: Int, code: String)?
        var testDescription: String { name }
    }

    static let own = "127.0.0.1:8080"
    static let cases: [Case] = [
        // Host, on TCP only.
        Case(name: "TCP, own address", method: "GET", overTCP: true, request: Provenance(host: own)),
        Case(name: "TCP, localhost", method: "GET", overTCP: true, request: Provenance(host: "localhost:8080")),
        Case(name: "TCP, IPv6 loopback", method: "GET", overTCP: true, request: Provenance(host: "[::1]:8080")),
        Case(name: "TCP, a LAN address", method: "GET", overTCP: true, request: Provenance(host: "192.168.1.20:8080")),
        Case(name: "TCP, a name in tcp_hosts", method: "GET", overTCP: true, request: Provenance(host: "Camera.LAN:8080")),
        Case(name: "TCP, a rebinding name", method: "GET", overTCP: true, request: Provenance(host: "evil.example:8080"),
             refused: (421, "unknown_host")),
        Case(name: "TCP, a name ending in localhost's", method: "GET", overTCP: true, request: Provenance(host: "localhost.evil.example"),
             refused: (421, "unknown_host")),
        Case(name: "TCP, no Host", method: "GET", overTCP: true, request: Provenance(host: nil), refused: (421, "unknown_host")),
        Case(name: "Unix socket, any Host", method: "GET", overTCP: false, request: Provenance(host: "evil.example")),
        // Origin on every state-changing method, on both listeners.
        Case(name: "POST, foreign Origin", method: "POST", overTCP: true,
             request: Provenance(host: own, origin: "http://evil.example"), refused: (403, "cross_origin")),
        Case(name: "PUT, foreign Origin", method: "PUT", overTCP: true,
             request: Provenance(host: own, origin: "http://evil.example", contentType: "application/json", hasBody: true),
             refused: (403, "cross_origin")),
        Case(name: "DELETE, foreign Origin", method: "DELETE", overTCP: true,
             request: Provenance(host: own, origin: "http://127.0.0.1:9999"), refused: (403, "cross_origin")),
        Case(name: "POST, Origin null", method: "POST", overTCP: true, request: Provenance(host: own, origin: "null"),
             refused: (403, "cross_origin")),
        Case(name: "POST, foreign Origin on the Unix socket", method: "POST", overTCP: false,
             request: Provenance(host: "camd", origin: "http://evil.example"), refused: (403, "cross_origin")),
        Case(name: "POST, own Origin", method: "POST", overTCP: true,
             request: Provenance(host: own, origin: "http://127.0.0.1:8080", contentType: "application/json", hasBody: true)),
        Case(name: "POST, own Origin behind https", method: "POST", overTCP: true,
             request: Provenance(host: "camera.lan", origin: "https://camera.lan")),
        Case(name: "GET, foreign Origin (reading is for CORS to refuse)", method: "GET", overTCP: true,
             request: Provenance(host: own, origin: "http://evil.example")),
        // Sec-Fetch-Site when there is no Origin.
        Case(name: "POST, Sec-Fetch-Site cross-site", method: "POST", overTCP: true,
             request: Provenance(host: own, fetchSite: "cross-site"), refused: (403, "cross_origin")),
        Case(name: "POST, Sec-Fetch-Site same-site", method: "POST", overTCP: true,
             request: Provenance(host: own, fetchSite: "same-site"), refused: (403, "cross_origin")),
        Case(name: "POST, Sec-Fetch-Site same-origin", method: "POST", overTCP: true,
             request: Provenance(host: own, fetchSite: "same-origin")),
        Case(name: "POST, Sec-Fetch-Site none (typed by the user)", method: "POST", overTCP: true,
             request: Provenance(host: own, fetchSite: "none")),
        // Bodies on TCP must be JSON.
        Case(name: "TCP, text/plain body", method: "POST", overTCP: true,
             request: Provenance(host: own, contentType: "text/plain", hasBody: true), refused: (415, "unsupported_media_type")),
        Case(name: "TCP, form body", method: "POST", overTCP: true,
             request: Provenance(host: own, contentType: "application/x-www-form-urlencoded", hasBody: true),
             refused: (415, "unsupported_media_type")),
        Case(name: "TCP, multipart body", method: "PUT", overTCP: true,
             request: Provenance(host: own, contentType: "multipart/form-data; boundary=x", hasBody: true),
             refused: (415, "unsupported_media_type")),
        Case(name: "TCP, body without a type", method: "POST", overTCP: true,
             request: Provenance(host: own, hasBody: true), refused: (415, "unsupported_media_type")),
        Case(name: "TCP, JSON body with a charset", method: "POST", overTCP: true,
             request: Provenance(host: own, contentType: "Application/JSON; charset=utf-8", hasBody: true)),
        Case(name: "TCP, a POST without a body (curl -X POST)", method: "POST", overTCP: true, request: Provenance(host: own)),
        Case(name: "Unix socket, curl -d's form type", method: "POST", overTCP: false,
             request: Provenance(host: "camd", contentType: "application/x-www-form-urlencoded", hasBody: true)),
    ]

    @Test(arguments: cases)
    func rule(_ testCase: Case) {
        let policy = AccessPolicy(tcpHosts: ["camera.lan"])
        let decision = policy.checkSite(method: testCase.method, overTCP: testCase.overTCP, testCase.request)
        if let refused = testCase.refused {
            guard case .deny(let status, let code, let message) = decision else {
                Issue.record("\(testCase.name): allowed, expected \(refused.status) \(refused.code)")
                return
            }
            #expect(status == refused.status)
            #expect(code == refused.code)
            if code == "unknown_host" { #expect(message.contains("tcp_hosts"), "the message names the setting: \(message)") }
        } else {
            #expect(decision == .allow, "\(testCase.name): \(decision)")
        }
    }

    @Test func aForeignOriginIsRefusedWhateverTheToken() {
        let policy = AccessPolicy(tcpToken: "s3cret")
        let decision = policy.checkSite(method: "POST", overTCP: true, Provenance(host: Self.own, origin: "http://evil.example"))
        #expect(decision != .allow)
        // The token alone is not enough for a page: checkSite runs before it, and the token
        // check still applies to what passes.
        #expect(policy.decide(method: "POST", overTCP: true, authorization: nil, peer: nil, peerGroups: []) != .allow)
    }
}
