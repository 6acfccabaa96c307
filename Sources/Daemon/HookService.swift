import CaptureSession
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Runs the cameras' hooks (`on_photo`, ...), fed from the event log, off the capture path:
/// at most `concurrency` at a time, each on a thread of its own; beyond that, runs wait in a
/// queue of at most `queueCapacity`, and one more is logged and dropped.
public final class HookService: Service, Sendable {
    let events: EventLog
    let cameras: Cameras
    let photoRoot: String
    let logger: Logger
    let concurrency: Int
    let queueCapacity: Int
    private let state = Mutex(Pool())

    struct Pool {
        var running = 0
        var waiting: [HookJob] = []
        var dropped = 0
        var finished = 0
    }

    public init(events: EventLog, cameras: Cameras, photoRoot: String, logger: Logger, concurrency: Int = 4, queueCapacity: Int = 64) {
        self.events = events
        self.cameras = cameras
        self.photoRoot = photoRoot
        self.logger = logger
        self.concurrency = concurrency
        self.queueCapacity = queueCapacity
    }

    /// Hooks running now, waiting, dropped for a full queue, and finished since start.
    var counts: (running: Int, waiting: Int, dropped: Int, finished: Int) {
        state.withLock { ($0.running, $0.waiting.count, $0.dropped, $0.finished) }
    }

    public func run() async throws {
        let subscription = events.subscribe()
        await withGracefulShutdownHandler {
            while let item = await subscription.next() {
                guard case .event(let event) = item else { continue }
                if case .dropped(let info) = event.payload {
                    logger.error("hooks fell behind the events and miss some: \(info.message)")
                    return
                }
                guard let camera = event.camera, let session = cameras[camera] else { continue }
                if let job = HookJob.job(for: event, settings: await session.settings, photoRoot: photoRoot) {
                    submit(job)
                }
            }
        } onGracefulShutdown: {
            subscription.cancel()
        }
    }

    /// Starts `job` now if fewer than `concurrency` run, queues it otherwise, or drops it.
    func submit(_ job: HookJob) {
        enum Fate { case start, wait, drop }
        let fate = state.withLock { pool -> Fate in
            if pool.running < concurrency {
                pool.running += 1
                return .start
            }
            guard pool.waiting.count < queueCapacity else {
                pool.dropped += 1
                return .drop
            }
            pool.waiting.append(job)
            return .wait
        }
        switch fate {
        case .start: launch(job)
        case .wait: break
        case .drop:
            logger.error("hook \(job.name) not run for event \(job.environment["CAMD_EVENT_ID"] ?? "?"): \(concurrency) hooks run and \(queueCapacity) wait; make the hooks quicker, or lower hook_timeout")
        }
    }

    private func launch(_ job: HookJob) {
        let thread = Thread { [self] in
            var next: HookJob? = job
            while let current = next {
                let outcome = HookRunner.run(current.argv, environment: current.environment, timeout: current.timeout,
                                             name: current.name, logger: logger)
                report(current, outcome)
                next = state.withLock { pool -> HookJob? in
                    pool.finished += 1
                    if pool.waiting.isEmpty {
                        pool.running -= 1
                        return nil
                    }
                    return pool.waiting.removeFirst()
                }
            }
        }
        thread.name = "camd-hook"
        thread.start()
    }

    private func report(_ job: HookJob, _ outcome: HookRunner.Outcome) {
        switch outcome {
        case .exited(0): logger.debug("hook \(job.name) done")
        case .exited(let code): logger.warning("hook \(job.name) exited with status \(code)")
        case .signalled(let signal): logger.warning("hook \(job.name) ended by signal \(signal)")
        case .timedOut: logger.warning("hook \(job.name) was stopped after \(job.timeout) s (hook_timeout)")
        case .spawnFailed(let reason): logger.error("hook \(job.name) could not start: \(reason); check the program named in camd.toml")
        }
    }
}
