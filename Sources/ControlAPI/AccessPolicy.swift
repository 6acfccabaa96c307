import Hummingbird
#if canImport(Glibc)
import Glibc
#endif

/// Who may do what through the API.
///
/// On the Unix socket the file's mode and group decide who may connect at all;
/// with a read-only group (given access to the socket by an ACL entry), camd
/// checks each request's SO_PEERCRED: members of the full-access group, root and
/// camd's own user may change things, read-only members may only read (GET/HEAD).
/// Over TCP, a bearer token is required when one is configured.
public struct AccessPolicy: Sendable {
    public var fullAccessGroup: UInt32?
    public var readOnlyGroup: UInt32?
    public var tcpToken: String?

    public init(fullAccessGroup: UInt32? = nil, readOnlyGroup: UInt32? = nil, tcpToken: String? = nil) {
        self.fullAccessGroup = fullAccessGroup
        self.readOnlyGroup = readOnlyGroup
        self.tcpToken = tcpToken
    }

    public enum Decision: Equatable, Sendable {
        case allow
        case deny(status: Int, code: String, message: String)
    }

    /// Decides one request from facts alone (tested without sockets).
    public func decide(method: String, overTCP: Bool, authorization: String?, peer: PeerCredentials?, peerGroups: [UInt32]) -> Decision {
        if overTCP {
            guard let token = tcpToken else { return .allow }
            guard let given = authorization, given.hasPrefix("Bearer "), Self.constantTimeEqual(String(given.dropFirst(7)), token) else {
                return .deny(status: 401, code: "unauthorized", message: "this TCP listener needs `Authorization: Bearer <tcp_token>`")
            }
            return .allow
        }
        guard let readOnlyGroup else { return .allow }
        guard let peer else {
            return .deny(status: 403, code: "forbidden", message: "camd could not tell who is connected (no SO_PEERCRED)")
        }
        if peer.uid == 0 || peer.uid == getuid() { return .allow }
        let groups = Set(peerGroups + [peer.gid])
        if let full = fullAccessGroup, groups.contains(full) { return .allow }
        if groups.contains(readOnlyGroup) {
            if method == "GET" || method == "HEAD" { return .allow }
            return .deny(status: 403, code: "read_only",
                         message: "uid \(peer.uid) is in the read-only group; \(method) changes things, which needs the full-access group")
        }
        return .deny(status: 403, code: "forbidden", message: "uid \(peer.uid) is in neither the full-access nor the read-only group")
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

/// Applies the access policy before any route runs.
struct AccessMiddleware: RouterMiddleware {
    let policy: AccessPolicy

    func handle(_ request: Request, context: CamdRequestContext, next: (Request, CamdRequestContext) async throws -> Response) async throws -> Response {
        let overTCP = context.isTCP
        let peer = overTCP || policy.readOnlyGroup == nil ? nil : await context.peer()
        let decision = policy.decide(method: request.method.rawValue, overTCP: overTCP,
                                     authorization: request.headers[.authorization], peer: peer,
                                     peerGroups: peer.map { AccessPolicy.groups(ofProcess: $0.pid) } ?? [])
        switch decision {
        case .allow: return try await next(request, context)
        case .deny(let status, let code, let message):
            throw APIError(HTTPResponse.Status(code: status), code, message)
        }
    }
}
