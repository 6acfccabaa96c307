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
/// Only what the route would answer, byte for byte the same: the camera's own image settings
/// (no query but `max_age_ms`), a request the access rules allow from its head alone
/// (`AccessMiddleware`'s own checks; not when the peer's groups decide). A poll with no JPEG
/// new enough waits for it here too (`Wait`); one the loop cannot wait for is answered by the
/// router in a task, and the connection stays here (keep-alive pollers); everything else, and
/// every refusal, makes the connection the router's.
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

    public enum Outcome {
        /// A snapshot poll, answered at once with this snapshot (`ByteBuffer.writeSnapshotAnswer`).
        case answered(RenderedSnapshot)
        /// A snapshot poll that needs a frame or an encode: it waits for it here (`Wait.start`),
        /// or the router answers it (a JPEG or an error of a single buffer), and the connection
        /// may go on being served here.
        case waits(Wait)
        /// Anything else, and a poll the access rules refuse: the connection is the router's.
        case other
    }

    /// What becomes of a `GET` of `target` (in origin form, `/...`) with this authority (its
    /// `Host`) and these fields; `request` is the same request in Swift HTTP Types, made only
    /// for a poll that waits (the router may answer it then).
    public func answer(target: String, authority: String?, fields: some RequestFields, overTCP: Bool,
                       request: () -> HTTPRequest?) -> Outcome {
        guard let (id, query) = Self.camera(in: target), let maxAge = Self.maxAge(query),
              let session: CaptureSession = cameras[id] else { return .other }
        // A target as long as its path has no query: it is the path (`camera(in:)` read it as
        // the prefix, the id and the suffix), which need not be made again.
        let path = target.utf8.count == Self.prefixBytes.count + id.utf8.count + Self.suffixBytes.count ? target : Self.prefix + id + Self.suffix
        let provenance = AccessMiddleware.provenance(authority: authority, fields)
        guard case .allow = policy.checkSite(method: "GET", overTCP: overTCP, provenance),
              !AccessMiddleware.needsPeer(policy, overTCP: overTCP) else { return .other }
        let identity = AccessMiddleware.identify(Credentials(fields: fields), overTCP: overTCP, policy: policy, sessions: sessions, peer: nil)
        guard case .allow = policy.decide(method: "GET", path: path, overTCP: overTCP, identity) else { return .other }
        guard let shot = session.readySnapshot(maxAge: maxAge) else {
            guard let request = request() else { return .other }
            return .waits(Wait(request: request, session: session, maxAge: maxAge))
        }
        return .answered(shot)
    }

    /// A poll that found no JPEG new enough, which may wait for its encode on the event loop.
    public struct Wait: Sendable {
        /// The poll, for the router when it answers.
        public let request: HTTPRequest
        let session: CaptureSession
        let maxAge: Double?

        /// Asks for the poll's JPEG (`CaptureSession.waitForSnapshot`): the snapshot at once if
        /// one was made meanwhile, else the wait, and `done` is called with the snapshot once it
        /// is made, on the encoder's thread, or with nil when the router must answer after all
        /// (`.unavailable` says so at once).
        public func start(_ done: @escaping @Sendable (RenderedSnapshot?) -> Void) -> CaptureSession.LoopSnapshot {
            session.waitForSnapshot(maxAge: maxAge, done: done)
        }
    }

    /// The camera id and query of a request target `/v1/cameras/{id}/snapshot[?query]`; nil
    /// for any other target, or an id the router would have to decode. Read on the target's
    /// UTF-8 bytes in place, as this runs for every request a connection starts with.
    static func camera(in target: String) -> (id: String, query: Substring)? {
        var target = target
        target.makeContiguousUTF8()  // a request's target is already: this costs nothing then
        let found = target.utf8.withContiguousStorageIfAvailable { bytes -> (id: String, query: Int)? in
            let question = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
            let idStart = prefixBytes.count, idEnd = question - suffixBytes.count
            guard idEnd > idStart, bytes[..<idStart].elementsEqual(prefixBytes), bytes[idEnd..<question].elementsEqual(suffixBytes)
            else { return nil }
            let id = UnsafeBufferPointer(rebasing: bytes[idStart..<idEnd])
            guard !id.contains(UInt8(ascii: "/")), !id.contains(UInt8(ascii: "%")) else { return nil }
            return (String(decoding: id, as: UTF8.self), min(question + 1, bytes.count))
        }
        guard let (id, query) = found ?? nil else { return nil }
        return (id, target[target.utf8.index(target.utf8.startIndex, offsetBy: query)...])
    }

    /// The start of every target `answer` may answer, for a listener to pass the others by unread.
    public static let prefixBytes = Array(prefix.utf8)
    static let suffixBytes = Array(suffix.utf8)

    /// The `max_age_ms` of a query that has nothing else, in seconds: `.some(nil)` for an
    /// empty query, nil for any other query (the router reads it, and answers a bad one).
    static func maxAge(_ query: Substring) -> Double?? {
        if query.isEmpty { return .some(nil) }
        // On the bytes in place: `Substring.UTF8View.starts(with:)` took 1,400 instructions.
        let named = query.utf8.withContiguousStorageIfAvailable { $0.starts(with: maxAgeName) }
            ?? query.utf8.starts(with: maxAgeName)
        guard named, let seconds = SnapshotQuery.maxAgeSeconds(Substring(query.utf8.dropFirst(maxAgeName.count))) else { return nil }
        return .some(seconds)
    }

    static let maxAgeName = Array("max_age_ms=".utf8)
}
