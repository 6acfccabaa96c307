import CaptureSession
import Logging
import ServiceLifecycle
import V4L2

/// Pings systemd's watchdog while the daemon is healthy, and keeps STATUS= current.
/// Healthy means every camera's actor answers within a bound: a wedged actor or
/// event loop stops the pings, and systemd restarts the daemon. Asks for a restart
/// (`RestartCause`) when only a new process can open a camera.
public struct WatchdogService: Service {
    let cameras: Cameras
    let interval: Duration?
    let logger: Logger
    let supervised: Bool
    let onRestartNeeded: @Sendable (RestartCause) -> Void

    /// Why camd exits for systemd to start it again.
    public enum RestartCause: Sendable, Equatable {
        /// systemd's DeviceAllow= was resolved before the video driver was loaded.
        case devicePolicy
        /// A libcamera camera went away while streaming, and only a new process can take it
        /// back (the camera's id; `DeviceError.Kind.restartNeeded`).
        case cameraGone(String)
    }

    /// `supervised`: systemd runs camd and starts it again after it exits 75; otherwise the
    /// other cameras keep running, and the camera's status says to restart camd.
    public init(cameras: Cameras, interval: Duration?, logger: Logger, supervised: Bool = Systemd.isSupervising,
                onRestartNeeded: @escaping @Sendable (RestartCause) -> Void) {
        self.cameras = cameras
        self.interval = interval
        self.logger = logger
        self.supervised = supervised
        self.onRestartNeeded = onRestartNeeded
    }

    public func run() async throws {
        let period = interval.map { $0 / 2 } ?? .seconds(5)
        var blockedSince: ContinuousClock.Instant?
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            guard let statuses = await answer(within: .seconds(2)) else {
                logger.critical("a camera did not answer within 2 s; not pinging the watchdog")
                await pause(period)
                continue
            }
            var message = "STATUS=" + summary(statuses)
            if interval != nil { message += "\nWATCHDOG=1" }
            Systemd.notify(message)
            // EPERM by device policy while file permissions allow: only a restart fixes it.
            if statuses.contains(where: { $0.lastErrorKind == DeviceError.Kind.devicePolicy.rawValue && $0.state != .running }) {
                blockedSince = blockedSince ?? .now
                if ContinuousClock.now - blockedSince! > .seconds(3) { onRestartNeeded(.devicePolicy) }
            } else {
                blockedSince = nil
            }
            if let camera = Self.cameraGone(in: statuses, supervised: supervised) { onRestartNeeded(.cameraGone(camera)) }
            await pause(period)
        }
    }

    /// The first camera that only a new process can open (`DeviceError.Kind.restartNeeded`),
    /// when systemd supervises camd and will start it again.
    static func cameraGone(in statuses: [CameraStatus], supervised: Bool) -> String? {
        guard supervised else { return nil }
        return statuses.first { $0.lastErrorKind == DeviceError.Kind.restartNeeded.rawValue && $0.state != .running }?.id
    }

    /// Sleeps for `period`, or less when the daemon starts stopping: a plain sleep
    /// would hold SIGTERM's exit for up to WatchdogSec/2.
    private func pause(_ period: Duration) async {
        _ = try? await cancelWhenGracefulShutdown { try await Task.sleep(for: period) }
    }

    /// Every camera's status, or nil when one does not answer in time.
    private func answer(within limit: Duration) async -> [CameraStatus]? {
        await withTaskGroup(of: [CameraStatus]?.self) { group in
            group.addTask {
                var all: [CameraStatus] = []
                for session in cameras.sessions { all.append(await session.status()) }
                return all
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    func summary(_ statuses: [CameraStatus]) -> String {
        if statuses.isEmpty { return "no cameras configured" }
        return statuses.map { status in
            var text = "\(status.id) \(status.state.rawValue)"
            if status.state == .running { text += " \(status.measuredFPS) fps" }
            if status.streamClients > 0 { text += " \(status.streamClients) client(s)" }
            return text
        }.joined(separator: ", ")
    }
}
