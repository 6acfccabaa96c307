import APIModel
import CaptureSession
import Foundation
import Hummingbird
import LibCamera
import Logging
import V4L2
import VideoCore

/// Facts about the running daemon that `/v1/status` reports.
public struct DaemonInfo: Sendable {
    public var version: String
    public let started: ContinuousClock.Instant
    public let startedAt: Date
    /// `startedAt` as ISO 8601 in UTC ("2026-11-26T23:40:00Z"), written once (making a formatter
    /// per request was a third of every `GET /v1/status`, callgrind). By hand with gmtime_r, not
    /// `ISO8601DateFormatter` or `Date.ISO8601FormatStyle`: both reach ICU (the current time zone,
    /// a calendar), whose code and data (about 6 MiB) camd would otherwise map at start for this
    /// one date (issue 16).
    public let startedAtText: String

    public init(version: String) {
        self.version = version
        started = .now
        startedAt = Date()
        startedAtText = Self.iso8601UTC(startedAt)
    }

    static func iso8601UTC(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
            + "T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    public var uptimeSeconds: Double {
        (ContinuousClock.now - started).inSeconds
    }
}

/// What the routes work on.
public struct APIServices: Sendable {
    public var cameras: Cameras
    public var photos: PhotoOutput
    /// Each camera's recorder, writing into `photos`.
    public var recorders: Recorders
    /// Timelapse movies made from `photos`' photos, into it.
    public var timelapses: TimelapseJobs
    public var daemon: DaemonInfo
    public var logger: Logger
    public var access: AccessPolicy
    /// Browsers signed in over TCP.
    public var sessions: SessionStore
    /// Thumbnails of saved files already rendered (`/v1/media/{name}/thumbnail`).
    var thumbnails = ThumbnailCache()
    /// The daemon's event log (`GET /v1/events`); the one `photos` publishes to.
    public var events: EventLog

    public init(cameras: Cameras, photos: PhotoOutput, daemon: DaemonInfo, logger: Logger = Logger(label: "camd.api"),
                access: AccessPolicy = AccessPolicy(), sessions: SessionStore = SessionStore()) {
        self.cameras = cameras
        self.photos = photos
        recorders = Recorders(cameras: cameras, photos: photos)
        timelapses = TimelapseJobs(photos: photos, cameras: cameras)
        self.daemon = daemon
        self.logger = logger
        self.access = access
        self.sessions = sessions
        events = photos.events
    }
}

/// Builds every route of the control API (documented in docs/api.md).
/// Tests call this directly; the daemon serves it on the Unix socket.
public func buildRouter(_ services: APIServices) -> Router<CamdRequestContext> {
    // Every GET route answers HEAD with GET's status and headers and no body (monitors and
    // link checkers probe with HEAD); snapshot and stream have their own, which capture nothing.
    let router = Router(context: CamdRequestContext.self, options: .autoGenerateHeadEndpoints)
    let routes = RouteTable()
    router.add(middleware: HeadErrorMiddleware())
    router.add(middleware: JSONErrorMiddleware(routes: routes))
    router.add(middleware: AccessMiddleware(policy: services.access, sessions: services.sessions, logger: services.logger))
    let v1 = router.group("v1")
    addStatusRoutes(v1, services)
    addCameraRoutes(v1, services)
    addPhotoRoutes(v1, services)
    addMediaRoutes(v1, services)
    addRecordingRoutes(v1, services)
    addLiveVideoRoutes(v1, services)
    addTimelapseRoutes(v1, services)
    addSessionRoutes(v1, services)
    addEventRoutes(v1, services)
    addLivePageRoutes(router, services)
    addWebRoutes(router, services)
    router.get("metrics") { _, _ in try await Metrics.response(services) }
    routes.fill(from: router)
    return router
}

func addStatusRoutes(_ v1: RouterGroup<CamdRequestContext>, _ services: APIServices) {
    v1.get("status") { _, _ in
        var cameras: [CameraStatus] = []
        for session in services.cameras.sessions { cameras.append(await session.status()) }
        return try JSONBody.response(DaemonStatus(
            version: services.daemon.version, pid: getpid(), uptimeSeconds: (services.daemon.uptimeSeconds * 10).rounded() / 10,
            startedAt: services.daemon.startedAtText, cameras: cameras))
    }
    v1.get("devices") { _, _ in
        let devices = await BlockingIO.run { DeviceDiscovery.all(details: true).map(\.summary) + LibCameraDiscovery.all().cameras }
        return try JSONBody.response(devices)
    }
}


/// Logs who changed something: the peer's uid, gid and pid on the Unix socket.
func audit(_ request: Request, _ context: CamdRequestContext, _ services: APIServices) async {
    let who = await context.peer()?.description ?? "a TCP client"
    services.logger.notice("\(request.method) \(request.uri.path) by \(who)")
}
