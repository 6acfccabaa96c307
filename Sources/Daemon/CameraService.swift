import CaptureSession
import Logging
import ServiceLifecycle

/// Runs the cameras for the daemon's lifetime: starts those set to autostart,
/// runs their timelapse, and on shutdown stops every camera (STREAMOFF, close),
/// which also ends live streams so the listener can finish.
public struct CameraService: Service {
    let cameras: Cameras
    let photos: PhotoOutput
    let recorders: Recorders
    let logger: Logger
    let onStarted: @Sendable () async -> Void

    public init(cameras: Cameras, photos: PhotoOutput, recorders: Recorders? = nil, logger: Logger,
                onStarted: @escaping @Sendable () async -> Void = {}) {
        self.cameras = cameras
        self.photos = photos
        self.recorders = recorders ?? Recorders(cameras: cameras, photos: photos)
        self.logger = logger
        self.onStarted = onStarted
    }

    public func run() async throws {
        let removed = await photos.removeStaleTemporaryFiles()
        if removed > 0 { logger.notice("removed \(removed) unfinished photo file(s) left by an earlier run") }
        for movie in await photos.recoverInterruptedRecordings() {
            logger.notice("recovered \(movie.name) (\(String(format: "%.1f", movie.duration ?? 0)) s), a recording an earlier run did not finish")
        }
        await withTaskGroup(of: Void.self) { group in
            for session in cameras.sessions where await session.settings.autostart {
                group.addTask { await session.start() }
            }
        }
        await onStarted()
        await withDiscardingTaskGroup { group in
            for session in cameras.sessions {
                group.addTask { await IntervalCapture(session: session, photos: photos).run() }
                if let recorder = recorders[session.id] {
                    group.addTask { await ContinuousRecording(session: session, recorder: recorder).run() }
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        // Recordings end first, so their last files are finished and named before the cameras stop.
        await withDiscardingTaskGroup { group in
            for recorder in recorders.all { group.addTask { _ = try? await recorder.stop() } }
        }
        await withDiscardingTaskGroup { group in
            for session in cameras.sessions { group.addTask { await session.stop() } }
        }
        // Event streams end too (a client waiting for events would hold the listener open).
        photos.events.endSubscriptions()
        logger.info("all cameras stopped")
    }
}
