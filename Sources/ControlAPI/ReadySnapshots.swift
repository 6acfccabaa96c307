import CaptureSession
import HTTPTypes
import NIOCore

/// Snapshot polls answered on the listener's event loop, as µStreamer answers them: a
/// `GET /v1/cameras/{id}/snapshot` that the JPEG made ahead of it can answer
/// (`CaptureSession.readySnapshot`) is answered where its request was read, with no task,
/// no turn of the camera's actor and none of the router's machinery (issue 16: in the
/// emulated VM, NIO's own HTTP path answers as fast as µStreamer, and Hummingbird's
/// async connection twice as slow).
///
/// Only what the route would answer at once, byte for byte the same: the camera's own
/// image settings (no query but `max_age_ms`), a request the access rules allow from its
/// head alone (`AccessMiddleware`'s own checks; not when the peer's groups decide), a JPEG
/// new enough. Everything else, and every refusal, goes to the router (`answer` is nil).
public struct ReadySnapshots: Sendable {
    let cameras: Cameras
    let policy: AccessPolicy
    let sessions: SessionStore

    public init(_ services: APIServices) {
        cameras = services.cameras
        policy = services.access
        sessions = services.sessions
    }

    static let prefix = "/v1/cameras/"
    static let suffix = "/snapshot"

    /// The answer to `request` if it is a snapshot poll answered at once; nil for the router to answer.
    public func answer(_ request: HTTPRequest, overTCP: Bool) -> (head: HTTPResponse, body: ByteBuffer)? {
        guard request.method == .get, let target = request.path, let (id, query) = Self.camera(in: target),
              let maxAge = Self.maxAge(query), let session: CaptureSession = cameras[id] else { return nil }
        let path = Self.prefix + id + Self.suffix
        guard case .allow = policy.checkSite(method: "GET", overTCP: overTCP, AccessMiddleware.provenance(request)),
              !AccessMiddleware.needsPeer(policy, overTCP: overTCP) else { return nil }
        let identity = AccessMiddleware.identify(request, overTCP: overTCP, policy: policy, sessions: sessions, peer: nil)
        guard case .allow = policy.decide(method: "GET", path: path, overTCP: overTCP, identity),
              let shot = session.readySnapshot(maxAge: maxAge) else { return nil }
        var headers = frameHeaders(shot)
        headers[.contentType] = "image/jpeg"
        headers[.cacheControl] = "no-store"
        headers[.contentLength] = String(shot.jpeg.count)
        return (HTTPResponse(status: .ok, headerFields: headers), ByteBuffer(bytes: shot.jpeg))
    }

    /// The camera id and query of a request target `/v1/cameras/{id}/snapshot[?query]`; nil
    /// for any other target, or an id the router would have to decode.
    static func camera(in target: String) -> (id: String, query: Substring)? {
        let question = target.firstIndex(of: "?") ?? target.endIndex
        let path = target[..<question]
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count else { return nil }
        let id = path.dropFirst(prefix.count).dropLast(suffix.count)
        guard !id.contains("/"), !id.contains("%") else { return nil }
        return (String(id), question == target.endIndex ? "" : target[target.index(after: question)...])
    }

    /// The `max_age_ms` of a query that has nothing else, in seconds: `.some(nil)` for an
    /// empty query, nil for any other query (the router reads it, and answers a bad one).
    static func maxAge(_ query: Substring) -> Double?? {
        if query.isEmpty { return .some(nil) }
        let name = "max_age_ms="
        guard query.hasPrefix(name), let ms = Double(query.dropFirst(name.count)), ms >= 0, ms <= 3_600_000 else { return nil }
        return .some(ms / 1000)
    }
}
