import ArgumentParser
import CaptureSession
import Daemon
#if canImport(Glibc)
import Glibc
#endif

@main
struct Camd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camd",
        abstract: "The camera capture daemon: owns V4L2 cameras and serves the control API on a Unix socket.",
        discussion: """
            Configuration: /etc/camd/camd.toml (see docs/configuration.md); flags override it.
            Under systemd it uses the socket camd.socket passes, sends READY=1 and watchdog pings.
            Try: curl --unix-socket /run/camd.sock http://camd/v1/status
            """,
        version: CamdDaemon.version)

    @Option(help: "Configuration file (default /etc/camd/camd.toml; a missing default file means defaults).")
    var config: String?

    @Option(help: "Control socket path (default /run/camd.sock, or $XDG_RUNTIME_DIR/camd.sock for a user).")
    var socket: String?

    @Option(help: "Folder for saved photos (default $STATE_DIRECTORY/photos or /var/lib/camd/photos).")
    var photos: String?

    @Option(help: "Log level: \(DaemonConfiguration.logLevels.joined(separator: ", ")).")
    var logLevel: String?

    @Option(name: .customLong("camera"), help: "A camera to run (path, by-id name, card name, index, or testsrc); repeat for more. Replaces the config file's cameras.")
    var cameras: [String] = []

    /// The memory policy comes first, while the main thread is the only one: a thread whose
    /// stack is touched before it could hold a transparent huge page (`MemoryPolicy`).
    static func main() async {
        MemoryPolicy.apply()
        await main(nil)
    }

    func validate() throws {
        if let logLevel {
            var scratch = DaemonConfiguration()
            do throws(SettingError) {
                try DaemonConfiguration.key("log_level")?.apply(.text(logLevel), to: &scratch)
            } catch {
                throw ValidationError(error.description)
            }
        }
    }

    func run() async throws {
        var options = DaemonOptions()
        options.configPath = config
        options.socketPath = socket
        options.photoRoot = photos
        options.logLevel = logLevel
        options.cameras = cameras
        let status = await CamdDaemon.run(options)
        if status != 0 { throw ExitCode(status) }
    }
}
