import APIModel
import HTTPTypes
import Hummingbird
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Who may do what through the API.
///
/// On the Unix socket the file's mode and group decide who may connect at all;
/// with a read-only group (given access to the socket by an ACL entry), camd
/// checks each request's SO_PEERCRED: members of the full-access group, root and
/// camd's own user may change things, read-only members may only read (GET/HEAD) and
/// sign in and out.
/// Over TCP, when `tcp_token` is configured, every request needs credentials
/// (`Credentials`): `tcp_token` may do everything, `tcp_view_token` only read, and a
/// browser's session cookie what the token it signed in with may.
///
/// What a browser could send is checked before any credential (`checkSite`): every web
/// page the user opens also reaches loopback, so the TCP listener answers only the host
/// names it is meant for (DNS rebinding) and no listener takes a state change from
/// another site's page (cross-site request forgery), whatever the token.
public struct AccessPolicy: Sendable {
    public var fullAccessGroup: UInt32?
    public var readOnlyGroup: UInt32?
    public var tcpToken: String?
    /// A second token that may only read (GET and HEAD) and sign in and out.
    public var tcpViewToken: String?
    /// Host names, besides IP literals and `localhost`, that the TCP listener answers to
    /// (`tcp_hosts`, and the name in `tcp` when it is one), lowercased.
    public var tcpHosts: Set<String>

    public init(fullAccessGroup: UInt32? = nil, readOnlyGroup: UInt32? = nil, tcpToken: String? = nil,
                tcpViewToken: String? = nil, tcpHosts: [String] = []) {
        self.fullAccessGroup = fullAccessGroup
        self.readOnlyGroup = readOnlyGroup
        self.tcpToken = tcpToken
        self.tcpViewToken = tcpViewToken
        self.tcpHosts = Set(tcpHosts.map { Self.normalized(host: $0) })
    }

    /// What a request says about where it comes from: the headers a browser sets itself
    /// and a page's script cannot.
    public struct Provenance: Sendable, Equatable {
        public var host: String?
        public var origin: String?
        /// `Sec-Fetch-Site`: same-origin, same-site, cross-site or none (typed by the user).
        public var fetchSite: String?
        public var contentType: String?
        public var hasBody: Bool

        public init(host: String?, origin: String? = nil, fetchSite: String? = nil, contentType: String? = nil, hasBody: Bool = false) {
            self.host = host
            self.origin = origin
            self.fetchSite = fetchSite
            self.contentType = contentType
            self.hasBody = hasBody
        }
    }

    /// Methods that change something; a page must not be able to send them across sites.
    static let stateChanging: Set<String> = ["POST", "PUT", "DELETE", "PATCH"]

    /// The browser rules, in order: on TCP, a Host this listener serves (421); on any
    /// listener, no state change from another origin (403); on TCP, a state change's body
    /// is JSON (415: a form or `text/plain` post, which needs no CORS preflight, never
    /// reaches a handler). The Unix socket keeps taking `curl -d` bodies: browsers cannot
    /// reach it.
    public func checkSite(method: String, overTCP: Bool, _ request: Provenance) -> Decision {
        if overTCP {
            guard let host = request.host, isServed(host: host) else {
                let shown = request.host.map { "\"\($0)\"" } ?? "no Host header"
                return .deny(status: 421, code: "unknown_host",
                             message: "the TCP listener does not answer to \(shown): only its address, loopback, localhost and the names in tcp_hosts (a defence against DNS rebinding). If you reach camd by this name (a LAN name, a reverse proxy), add it to tcp_hosts under [daemon] in camd.toml")
            }
        }
        guard Self.stateChanging.contains(method) else { return .allow }
        if let origin = request.origin {
            guard let host = request.host, Self.isSameOrigin(origin, host: host) else {
                return .deny(status: 403, code: "cross_origin",
                             message: "\(method) from a page of \(origin) refused: camd takes changes only from its own origin or from clients that are not browsers (curl, scripts, camctl)")
            }
        } else if let site = request.fetchSite?.lowercased(), site != "same-origin", site != "none" {
            return .deny(status: 403, code: "cross_origin",
                         message: "\(method) from a \(site) page refused: camd takes changes only from its own origin or from clients that are not browsers")
        }
        if overTCP, request.hasBody {
            let type = request.contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            guard type == "application/json" else {
                return .deny(status: 415, code: "unsupported_media_type",
                             message: "a \(method) body on the TCP listener must be sent as Content-Type: application/json; got \(request.contentType.map { "\"\($0)\"" } ?? "none") (curl: -H 'Content-Type: application/json')")
            }
        }
        return .allow
    }

    /// Whether the TCP listener answers to `host` (a Host header, with or without port).
    func isServed(host: String) -> Bool {
        let name = Self.normalized(host: host)
        if name == "localhost" || tcpHosts.contains(name) { return true }
        // An IP literal cannot be rebound: a page at that address is served by that address.
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
    }

    /// A Host header's name alone: no port, no IPv6 brackets, lowercased, no final dot.
    static func normalized(host: String) -> String {
        var name = Substring(host.lowercased())
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            name = name[name.index(after: name.startIndex)..<close]
        } else if let colon = name.lastIndex(of: ":"), name[name.index(after: colon)...].allSatisfy(\.isNumber) {
            name = name[..<colon]
        }
        if name.hasSuffix(".") { name = name.dropLast() }
        return String(name)
    }

    /// `Origin` is `scheme://host[:port]`; the request is same-origin when that host and
    /// port are the ones it was sent to (its Host header).
    static func isSameOrigin(_ origin: String, host: String) -> Bool {
        let lowered = origin.lowercased()
        for scheme in ["http://", "https://"] where lowered.hasPrefix(scheme) {
            return lowered.dropFirst(scheme.count) == host.lowercased()
        }
        return false  // "null" (a sandboxed page, a file) or something else
    }

    public enum Decision: Equatable, Sendable {
        case allow
        case deny(status: Int, code: String, message: String)
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// A process's supplementary groups, from /proc/PID/status ("Groups:").
    static func groups(ofProcess pid: Int32) -> [UInt32] {
        guard let file = fopen("/proc/\(pid)/status", "r") else { return [] }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if line.hasPrefix("Groups:") {
                return line.dropFirst(7).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { UInt32($0) }
            }
        }
        return []
    }
}

