internal import CGStreamer

/// GStreamer's process-wide set-up and the casts between its GObject types, which C
/// spells as macros (`GST_BIN (element)`) and Swift as pointer conversions.
enum GStreamer {
    /// `gst_init` once, before the first pipeline; it finds the plugins (appsrc, rtph264pay).
    /// GStreamer's libraries are loaded here, not when camd starts (CGStreamer/lazy.c; issue 16).
    static func initialize() throws(RTSPError) {
        if let failed = CGStreamer_load() {
            throw RTSPError("GStreamer's libraries could not be loaded (\(String(cString: failed))); RTSP needs them: "
                + "install libgstrtspserver-1.0-0 and gstreamer1.0-plugins-good (scripts/install-deps)")
        }
        guard initialized else {
            throw RTSPError("GStreamer could not start (gst_init_check failed); install gstreamer1.0-plugins-base and gstreamer1.0-plugins-good (scripts/install-deps)")
        }
        for element in ["appsrc", "rtph264pay"] where gst_element_factory_find(element) == nil {
            throw RTSPError("GStreamer has no \(element) element; install gstreamer1.0-plugins-base and gstreamer1.0-plugins-good (scripts/install-deps)")
        }
    }

    private static let initialized: Bool = {
        var error: UnsafeMutablePointer<GError>?
        defer { if error != nil { g_error_free(error) } }
        return gst_init_check(nil, nil, &error) != 0
    }()

    /// One GObject type seen as another (a `GstRTSPAuth` as the `GObject` it starts with).
    static func cast<From, To>(_ pointer: UnsafeMutablePointer<From>, to: To.Type = To.self) -> UnsafeMutablePointer<To> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: To.self)
    }

    /// A GError's message, freed.
    static func message(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "unknown error" }
        defer { g_error_free(error) }
        return error.pointee.message.map { String(cString: $0) } ?? "unknown error"
    }

    /// `g_signal_connect_data` with an object kept alive for as long as the handler stays:
    /// the handler gets it back as its last argument (`Unmanaged<Target>.fromOpaque`).
    static func connect<Instance, Target: AnyObject>(_ instance: UnsafeMutablePointer<Instance>, _ signal: String,
                                                     _ handler: GCallback, to target: Target) {
        let data = Unmanaged.passRetained(target).toOpaque()
        g_signal_connect_data(instance, signal, handler, data, { data, _ in
            if let data { Unmanaged<AnyObject>.fromOpaque(data).release() }
        }, GConnectFlags(rawValue: 0))
    }
}
