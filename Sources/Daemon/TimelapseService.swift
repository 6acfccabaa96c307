import CaptureSession
import Logging
import ServiceLifecycle

/// Ends the timelapse movie jobs when camd stops: a render under way is cancelled (its
/// unfinished movie removed) rather than cut off, and queued ones are dropped. Listed after
/// the cameras in the group, so it stops first. A killed run's unfinished movies are removed
/// at the next start with the other temporary files (`PhotoOutput.removeStaleTemporaryFiles`).
public struct TimelapseService: Service {
    let timelapses: TimelapseJobs
    let logger: Logger

    public init(timelapses: TimelapseJobs, logger: Logger) {
        self.timelapses = timelapses
        self.logger = logger
    }

    public func run() async throws {
        try? await gracefulShutdown()
        let unfinished = await timelapses.list().filter { !$0.state.isFinished }.count
        if unfinished > 0 { logger.notice("cancelling \(unfinished) timelapse movie job(s): camd is stopping") }
        await timelapses.cancelAll()
    }
}