/// Applies the access policy before any route runs, and tells the routes what the caller may
/// do (`CamdRequestContext.access`).
struct AccessMiddleware: RouterMiddleware {
    let policy: AccessPolicy
    let sessions: SessionStore
    /// A refused page is worth a line: it shows a site trying to use camd through the browser.
    let logger: Logger

    func handle(_ request: Request, context: CamdRequestContext, next: (Request, CamdRequestContext) async throws -> Response) async throws -> Response {
        let overTCP = context.isTCP
        let provenance = Self.provenance(request.head)
        if case .deny(let status, let code, let message) = policy.checkSite(method: request.method.rawValue, overTCP: overTCP, provenance) {
            logger.notice("refused \(request.method) \(request.uri.path) (\(code)): Host \(provenance.host ?? "none"), Origin \(provenance.origin ?? "none"), Sec-Fetch-Site \(provenance.fetchSite ?? "none")")
            throw APIError(HTTPResponse.Status(code: status), code, message)
        }
        let peer = Self.needsPeer(policy, overTCP: overTCP) ? await context.peer() : nil
        let identity = Self.identify(request.head, overTCP: overTCP, policy: policy, sessions: sessions, peer: peer)
        switch policy.decide(method: request.method.rawValue, path: request.uri.path, overTCP: overTCP, identity, peer: peer) {
        case .allow:
            var context = context
            context.access = try? identity.get()
            return try await next(request, context)
        case .deny(let status, let code, let message) where status == 401:
            if request.method == .get, SignInPage.isNavigation(request.headers) { return SignInPage.response() }
            throw APIError(.unauthorized, code, message, headers: [.wwwAuthenticate: SignInPage.challenge(for: request.headers)])
        case .deny(let status, let code, let message):
            throw APIError(HTTPResponse.Status(code: status), code, message)
        }
    }

    /// What a request's head says about where it comes from (`AccessPolicy.checkSite`).
    static func provenance(_ head: HTTPRequest) -> AccessPolicy.Provenance {
        provenance(authority: head.authority, head.headerFields)
    }

    /// `provenance` of a head with this authority (its `Host`) and these fields.
    static func provenance(authority: String?, _ headers: some RequestFields) -> AccessPolicy.Provenance {
        AccessPolicy.Provenance(
            host: authority, origin: headers[.origin], fetchSite: headers[fetchSite], contentType: headers[.contentType],
            hasBody: (headers[.contentLength].flatMap(Int.init) ?? 0) > 0 || headers[.transferEncoding] != nil)
    }

    /// Made once: a name is checked as it is made.
    static let fetchSite = HTTPField.Name("Sec-Fetch-Site")!

    /// Whether who is connected decides (SO_PEERCRED): on the Unix socket with a read-only group.
    static func needsPeer(_ policy: AccessPolicy, overTCP: Bool) -> Bool {
        !overTCP && policy.readOnlyGroup != nil
    }

    /// Who the caller of `head` is: its token or session over TCP, the peer's groups on the Unix socket.
    static func identify(_ head: HTTPRequest, overTCP: Bool, policy: AccessPolicy, sessions: SessionStore,
                         peer: PeerCredentials?) -> Result<AccessLevel, AccessPolicy.Refusal> {
        identify(Credentials(head.headerFields), overTCP: overTCP, policy: policy, sessions: sessions, peer: peer)
    }

    /// `identify` of a request that offers these credentials.
    static func identify(_ credentials: Credentials, overTCP: Bool, policy: AccessPolicy, sessions: SessionStore,
                         peer: PeerCredentials?) -> Result<AccessLevel, AccessPolicy.Refusal> {
        let session = overTCP ? credentials.sessionName.flatMap(sessions.session(named:)) : nil
        return policy.identify(overTCP: overTCP, credentials: credentials, session: session, peer: peer,
                               peerGroups: peer.map { AccessPolicy.groups(ofProcess: $0.pid) } ?? [])
    }
}
