import APIModel
#if canImport(Glibc)
import Glibc
#endif

// Who the caller is (its credentials over TCP, its groups on the Unix socket) and what
// that lets it do: full access, or a viewer's.
extension AccessPolicy {
    /// Why a caller may do nothing at all: a 401 (no or wrong credentials) or a 403.
    public struct Refusal: Error, Equatable, Sendable {
        public var status: Int
        public var code: String
        public var message: String
    }

    /// The challenge of every 401 the access check sends: a browser asks for a user name and
    /// password (any name; the token as the password) and sends them as Basic.
    public static let challenge = "Basic realm=\"camd\""

    /// Whether the TCP listener asks for credentials at all.
    public var tcpNeedsCredentials: Bool { tcpToken != nil || tcpViewToken != nil }

    /// What a token gives over TCP: everything for `tcp_token`, reading for `tcp_view_token`,
    /// nil for anything else. Both are compared every time, in constant time.
    public func access(forToken given: String) -> AccessLevel? {
        let full = tcpToken.map { Self.constantTimeEqual(given, $0) } ?? false
        let view = tcpViewToken.map { Self.constantTimeEqual(given, $0) } ?? false
        return full ? .full : view ? .view : nil
    }

    /// Who the caller is, from facts alone (tested without sockets): over TCP, what its token
    /// or session gives; on the Unix socket, what its groups give (SO_PEERCRED).
    public func identify(overTCP: Bool, credentials: Credentials, session: SessionStore.Session?,
                         peer: PeerCredentials?, peerGroups: [UInt32]) -> Result<AccessLevel, Refusal> {
        if overTCP {
            guard tcpNeedsCredentials else { return .success(.full) }
            if let token = credentials.token, let access = access(forToken: token) { return .success(access) }
            // A session lasts only while the token it was made with still gives what it gave.
            if let session, access(forToken: session.token) == session.access { return .success(session.access) }
            return .failure(Refusal(status: 401, code: "unauthorized", message: tcpCredentialsMessage(credentials)))
        }
        guard let readOnlyGroup else { return .success(.full) }
        guard let peer else {
            return .failure(Refusal(status: 403, code: "forbidden", message: "camd could not tell who is connected (no SO_PEERCRED)"))
        }
        if peer.uid == 0 || peer.uid == getuid() { return .success(.full) }
        let groups = Set(peerGroups + [peer.gid])
        if let full = fullAccessGroup, groups.contains(full) { return .success(.full) }
        if groups.contains(readOnlyGroup) { return .success(.view) }
        return .failure(Refusal(status: 403, code: "forbidden", message: "uid \(peer.uid) is in neither the full-access nor the read-only group"))
    }

    private func tcpCredentialsMessage(_ credentials: Credentials) -> String {
        let what = credentials.token != nil ? "the token sent is neither tcp_token nor tcp_view_token"
            : credentials.sessionName != nil ? "the session cookie is signed out or expired (or camd restarted)"
            : "no credentials were sent"
        return "\(what): this TCP listener needs `Authorization: Bearer <token>`, Basic authentication with the token as the password "
            + "(any user name: http://camd:TOKEN@host:port/...), or a session from POST /v1/session"
    }

    /// Decides one request: who the caller is, then whether what it asks is open to it.
    public func decide(method: String, path: String, overTCP: Bool, _ identity: Result<AccessLevel, Refusal>,
                       peer: PeerCredentials? = nil) -> Decision {
        switch identity {
        case .failure(let refusal):
            // Signing in and the sign-in page's own files need no credentials, or no one could sign in.
            if overTCP, Self.isOpen(method: method, path: path) { return .allow }
            return .deny(status: refusal.status, code: refusal.code, message: refusal.message)
        case .success(.full):
            return .allow
        case .success(.view):
            if Self.viewerMay(method: method, path: path) { return .allow }
            if overTCP {
                return .deny(status: 403, code: "read_only",
                             message: "tcp_view_token may only watch (GET and HEAD); \(method) \(path) changes things: send tcp_token instead (Authorization: Bearer <tcp_token>, or sign in with it at POST /v1/session)")
            }
            return .deny(status: 403, code: "read_only",
                         message: "uid \(peer?.uid ?? 0) is in the read-only group; \(method) changes things, which needs the full-access group")
        }
    }

    /// Decides one request from its `Authorization` header and session (tests, and callers without a `Request`).
    public func decide(method: String, path: String = "", overTCP: Bool, authorization: String?, session: SessionStore.Session? = nil,
                       peer: PeerCredentials?, peerGroups: [UInt32]) -> Decision {
        let credentials = Credentials(token: authorization.flatMap(Credentials.token(fromAuthorization:)))
        return decide(method: method, path: path, overTCP: overTCP,
                      identify(overTCP: overTCP, credentials: credentials, session: session, peer: peer, peerGroups: peerGroups), peer: peer)
    }

    /// What read-only callers (`tcp_view_token`, the read-only group) may do: read, and sign in and out.
    static func viewerMay(method: String, path: String) -> Bool {
        method == "GET" || method == "HEAD" || (path == SessionRoutes.path && (method == "POST" || method == "DELETE"))
    }

    /// What anyone who reaches the TCP listener may do without credentials: sign in and out,
    /// and fetch the sign-in page's own files (public, the same in every camd).
    static func isOpen(method: String, path: String) -> Bool {
        if path == SessionRoutes.path { return method == "POST" || method == "DELETE" }
        guard method == "GET" || method == "HEAD", path.hasPrefix("/assets/") else { return false }
        return SignInPage.files.contains(String(path.dropFirst("/assets/".count)))
    }
}
