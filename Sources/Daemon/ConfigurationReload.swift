import CaptureSession
import Logging
import ServiceLifecycle
import UnixSignals

/// What a reload of camd.toml did.
public struct ReloadReport: Sendable, Equatable {
    /// Cameras that run with their new settings now.
    public var reconfigured: [String] = []
    /// Cameras whose new settings were refused; they keep running with the old ones.
    public var refused: [String: String] = [:]
    /// What the file changes but only a restart applies (daemon keys, cameras added or removed).
    public var needsRestart: [String] = []

    public init() {}
}

/// Reads camd.toml again and applies what can change while camd runs: each
/// camera's settings (size, format, fps, quality, controls, photos). A file
/// with a mistake changes nothing: the running configuration stays.
public actor ConfigurationReload {
    let path: String
    let defaultsIfMissing: Bool
    let cameras: Cameras
    /// Cameras from --camera replace the file's, so a reload leaves them alone.
    let camerasFromCommandLine: Bool
    /// What runs now: the last file read without a mistake.
    private var current: DaemonConfiguration
    /// Where each reload's report is published (`config_reloaded`).
    let events: EventLog?

    public init(path: String, defaultsIfMissing: Bool, running: DaemonConfiguration, cameras: Cameras,
                camerasFromCommandLine: Bool, events: EventLog? = nil) {
        self.events = events
        self.path = path
        self.defaultsIfMissing = defaultsIfMissing
        self.cameras = cameras
        self.camerasFromCommandLine = camerasFromCommandLine
        self.current = running
    }

    /// Reads the file and applies it; throws, changing nothing, when the file has a mistake.
    public func reload() async throws(ConfigurationError) -> ReloadReport {
        let new = try DaemonConfiguration.load(path: path, defaultsIfMissing: defaultsIfMissing)
        let old = current
        var report = ReloadReport()
        report.needsRestart = Self.daemonChanges(from: old, to: new)

        if !camerasFromCommandLine {
            // No [[camera]] tables means "every camera found": the running ones stay as they are.
            for settings in new.cameras {
                guard let session = cameras[settings.id] else {
                    report.needsRestart.append("camera \(settings.id) added")
                    continue
                }
                guard await session.settings != settings else { continue }
                do {
                    _ = try await session.configure(settings)
                    report.reconfigured.append(settings.id)
                } catch {
                    report.refused[settings.id] = "\(error)"
                }
            }
            if !new.cameras.isEmpty {
                for id in cameras.ids where !new.cameras.contains(where: { $0.id == id }) {
                    report.needsRestart.append("camera \(id) removed")
                }
            } else if !old.cameras.isEmpty {
                report.needsRestart.append("[[camera]] tables removed (every camera found would run)")
            }
        }
        current = new
        events?.publish(.configReloaded(.init(changed: report.reconfigured, refused: report.refused, needsRestart: report.needsRestart)))
        return report
    }

    /// The [daemon] keys that differ: camd reads them once, at start.
    static func daemonChanges(from old: DaemonConfiguration, to new: DaemonConfiguration) -> [String] {
        var changed: [String] = []
        func note<T: Equatable>(_ key: String, _ a: T, _ b: T) { if a != b { changed.append(key) } }
        note("socket", old.socketPath, new.socketPath)
        note("socket_mode", old.socketMode, new.socketMode)
        note("socket_group", old.socketGroup, new.socketGroup)
        note("read_only_group", old.readOnlyGroup, new.readOnlyGroup)
        note("photo_folder", old.photoRoot, new.photoRoot)
        note("log_level", old.logLevel, new.logLevel)
        note("tcp", old.tcpListen, new.tcpListen)
        note("tcp_token", old.tcpToken, new.tcpToken)
        note("tcp_view_token", old.tcpViewToken, new.tcpViewToken)
        note("tcp_hosts", old.tcpHosts, new.tcpHosts)
        note("rtsp", old.rtspListen, new.rtspListen)
        note("shutdown_timeout", old.shutdownTimeoutSeconds, new.shutdownTimeoutSeconds)
        note("idle_timeout", old.idleTimeoutSeconds, new.idleTimeoutSeconds)
        return changed.map { "daemon.\($0) changed" }
    }
}

/// Reloads camd.toml on SIGHUP (`systemctl reload camd`), telling systemd with RELOADING=1 and READY=1.
public struct ReloadService: Service {
    let reload: ConfigurationReload
    let logger: Logger

    public init(reload: ConfigurationReload, logger: Logger) {
        self.reload = reload
        self.logger = logger
    }

    public func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            Systemd.notify("RELOADING=1")
            do {
                let report = try await reload.reload()
                for id in report.reconfigured { logger.notice("reload: camera \(id) runs with its new settings") }
                for (id, reason) in report.refused.sorted(by: { $0.key < $1.key }) {
                    logger.error("reload: camera \(id) keeps its old settings: \(reason)")
                }
                if !report.needsRestart.isEmpty {
                    logger.warning("reload: \(report.needsRestart.joined(separator: "; ")): these take effect when camd restarts")
                }
                if report.reconfigured.isEmpty && report.refused.isEmpty && report.needsRestart.isEmpty {
                    logger.notice("reload: \(reload.path) read; nothing changed")
                }
            } catch {
                logger.error("reload: \(error); camd keeps running with the configuration it had")
            }
            Systemd.notify("READY=1")
        }
    }
}
