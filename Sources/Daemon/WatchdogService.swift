import CaptureSession
import Logging
import ServiceLifecycle

/// Pings systemd's watchdog while the daemon is healthy, and keeps STATUS= current.
/// Healthy means every camera's actor answers within a bound: a wedged actor or
/// event loop stops the pings, and systemd restarts the daemon.
public struct WatchdogService: Service {
    let cameras: Cameras
    let interval: Duration?
    let logger: Logger
    let onDevicePolicyBlock: @Sendable () -> Void

    public init(cameras: Cameras, interval: Duration?, logger: Logger, onDevicePolicyBlock: @escaping @Sendable () -> Void) {
        self.cameras = cameras
        self.interval = interval
        self.logger = logger
        self.onDevicePolicyBlock = onDevicePolicyBlock
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
            if statuses.contains(where: { $0.lastErrorKind == "device_policy" && $0.state != .running }) {
                blockedSince = blockedSince ?? .now
                if ContinuousClock.now - blockedSince! > .seconds(3) { onDevicePolicyBlock() }
            } else {
                blockedSince = nil
            }
            await pause(period)
        }
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
