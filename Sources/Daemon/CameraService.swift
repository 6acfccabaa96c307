import CaptureSession
import Logging
import ServiceLifecycle

/// Runs the cameras for the daemon's lifetime: starts those set to autostart,
/// runs their timelapse, and on shutdown stops every camera (STREAMOFF, close),
/// which also ends live streams so the listener can finish.
public struct CameraService: Service {
    let cameras: Cameras
    let photos: PhotoOutput
    let logger: Logger
    let onStarted: @Sendable () async -> Void

    public init(cameras: Cameras, photos: PhotoOutput, logger: Logger, onStarted: @escaping @Sendable () async -> Void = {}) {
        self.cameras = cameras
        self.photos = photos
        self.logger = logger
        self.onStarted = onStarted
    }

    public func run() async throws {
        let removed = await photos.removeStaleTemporaryFiles()
        if removed > 0 { logger.notice("removed \(removed) unfinished photo file(s) left by an earlier run") }
        await withTaskGroup(of: Void.self) { group in
            for session in cameras.sessions where await session.settings.autostart {
                group.addTask { await session.start() }
            }
        }
        await onStarted()
        await withDiscardingTaskGroup { group in
            for session in cameras.sessions {
                group.addTask { await IntervalCapture(session: session, photos: photos).run() }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        await withDiscardingTaskGroup { group in
            for session in cameras.sessions { group.addTask { await session.stop() } }
        }
        logger.info("all cameras stopped")
    }
}
