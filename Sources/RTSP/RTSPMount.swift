import CaptureSession
internal import CGStreamer
import Foundation
import Logging

/// A camera at `rtsp://host:port/<camera-id>`: a media factory whose pipeline is camd's own
/// H.264 through GStreamer's RTP payloader, one pipeline per client, each fed by an
/// `RTSPFeed` joined to the camera's video stage while the client's media lives.
final class RTSPMount: @unchecked Sendable {  // `feeds` is guarded by `lock`; the rest is set once
    /// appsrc takes whole access units of Annex B with SPS and PPS before each keyframe
    /// (`RTSPFeed` puts them there), so rtph264pay needs no parser (h264parse is in
    /// plugins-bad) and must not add its own copy (`config-interval` 0): two in one access
    /// unit make ffmpeg's parser see two frames. Buffers carry their capture times.
    static let launch = "( appsrc name=camsrc is-live=true format=time "
        + "caps=video/x-h264,stream-format=byte-stream,alignment=au ! rtph264pay name=pay0 pt=96 config-interval=0 )"
    /// What one client may have waiting in its appsrc before it drops to the next keyframe.
    static let maxQueuedBytes = 4 << 20

    let session: CaptureSession
    let path: String
    private let logger: Logger
    private let lock = NSLock()
    /// The feed of each client's media, by the media's address.
    private var feeds: [UInt: RTSPFeed] = [:]
    private var departed = RTSPFeed.Counters()

    init(session: CaptureSession, logger: Logger) {
        self.session = session
        self.path = "/" + session.id
        self.logger = logger
    }

    /// The factory to mount at `path`, its pipelines fed by this mount.
    func makeFactory(role: String?) -> UnsafeMutablePointer<GstRTSPMediaFactory> {
        let factory = gst_rtsp_media_factory_new()!
        gst_rtsp_media_factory_set_launch(factory, Self.launch)
        gst_rtsp_media_factory_set_shared(factory, 0)
        if let role {
            // The token's role may open (access) and start (construct) this camera's media.
            let permissions = gst_structure_from_string("\(role), media.factory.access=(boolean)true, media.factory.construct=(boolean)true", nil)!
            gst_rtsp_media_factory_add_role_from_structure(factory, permissions)
            gst_structure_free(permissions)
        }
        let configure: @convention(c) (UnsafeMutablePointer<GstRTSPMediaFactory>?, UnsafeMutablePointer<GstRTSPMedia>?, gpointer?) -> Void = { _, media, data in
            guard let media, let data else { return }
            Unmanaged<RTSPMount>.fromOpaque(data).takeUnretainedValue().configure(media)
        }
        GStreamer.connect(factory, "media-configure", unsafeBitCast(configure, to: GCallback.self), to: self)
        return factory
    }

    /// Clients watching now.
    var clients: Int {
        lock.lock()
        defer { lock.unlock() }
        return feeds.count
    }

    /// What every client was sent and lost, departed ones included.
    var totals: RTSPFeed.Counters {
        lock.lock()
        defer { lock.unlock() }
        var totals = departed
        for feed in feeds.values { totals.add(feed.snapshot) }
        return totals
    }

    /// A client's pipeline is made: feed its appsrc from the camera until it is unprepared.
    private func configure(_ media: UnsafeMutablePointer<GstRTSPMedia>) {
        guard let element = gst_rtsp_media_get_element(media) else { return }
        defer { gst_object_unref(element) }
        guard let found = gst_bin_get_by_name_recurse_up(GStreamer.cast(element, to: GstBin.self), "camsrc") else {
            return logger.error("RTSP: the pipeline of \(path) has no appsrc named camsrc")
        }
        let feed = RTSPFeed(source: GStreamer.cast(found, to: GstAppSrc.self), session: session,
                            maxQueuedBytes: Self.maxQueuedBytes, logger: logger)
        lock.lock()
        feeds[UInt(bitPattern: media)] = feed
        lock.unlock()
        let unprepared: @convention(c) (UnsafeMutablePointer<GstRTSPMedia>?, gpointer?) -> Void = { media, data in
            guard let media, let data else { return }
            Unmanaged<RTSPMount>.fromOpaque(data).takeUnretainedValue().remove(media)
        }
        GStreamer.connect(media, "unprepared", unsafeBitCast(unprepared, to: GCallback.self), to: self)
        // A media finalized without being unprepared must not keep the camera encoding.
        g_object_weak_ref(GStreamer.cast(media, to: GObject.self), { data, media in
            guard let data, let media else { return }
            let mount = Unmanaged<RTSPMount>.fromOpaque(data)
            mount.takeUnretainedValue().remove(GStreamer.cast(media, to: GstRTSPMedia.self))
            mount.release()
        }, Unmanaged.passRetained(self).toOpaque())
        logger.info("RTSP client of \(path)")
        feed.join()
    }

    /// A client's media is unprepared (it left, or timed out): its feed leaves the camera.
    private func remove(_ media: UnsafeMutablePointer<GstRTSPMedia>) {
        lock.lock()
        let feed = feeds.removeValue(forKey: UInt(bitPattern: media))
        if let counters = feed?.snapshot { departed.add(counters) }
        lock.unlock()
        feed?.close()
    }
}
