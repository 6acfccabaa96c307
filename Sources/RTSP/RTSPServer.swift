import CaptureSession
internal import CGStreamer
import Foundation
import Logging

/// camd's RTSP server: GStreamer's (gst-rtsp-server) on a GLib main loop of its own thread,
/// each camera at `rtsp://host:port/<camera-id>`, fed with the H.264 camd already encodes
/// (no second encode), over RTP on TCP (interleaved) or UDP as the client asks.
///
/// With a token, clients must send Basic authentication with the token as the password
/// (`RTSPTokenAuth`); without one, anyone who reaches the port may watch, so the daemon
/// allows that on loopback only.
public final class RTSPServer: @unchecked Sendable {  // GLib objects are touched by start/stop (serialized by `lock`) and the loop thread
    /// Where to listen, and who may watch.
    public struct Configuration: Sendable {
        public var host: String
        /// 0 for any free port (tests); `port` tells which after `start()`.
        public var port: Int
        /// The password RTSP clients must send (Basic, any user); nil for no authentication.
        public var token: String?
        /// A second password that is also accepted (`tcp_view_token`: RTSP only lets clients watch).
        public var viewToken: String?

        public init(host: String, port: Int, token: String?, viewToken: String? = nil) {
            self.host = host
            self.port = port
            self.token = token
            self.viewToken = viewToken
        }
    }

    /// What status and metrics show of one camera's RTSP clients.
    public struct CameraCounters: Sendable, Equatable {
        public var clients = 0
        public var framesSent = 0
        public var bytesSent = 0
        public var framesDropped = 0
    }

    /// Where it listens and the passwords it takes, as given.
    public let configuration: Configuration
    private let mounts: [RTSPMount]
    private let logger: Logger
    private let lock = NSLock()
    private var server: UnsafeMutablePointer<GstRTSPServer>?
    private var context: OpaquePointer?
    private var loop: OpaquePointer?
    private var loopEnded: DispatchSemaphore?
    private var boundPort = 0

    public init(configuration: Configuration, cameras: [CaptureSession], logger: Logger = Logger(label: "camd.rtsp")) {
        self.configuration = configuration
        self.logger = logger
        self.mounts = cameras.map { RTSPMount(session: $0, logger: logger) }
    }

    deinit { stop() }

    /// The port the server listens on, once started.
    public var port: Int {
        lock.lock()
        defer { lock.unlock() }
        return boundPort
    }

    /// `rtsp://host:port/<camera-id>` of each camera, once started.
    public var urls: [String] { urls(port: port) }

    private func urls(port: Int) -> [String] {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return mounts.map { "rtsp://\(host):\(port)\($0.path)" }
    }

    /// Each camera's clients and what they were sent, by camera id.
    public var counters: [String: CameraCounters] {
        Dictionary(uniqueKeysWithValues: mounts.map { mount in
            let totals = mount.totals
            return (mount.session.id, CameraCounters(clients: mount.clients, framesSent: totals.framesSent,
                                                     bytesSent: totals.bytesSent, framesDropped: totals.framesDropped))
        })
    }

    /// Binds the port and starts serving on a thread of its own.
    public func start() throws(RTSPError) {
        lock.lock()
        defer { lock.unlock() }
        guard server == nil else { return }
        try GStreamer.initialize()
        let server = gst_rtsp_server_new()!
        let context = g_main_context_new()
        gst_rtsp_server_set_address(server, configuration.host)
        gst_rtsp_server_set_service(server, String(configuration.port))
        if let token = configuration.token {
            let auth = RTSPTokenAuth.make(passwords: [token] + (configuration.viewToken.map { [$0] } ?? []))
            gst_rtsp_server_set_auth(server, auth)
            g_object_unref(auth)
        }
        let points = gst_rtsp_server_get_mount_points(server)!
        for mount in mounts {
            gst_rtsp_mount_points_add_factory(points, mount.path, mount.makeFactory(role: configuration.token.map { _ in RTSPTokenAuth.role }))
        }
        g_object_unref(points)

        var error: UnsafeMutablePointer<GError>?
        guard let source = gst_rtsp_server_create_source(server, nil, &error) else {
            g_object_unref(server)
            g_main_context_unref(context)
            throw RTSPError("RTSP cannot listen on \(configuration.host):\(configuration.port): \(GStreamer.message(error)); "
                + "choose another address or port with rtsp under [daemon], or stop the program that uses it")
        }
        g_source_attach(source, context)
        g_source_unref(source)
        // Sessions of clients that vanished without TEARDOWN (UDP) end when their timeout passes.
        let cleanup = g_timeout_source_new_seconds(2)!
        g_source_set_callback(cleanup, { data in
            guard let data else { return 0 }
            let server = data.assumingMemoryBound(to: GstRTSPServer.self)
            if let pool = gst_rtsp_server_get_session_pool(server) {
                _ = gst_rtsp_session_pool_cleanup(pool)
                g_object_unref(pool)
            }
            return 1
        }, server, nil)
        g_source_attach(cleanup, context)
        g_source_unref(cleanup)

        let loop = g_main_loop_new(context, 0)
        let ended = DispatchSemaphore(value: 0)
        let running = MainLoop(context: context, loop: loop)
        let thread = Thread {
            g_main_context_push_thread_default(running.context)
            g_main_loop_run(running.loop)
            g_main_context_pop_thread_default(running.context)
            ended.signal()
        }
        thread.name = "camd-rtsp"
        thread.start()
        self.server = server
        self.context = context
        self.loop = loop
        self.loopEnded = ended
        boundPort = Int(gst_rtsp_server_get_bound_port(server))
        logger.notice("RTSP on \(urls(port: boundPort).joined(separator: ", "))\(configuration.token == nil ? "" : " (Basic authentication with tcp_token\(configuration.viewToken == nil ? "" : " or tcp_view_token") as the password)")")
    }

    /// Disconnects every client (their media are unprepared, so the cameras' stages lose
    /// them) and stops the loop; returns once its thread is done, or after `timeout`.
    public func stop(timeout: Duration = .seconds(2)) {
        lock.lock()
        defer { lock.unlock() }
        guard let server, let context, let loop, let loopEnded else { return }
        // On the loop's own thread: clients are GLib sources of its context.
        let closeAll: GSourceFunc = { data in
            guard let data else { return 0 }
            let server = data.assumingMemoryBound(to: GstRTSPServer.self)
            let remaining = gst_rtsp_server_client_filter(server, { _, _, _ in GST_RTSP_FILTER_REMOVE }, nil)
            g_list_free_full(remaining, { g_object_unref($0) })
            return 0
        }
        g_main_context_invoke(context, closeAll, server)
        let quit: GSourceFunc = { data in
            if let data { g_main_loop_quit(OpaquePointer(data)) }
            return 0
        }
        g_main_context_invoke(context, quit, UnsafeMutableRawPointer(loop))
        let milliseconds = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        if loopEnded.wait(timeout: .now() + .milliseconds(milliseconds)) == .timedOut {
            logger.warning("RTSP: the server's loop did not end within \(timeout); leaving it")
            return
        }
        g_object_unref(server)
        g_main_loop_unref(loop)
        g_main_context_unref(context)
        self.server = nil
        self.context = nil
        self.loop = nil
        self.loopEnded = nil
        boundPort = 0
    }
}

/// The loop's context and loop, handed to its thread.
private struct MainLoop: @unchecked Sendable {  // GLib's main contexts and loops may be used from any thread
    let context: OpaquePointer?
    let loop: OpaquePointer?
}
