import APIModel
import Hummingbird
import Logging
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The request context of camd's routes: Hummingbird's core context plus the
/// connection, so handlers can ask who is on the other end of the socket.
public struct CamdRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let channel: (any Channel)?
    /// What the caller may do, as `AccessMiddleware` found; nil when it sent no credentials
    /// to a route open without them (signing in).
    var access: AccessLevel?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// JSON bodies are small: configure and controls requests.
    public var maxUploadSize: Int { JSONBody.limit }

    /// Whether the request came over TCP rather than the Unix socket.
    var isTCP: Bool {
        guard let address = channel?.localAddress else { return false }
        if case .unixDomainSocket = address { return false }
        return true
    }

    /// The peer's pid, uid and gid (SO_PEERCRED) on a Unix socket; nil on TCP.
    public func peer() async -> PeerCredentials? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        let value: PeerCredentialsOption? = try? await provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)).get()
        guard let value, value.pid > 0 else { return nil }
        return PeerCredentials(pid: value.pid, uid: value.uid, gid: value.gid)
    }
}

/// `struct ucred` from <sys/socket.h>, which Swift's Glibc module does not export.
struct PeerCredentialsOption {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
}

/// Who sent a request over the Unix socket.
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    public var description: String { "uid \(uid) gid \(gid) pid \(pid)" }
}
