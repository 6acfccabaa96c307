import CaptureSession
import Logging
import RTSP
import ServiceLifecycle

/// Serves the cameras over RTSP (`[daemon] rtsp`) for the daemon's lifetime. Listed after
/// the cameras, so on shutdown it stops first: its clients are cut and leave the cameras'
/// video stages before the cameras stop.
public struct RTSPService: Service {
    let server: RTSPServer
    let logger: Logger

    public init(server: RTSPServer, logger: Logger) {
        self.server = server
        self.logger = logger
    }

    public func run() async throws {
        try await BlockingIO.run { () throws(RTSPError) in try server.start() }
        try? await gracefulShutdown()
        let clients = server.counters.values.map(\.clients).reduce(0, +)
        if clients > 0 { logger.notice("closing \(clients) RTSP client(s): camd is stopping") }
        // Bounded: the loop's thread gets two seconds, within the group's own bound.
        await BlockingIO.run { server.stop(timeout: .seconds(2)) }
    }
}
