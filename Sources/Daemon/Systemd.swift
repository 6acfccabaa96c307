import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// What camd tells systemd and learns from it (sd-daemon(3)): readiness, status,
/// the watchdog, and sockets passed by socket activation.
public enum Systemd {
    /// Whether systemd is listening for notifications (NOTIFY_SOCKET is set).
    public static var isSupervising: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Whether stderr goes to the journal, so log lines should carry priority prefixes.
    public static var logsToJournal: Bool { getenv("JOURNAL_STREAM") != nil || getenv("INVOCATION_ID") != nil }

    /// Sends `READY=1`, `STATUS=...`, `WATCHDOG=1` and the like; does nothing outside systemd.
    public static func notify(_ state: String) {
        _ = sd_notify(0, state)
    }

    /// The watchdog interval systemd expects pings within, if the unit sets WatchdogSec=.
    public static func watchdogInterval() -> Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(microseconds))
    }

    /// Listening sockets passed by socket activation (LISTEN_FDS), as descriptors.
    public static func listeningSockets() -> [Int32] {
        let count = sd_listen_fds(1)
        guard count > 0 else { return [] }
        return (0..<count).map { SD_LISTEN_FDS_START + $0 }
    }
}
