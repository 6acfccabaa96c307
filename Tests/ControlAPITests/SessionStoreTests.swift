@testable import ControlAPI
import Testing

/// The sessions browsers sign in to: random names, bounded, expiring, and only as good as
/// the token they were made with.
@Suite struct SessionStoreTests {
    @Test func aSessionIsFoundByItsNameUntilRemoved() {
        let store = SessionStore()
        let name = store.create(access: .view, token: "v")
        #expect(store.session(named: name)?.access == .view)
        #expect(store.session(named: name + "x") == nil)
        store.remove(named: name)
        #expect(store.session(named: name) == nil)
    }

    @Test func namesAreRandomBase64URLOf32Bytes() {
        let store = SessionStore()
        let names = (0..<50).map { _ in store.create(access: .full, token: "t") }
        #expect(Set(names).count == 50)
        #expect(names.allSatisfy { $0.count == 43 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") } })
    }

    @Test func theOldestIsEvictedPastTheCapacity() {
        let store = SessionStore(capacity: 3)
        let names = (0..<4).map { _ in store.create(access: .full, token: "t") }
        #expect(store.count == 3)
        #expect(store.session(named: names[0]) == nil, "the oldest went")
        #expect(names[1...].allSatisfy { store.session(named: $0) != nil })
    }

    @Test func anExpiredSessionIsGone() {
        // A lifetime of zero: expired as soon as it is made, with no waiting.
        let store = SessionStore(lifetime: .zero)
        let name = store.create(access: .full, token: "t")
        #expect(store.session(named: name) == nil)
        #expect(store.count == 0)
    }

    @Test func theCookieIsHttpOnlyStrictAndLastsTheSessionsLifetime() {
        let store = SessionStore(lifetime: .seconds(3600))
        #expect(store.cookie(for: "abc") == "camd_session=abc; HttpOnly; SameSite=Strict; Path=/; Max-Age=3600")
    }

    @Test func aSessionGivesWhatItsTokenStillGives() {
        let store = SessionStore()
        let full = store.session(named: store.create(access: .full, token: "full"))
        let view = store.session(named: store.create(access: .view, token: "view"))
        let policy = AccessPolicy(tcpToken: "full", tcpViewToken: "view")
        #expect(policy.identify(overTCP: true, credentials: Credentials(), session: full, peer: nil, peerGroups: []) == .success(.full))
        #expect(policy.identify(overTCP: true, credentials: Credentials(), session: view, peer: nil, peerGroups: []) == .success(.view))
        let changed = AccessPolicy(tcpToken: "full2", tcpViewToken: "view")
        guard case .failure(let refusal) = changed.identify(overTCP: true, credentials: Credentials(sessionName: "x"), session: full, peer: nil, peerGroups: []) else {
            Issue.record("a session made with a token since changed still works"); return
        }
        #expect(refusal.status == 401)
        #expect(refusal.message.contains("signed out or expired"), "\(refusal.message)")
    }
}
