import CaptureSession
import ControlAPI
import Logging
import RTSP
import ServiceLifecycle
import Synchronization
import V4L2
#if canImport(Glibc)
import Glibc
#endif

/// What `camd`'s command line can override.
public struct DaemonOptions: Sendable {
    public var configPath: String?
    public var socketPath: String?
    public var photoRoot: String?
    public var logLevel: String?
    /// Camera selectors given with --camera; they replace the config file's cameras.
    public var cameras: [String] = []

    public init() {}
}

/// The daemon: reads its configuration, sets up cameras, photo output and the
/// control API, tells systemd when it is ready, and shuts down in order on SIGTERM.
public enum CamdDaemon {
    public static let version = "0.1.0"

    /// Exit statuses beyond 0 and 1 (sysexits.h).
    public enum Exit {
        public static let configuration: Int32 = 78  // EX_CONFIG
        public static let unavailable: Int32 = 69  // EX_UNAVAILABLE: the socket is taken
        /// A restart fixes what this process cannot: a device policy refused the cameras (systemd's
        /// DeviceAllow= is resolved at start), or a libcamera camera went away while streaming.
        public static let restartNeeded: Int32 = 75  // EX_TEMPFAIL
    }

    /// camd's `main` has applied `MemoryPolicy` before it, while no other thread ran.
    public static func run(_ options: DaemonOptions) async -> Int32 {
        let configuration: DaemonConfiguration
        do {
            configuration = try DaemonConfiguration.load(path: options.configPath ?? DaemonConfiguration.defaultPath,
                                                         defaultsIfMissing: options.configPath == nil)
        } catch {
            printError("camd: \(error)")
            return Exit.configuration
        }
        let level = Logger.Level(rawValue: options.logLevel ?? configuration.logLevel) ?? .info
        let prefixed = Systemd.logsToJournal
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, level: level, prefixed: prefixed) }
        let logger = Logger(label: "camd")
        umask(0o027)

        let events = EventLog()
        let cameras = Cameras(cameraSettings(configuration, options, logger).map {
            CaptureSession(settings: $0, logger: Logger(label: "camd.camera"), events: events)
        })
        let photoRoot = options.photoRoot ?? configuration.photoRoot ?? defaultPhotoRoot()
        let photos = PhotoOutput(root: photoRoot, events: events)
        let access = AccessPolicy(fullAccessGroup: configuration.socketGroup.flatMap(SocketFile.groupID),
                                  readOnlyGroup: configuration.readOnlyGroup.flatMap(SocketFile.groupID),
                                  tcpToken: configuration.tcpToken, tcpViewToken: configuration.tcpViewToken,
                                  tcpHosts: configuration.tcpHosts + tcpName(configuration))
        if let group = configuration.readOnlyGroup, access.readOnlyGroup == nil {
            printError("camd: read_only_group \"\(group)\" does not exist; create it (groupadd \(group)) or remove the setting")
            return Exit.configuration
        }
        let services = APIServices(cameras: cameras, photos: photos, daemon: DaemonInfo(version: version),
                                   logger: Logger(label: "camd.api"), access: access)
        let endpoints = listenEndpoints(configuration, options)
        logger.notice("camd \(version) starting: cameras \(cameras.ids.joined(separator: ", ")); photos in \(photoRoot)")

        let readiness = Readiness()
        let exitStatus = Mutex<Int32>(0)
        let listener = HTTPListener(endpoints: endpoints, router: buildRouter(services), logger: logger,
                                    readOnlyGroup: configuration.readOnlyGroup,
                                    idleTimeout: .milliseconds(Int64(configuration.idleTimeoutSeconds * 1000)),
                                    readySnapshots: ReadySnapshots(services)) {
            await readiness.mark(.listening)
        }
        let cameraService = CameraService(cameras: cameras, photos: photos, recorders: services.recorders, logger: logger) {
            await readiness.mark(.camerasStarted)
        }
        let (restartRequests, requestRestart) = AsyncStream.makeStream(of: Void.self)
        let watchdog = WatchdogService(cameras: cameras, interval: Systemd.watchdogInterval(), logger: logger) { cause in
            switch cause {
            case .devicePolicy:
                logger.critical("a device policy refuses the cameras (DeviceAllow= is resolved when the service starts, and the video driver was loaded later); exiting so systemd restarts camd")
            case .cameraGone(let camera):
                logger.critical("camera \(camera) went away while streaming, and libcamera lets only a new process take it back (this one would abort when it comes back); exiting so systemd restarts camd")
            }
            exitStatus.withLock { $0 = Exit.restartNeeded }
            requestRestart.yield()
        }
        let reload = ReloadService(reload: ConfigurationReload(
            path: options.configPath ?? DaemonConfiguration.defaultPath, defaultsIfMissing: options.configPath == nil,
            running: configuration, cameras: cameras, camerasFromCommandLine: !options.cameras.isEmpty, events: events), logger: logger)
        // Cameras stop before the listener: that ends live streams, so the listener can finish.
        // RTSP stops before the cameras: its clients leave the cameras' video first.
        var serviceList: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: listener), .init(service: cameraService)]
        if let server = rtspServer(configuration, cameras: cameras) {
            serviceList.append(.init(service: RTSPService(server: server, logger: logger)))
        }
        serviceList.append(.init(service: HookService(events: events, cameras: cameras, photoRoot: photoRoot, logger: Logger(label: "camd.hooks"))))
        serviceList += [.init(service: watchdog), .init(service: reload),
                        .init(service: TimelapseService(timelapses: services.timelapses, logger: logger))]
        var groupConfiguration = ServiceGroupConfiguration(
            services: serviceList,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        // shutdown_timeout bounds the graceful part; then what is left is cancelled, and
        // camd exits a second later whatever still runs (a device stuck in an ioctl).
        groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(Int64(configuration.shutdownTimeoutSeconds * 1000))
        groupConfiguration.maximumCancellationDuration = .seconds(1)
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    defer { requestRestart.finish() }
                    do {
                        try await group.run()
                    } catch {
                        await readiness.abandon()
                        throw error
                    }
                    await readiness.abandon()
                }
                tasks.addTask {
                    guard await readiness.waitUntilReady() else { return }
                    Systemd.notify("READY=1\nSTATUS=serving \(endpoints.map(\.description).joined(separator: ", "))")
                    logger.notice("ready")
                }
                tasks.addTask {
                    for await _ in restartRequests {
                        await group.triggerGracefulShutdown()
                        break
                    }
                }
                try await tasks.waitForAll()
            }
        } catch let error as SocketError {
            logger.critical("\(error.description)")
            return Exit.unavailable
        } catch let error as TCPListenError {
            logger.critical("\(error.description)")
            return Exit.configuration
        } catch let error as RTSPError {
            logger.critical("\(error.description)")
            return Exit.configuration
        } catch {
            logger.critical("camd stopped: \(error)")
            return 1
        }
        Systemd.notify("STOPPING=1")
        logger.notice("stopped")
        return exitStatus.withLock { $0 }
    }

    /// Cameras from --camera, else from the config file, else every camera found now
    /// (or, with none found, one camera "cam0" that waits for the first to appear).
    static func cameraSettings(_ configuration: DaemonConfiguration, _ options: DaemonOptions, _ logger: Logger) -> [CameraSettings] {
        if !options.cameras.isEmpty {
            var used = Set<String>()
            return options.cameras.map { selector in
                var id = selector == FrameSources.syntheticName ? "testsrc" : CameraSettings.id(fromStableName: selector)
                while used.contains(id) { id += "_" }
                used.insert(id)
                return CameraSettings(id: id, device: selector)
            }
        }
        if !configuration.cameras.isEmpty { return configuration.cameras }
        let found = DeviceDiscovery.cameras()
        if found.isEmpty {
            logger.notice("no camera found now; camera cam0 will use the first one that appears")
            return [CameraSettings(id: "cam0")]
        }
        var used = Set<String>()
        return found.map { device in
            var id = device.byID.first.map(CameraSettings.id(fromStableName:)) ?? "video\(device.number)"
            while used.contains(id) { id += "_" }
            used.insert(id)
            return CameraSettings(id: id, device: device.byID.first ?? device.path)
        }
    }

    static func listenEndpoints(_ configuration: DaemonConfiguration, _ options: DaemonOptions) -> [HTTPListener.Endpoint] {
        var endpoints: [HTTPListener.Endpoint]
        let inherited = Systemd.listeningSockets()
        if options.socketPath == nil, !inherited.isEmpty {
            endpoints = inherited.map { .inherited($0) }
        } else {
            let path = options.socketPath ?? configuration.socketPath ?? defaultSocketPath()
            endpoints = [.unixSocket(path: path, mode: configuration.socketMode,
                                     group: geteuid() == 0 ? configuration.socketGroup : nil)]
        }
        if let tcp = configuration.tcpListen, let (host, port) = DaemonConfiguration.hostAndPort(of: tcp) {
            endpoints.append(.tcp(host: host, port: Int(port)))
        }
        return endpoints
    }

    /// The RTSP server of `[daemon] rtsp`, nil without one; clients send `tcp_token` (or
    /// `tcp_view_token`: RTSP is only watching) when there is one.
    static func rtspServer(_ configuration: DaemonConfiguration, cameras: Cameras) -> RTSPServer? {
        guard let rtsp = configuration.rtspListen, let (host, port) = DaemonConfiguration.hostAndPort(of: rtsp) else { return nil }
        return RTSPServer(configuration: .init(host: host, port: Int(port), token: configuration.tcpToken, viewToken: configuration.tcpViewToken),
                          cameras: cameras.sessions, logger: Logger(label: "camd.rtsp"))
    }

    /// The host in `tcp` when it is a name rather than an address: the listener answers to it.
    static func tcpName(_ configuration: DaemonConfiguration) -> [String] {
        guard let tcp = configuration.tcpListen, let (host, _) = DaemonConfiguration.hostAndPort(of: tcp) else { return [] }
        return [host]
    }

    /// /run/camd.sock for the system daemon; $XDG_RUNTIME_DIR/camd.sock for a user's.
    public static func defaultSocketPath() -> String {
        if geteuid() == 0 { return "/run/camd.sock" }
        if let runtime = getenv("XDG_RUNTIME_DIR") { return String(cString: runtime) + "/camd.sock" }
        return "/tmp/camd-\(geteuid()).sock"
    }

    /// $STATE_DIRECTORY/photos under systemd, /var/lib/camd/photos for root, $XDG_STATE_HOME/camd/photos for a user.
    static func defaultPhotoRoot() -> String {
        if let state = getenv("STATE_DIRECTORY") {
            let first = String(cString: state).split(separator: ":").first.map(String.init) ?? "/var/lib/camd"
            return first + "/photos"
        }
        if geteuid() == 0 { return "/var/lib/camd/photos" }
        if let xdg = getenv("XDG_STATE_HOME") { return String(cString: xdg) + "/camd/photos" }
        let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
        return home + "/.local/state/camd/photos"
    }

    static func printError(_ message: String) {
        var line = message + "\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}

/// READY=1 goes out once the socket is bound and the cameras are set up.
actor Readiness {
    enum Step { case listening, camerasStarted }
    private var done: Set<Step> = []
    private var abandoned = false
    private var waiters: [CheckedContinuation<Bool, Never>] = []

    func mark(_ step: Step) {
        done.insert(step)
        if done.count == 2 { resumeAll(true) }
    }

    /// The daemon is stopping before it became ready.
    func abandon() {
        abandoned = true
        resumeAll(false)
    }

    /// True once ready; false if the daemon stopped first.
    func waitUntilReady() async -> Bool {
        if done.count == 2 { return true }
        if abandoned { return false }
        return await withCheckedContinuation { waiters.append($0) }
    }

    private func resumeAll(_ ready: Bool) {
        for waiter in waiters { waiter.resume(returning: ready) }
        waiters.removeAll()
    }
}
