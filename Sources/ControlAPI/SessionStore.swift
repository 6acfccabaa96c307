import APIModel
import Foundation
import Synchronization

/// Browsers signed in over TCP (`POST /v1/session`), by the random name in their
/// `camd_session` cookie.
///
/// Kept in memory only: a restart signs everyone out, which is acceptable (signing in again
/// takes the token once), and nothing secret is ever written to disk. Bounded, so a client
/// signing in in a loop cannot grow camd's memory: past `capacity`, the oldest session goes.
public final class SessionStore: Sendable {
    public struct Session: Sendable, Equatable {
        /// What the session may do: what its token gave when it was made.
        public let access: AccessLevel
        /// The token it was made with: when the configured tokens change, a session whose
        /// token no longer gives the same access stops working (`AccessPolicy.identify`).
        let token: String
        let created: ContinuousClock.Instant
        let expires: ContinuousClock.Instant
    }

    /// The cookie's name.
    public static let cookieName = "camd_session"

    public let capacity: Int
    public let lifetime: Duration
    private let sessions = Mutex<[String: Session]>([:])

    public init(capacity: Int = 256, lifetime: Duration = .seconds(7 * 24 * 3600)) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime
    }

    /// Makes a session and returns its name: 32 random bytes, base64url.
    public func create(access: AccessLevel, token: String) -> String {
        // SystemRandomNumberGenerator is the kernel's getrandom(2): fit for secrets.
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let name = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let now = ContinuousClock.now
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value.expires > now }
            while sessions.count >= capacity, let oldest = sessions.min(by: { $0.value.created < $1.value.created }) {
                sessions[oldest.key] = nil
            }
            sessions[name] = Session(access: access, token: token, created: now, expires: now + lifetime)
        }
        return name
    }

    /// The live session of this name, nil for none (never made, signed out, evicted or expired).
    ///
    /// A dictionary lookup, not a constant-time comparison: the hash is seeded per process, so
    /// timing cannot walk toward a 256-bit random name byte by byte as it could toward a token.
    public func session(named name: String) -> Session? {
        let now = ContinuousClock.now
        return sessions.withLock { sessions in
            guard let session = sessions[name] else { return nil }
            guard session.expires > now else {
                sessions[name] = nil
                return nil
            }
            return session
        }
    }

    /// Signs a session out.
    public func remove(named name: String) {
        _ = sessions.withLock { $0.removeValue(forKey: name) }
    }

    /// How many sessions are kept now, expired ones included until the next sign-in.
    public var count: Int { sessions.withLock { $0.count } }

    /// `Set-Cookie` for a new session: only for camd's own requests (`SameSite=Strict`, which
    /// with `AccessPolicy.checkSite` keeps other sites' pages from using it), never for scripts
    /// (`HttpOnly`), for the whole site, and as long as the session lives.
    func cookie(for name: String) -> String {
        "\(Self.cookieName)=\(name); HttpOnly; SameSite=Strict; Path=/; Max-Age=\(lifetime.components.seconds)"
    }

    /// `Set-Cookie` that makes the browser forget the cookie (signing out).
    static let expiredCookie = "\(cookieName)=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"
}
