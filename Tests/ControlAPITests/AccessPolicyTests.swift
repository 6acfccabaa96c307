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
