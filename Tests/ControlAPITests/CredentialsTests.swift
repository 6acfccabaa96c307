@testable import ControlAPI
import Foundation
import HTTPTypes
import Testing

/// The credentials a request offers over TCP, and what each gives.
@Suite struct CredentialsTests {
    static func basic(_ text: String) -> String { "Basic " + Data(text.utf8).base64EncodedString() }

    @Test func theTokenIsBearersOrBasicsPassword() {
        #expect(Credentials.token(fromAuthorization: "Bearer tok") == "tok")
        #expect(Credentials.token(fromAuthorization: "bearer tok") == "tok")
        #expect(Credentials.token(fromAuthorization: Self.basic("camd:tok")) == "tok")
        #expect(Credentials.token(fromAuthorization: Self.basic(":tok")) == "tok", "an empty user name")
        #expect(Credentials.token(fromAuthorization: Self.basic("a:b:tok")) == "b:tok", "the password is what follows the first colon")
        #expect(Credentials.token(fromAuthorization: "BASIC " + Data("u:tok".utf8).base64EncodedString()) == "tok")
        #expect(Credentials.token(fromAuthorization: "Basic dTp0b2s") == "tok", "base64 without its padding")
        #expect(Credentials.token(fromAuthorization: Self.basic("tok")) == nil, "no colon: no password")
        #expect(Credentials.token(fromAuthorization: "tok") == nil)
        #expect(Credentials.token(fromAuthorization: "Digest username=\"u\"") == nil)
        #expect(Credentials.token(fromAuthorization: "Basic not base64!") == nil)
    }

    @Test func theSessionComesFromTheCookieHeader() {
        let headers: HTTPFields = [.cookie: "theme=dark; camd_session=abc_-123", .authorization: "Bearer t"]
        #expect(Credentials(headers) == Credentials(token: "t", sessionName: "abc_-123"))
        #expect(Credentials([.cookie: "camd_sessionx=1"]).sessionName == nil)
    }

    @Test func eachTokenGivesItsAccess() {
        let policy = AccessPolicy(tcpToken: "full", tcpViewToken: "view")
        #expect(policy.access(forToken: "full") == .full)
        #expect(policy.access(forToken: "view") == .view)
        #expect(policy.access(forToken: "vie") == nil)
        #expect(policy.access(forToken: "") == nil)
        #expect(AccessPolicy(tcpToken: "full").access(forToken: "view") == nil)
    }

    @Test func aViewerMayReadAndSignInAndOutOnly() {
        let policy = AccessPolicy(tcpToken: "full", tcpViewToken: "view")
        for method in ["GET", "HEAD"] {
            #expect(policy.decide(method: method, path: "/v1/status", overTCP: true, authorization: "Bearer view", peer: nil, peerGroups: []) == .allow)
        }
        for method in ["POST", "DELETE"] {
            #expect(policy.decide(method: method, path: "/v1/session", overTCP: true, authorization: "Bearer view", peer: nil, peerGroups: []) == .allow)
        }
        for (method, path) in [("POST", "/v1/cameras/cam/stop"), ("PUT", "/v1/cameras/cam/controls"), ("DELETE", "/v1/media/a.mp4")] {
            guard case .deny(let status, let code, let message) = policy.decide(method: method, path: path, overTCP: true,
                                                                                authorization: "Bearer view", peer: nil, peerGroups: []) else {
                Issue.record("the viewer token could \(method) \(path)"); continue
            }
            #expect(status == 403 && code == "read_only")
            #expect(message.contains("\(method) \(path)") && message.contains("tcp_token"), "\(message)")
            #expect(policy.decide(method: method, path: path, overTCP: true, authorization: "Bearer full", peer: nil, peerGroups: []) == .allow)
        }
    }

    @Test func onlySigningInAndTheSignInPagesFilesAreOpenWithoutCredentials() {
        let policy = AccessPolicy(tcpToken: "full")
        func open(_ method: String, _ path: String) -> Bool {
            policy.decide(method: method, path: path, overTCP: true, authorization: nil, peer: nil, peerGroups: []) == .allow
        }
        #expect(open("POST", "/v1/session") && open("DELETE", "/v1/session"))
        #expect(open("GET", "/assets/camd-signin.js") && open("GET", "/assets/signin.html") && open("HEAD", "/assets/camd-icon.svg"))
        #expect(!open("GET", "/v1/session"), "what a caller may do is for callers with credentials")
        #expect(!open("GET", "/assets/camd-live.js") && !open("GET", "/") && !open("POST", "/v1/session/x"))
    }

    @Test func theUnixSocketsReadOnlyGroupMaySignInAndOutToo() {
        let policy = AccessPolicy(fullAccessGroup: 44, readOnlyGroup: 1500)
        let alice = PeerCredentials(pid: 10, uid: 1000, gid: 1000)
        #expect(policy.decide(method: "DELETE", path: "/v1/session", overTCP: false, authorization: nil, peer: alice, peerGroups: [1500]) == .allow)
        #expect(policy.identify(overTCP: false, credentials: Credentials(), session: nil, peer: alice, peerGroups: [1500]) == .success(.view))
        #expect(policy.identify(overTCP: false, credentials: Credentials(), session: nil, peer: alice, peerGroups: [44]) == .success(.full))
    }
}
