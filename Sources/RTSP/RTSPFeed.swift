import CaptureSession
internal import CGStreamer
import Foundation
import Logging
import Video

/// One RTSP client's stream of a camera: a consumer of the camera's H.264 (the one encode
/// every client, recording and live viewer shares) that pushes each packet into the appsrc
/// of that client's pipeline (`appsrc ! rtph264pay`).
///
/// Each client has a pipeline of its own, so each starts at a keyframe (the stage begins a
/// consumer at one, asked for when it joins) and a client that cannot keep up loses only
/// its own frames: past `maxQueuedBytes` waiting in its appsrc, packets are dropped up to
/// the next keyframe, which it asks for. Nothing here blocks the stage's thread.
final class RTSPFeed: VideoConsumer, @unchecked Sendable {  // mutable state is guarded by `lock`; appsrc's push is thread-safe
    private let lock = NSLock()
    private let session: CaptureSession
    private let logger: Logger
    private let maxQueuedBytes: Int
    /// The client's appsrc, referenced until the media is unprepared; nil after.
    private var source: UnsafeMutablePointer<GstAppSrc>?
    /// SPS and PPS as Annex B, sent before each keyframe that lacks them: rtph264pay reads the
    /// stream's parameter sets for the SDP, and a player joining needs them in band.
    private var parameterSets: [UInt8] = []
    /// Ticks a second of the packets' pts and dts.
    private var timeScale: Int64 = 90_000
    private var waitingForKeyframe = true
    /// What to add to a packet's capture time (CLOCK_MONOTONIC, ns) for its buffer time: the
    /// first packet goes at the pipeline's running time then, and the others as far after it
    /// as they were captured, so the RTP timestamps keep the camera's even spacing rather
    /// than the encoder's jitter.
    private var clockOffset: Int64?
    /// The last push was refused (the pipeline is not playing yet, or no more).
    private var refused = false
    private var consumerID: UInt64?
    private var closed = false
    private var counters = Counters()

    struct Counters: Sendable {
        var framesSent = 0
        var bytesSent = 0
        var framesDropped = 0

        mutating func add(_ other: Counters) {
            framesSent += other.framesSent
            bytesSent += other.bytesSent
            framesDropped += other.framesDropped
        }
    }

    /// Takes over a reference to `source`, which `close()` gives back.
    init(source: UnsafeMutablePointer<GstAppSrc>, session: CaptureSession, maxQueuedBytes: Int, logger: Logger) {
        self.source = source
        self.session = session
        self.maxQueuedBytes = maxQueuedBytes
        self.logger = logger
        // A backstop behind the drop-to-keyframe below: appsrc itself never holds more, nor blocks.
        gst_app_src_set_max_bytes(source, guint64(2 * maxQueuedBytes))
        gst_app_src_set_leaky_type(source, GST_APP_LEAKY_TYPE_UPSTREAM)
    }

    var snapshot: Counters {
        lock.lock()
        defer { lock.unlock() }
        return counters
    }

    /// Joins the camera's video stage; a camera that cannot start ends the client's stream.
    func join() {
        Task {
            do throws(SessionError) {
                let id = try await session.addVideoConsumer(self)
                let stillWanted = joined(as: id)
                if !stillWanted { await session.removeVideoConsumer(id) }  // the client left while this joined
            } catch {
                logger.error("RTSP client of \(session.id): \(error.description)")
                endOfStream()
            }
        }
    }

    /// Keeps the stage's id for this consumer; false when the client left while it joined.
    private func joined(as id: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if !closed { consumerID = id }
        return !closed
    }

    /// The client's media is gone: leave the stage and let the appsrc go.
    func close() {
        lock.lock()
        guard !closed else { return lock.unlock() }
        closed = true
        let id = consumerID
        let ending = source
        source = nil
        lock.unlock()
        if let ending { gst_object_unref(ending) }
        if let id {
            let session = self.session
            Task { await session.removeVideoConsumer(id) }
        }
    }

    private func endOfStream() {
        lock.lock()
        let ending = source.map { gst_object_ref($0); return $0 }
        lock.unlock()
        if let ending {
            _ = gst_app_src_end_of_stream(ending)
            gst_object_unref(ending)
        }
    }

    // MARK: VideoConsumer, on the stage's thread

    func begin(_ format: VideoStreamFormat) {
        let units = AnnexB.nalUnits(in: format.extradata).filter { [7, 8].contains(AnnexB.unitType(format.extradata, $0)) }
        var sets: [UInt8] = []
        for unit in units { sets += [0, 0, 0, 1] + format.extradata[unit] }
        lock.lock()
        parameterSets = sets
        timeScale = Int64(format.timeScale)
        waitingForKeyframe = true
        lock.unlock()
    }

    func receive(_ packet: VideoPacket) {
        lock.lock()
        guard let source else { return lock.unlock() }
        if !packet.isKeyframe && waitingForKeyframe {
            counters.framesDropped += 1
            return lock.unlock()
        }
        if gst_app_src_get_current_level_bytes(source) + guint64(packet.data.count) > guint64(maxQueuedBytes) {
            // The client fell behind: drop to the next keyframe rather than queue without end.
            let first = !waitingForKeyframe
            waitingForKeyframe = true
            counters.framesDropped += 1
            lock.unlock()
            if first { session.requestVideoKeyframe() }
            return
        }
        waitingForKeyframe = false
        let captured = Int64(packet.monotonicTime * 1e9)
        let offset = clockOffset ?? (Self.runningTime(of: source) - captured)
        clockOffset = offset
        let scale = max(timeScale, 1)
        let sets = packet.isKeyframe && !Self.hasParameterSets(packet.data) ? parameterSets : []
        gst_object_ref(source)
        lock.unlock()
        let buffer = Self.buffer(sets + packet.data, isKeyframe: packet.isKeyframe)
        // Decoding time before presentation time by the encoder's reordering (none without B-frames).
        let pts: Int64 = captured + offset
        let reordering: Int64 = (packet.pts - packet.dts) * 1_000_000_000 / scale
        buffer.pointee.pts = GstClockTime(max(pts, 0))
        buffer.pointee.dts = GstClockTime(max(pts - reordering, 0))
        let result = gst_app_src_push_buffer(source, buffer)  // takes the buffer
        gst_object_unref(source)
        pushed(packet, accepted: result == GST_FLOW_OK)
    }

    func end() {
        // The encoder stopped (the camera stopped or changes size): the client stays connected
        // and continues at the next `begin`, from a keyframe with its parameter sets.
        lock.lock()
        waitingForKeyframe = true
        lock.unlock()
    }

    func failed(_ error: VideoError) {
        // The stage let this feed go: the client's stream ends, and a player that connects again tries again.
        lock.lock()
        consumerID = nil
        lock.unlock()
        logger.error("RTSP client of \(session.id): \(error.description)")
        postError(error.description)
    }

    /// Fails the client's pipeline: an error on its bus ends a media still preparing at once
    /// (the client's DESCRIBE gets 503), where an end of stream would wait for a preroll.
    private func postError(_ text: String) {
        lock.lock()
        let failing = source.map { gst_object_ref($0); return $0 }
        lock.unlock()
        guard let failing else { return }
        let error = g_error_new_literal(gst_stream_error_quark(), gint(GST_STREAM_ERROR_FAILED.rawValue), text)
        let message = gst_message_new_error(GStreamer.cast(failing, to: GstObject.self), error, text)  // copies the GError
        g_error_free(error)
        _ = gst_element_post_message(GStreamer.cast(failing, to: GstElement.self), message)  // takes the message
        gst_object_unref(failing)
    }

    private func pushed(_ packet: VideoPacket, accepted: Bool) {
        lock.lock()
        let firstRefusal = !accepted && !refused
        refused = !accepted
        if accepted {
            counters.framesSent += 1
            counters.bytesSent += packet.data.count
        } else {
            // Nothing is decodable after a lost packet until the next keyframe.
            waitingForKeyframe = true
            counters.framesDropped += 1
        }
        lock.unlock()
        if firstRefusal { session.requestVideoKeyframe() }
    }

    /// The pipeline's running time now (clock time less base time), 0 before it plays.
    private static func runningTime(of source: UnsafeMutablePointer<GstAppSrc>) -> Int64 {
        let running = gst_element_get_current_running_time(GStreamer.cast(source, to: GstElement.self))
        return running == UInt64.max ? 0 : Int64(running)  // GST_CLOCK_TIME_NONE: not playing yet
    }

    private static func hasParameterSets(_ data: [UInt8]) -> Bool {
        AnnexB.nalUnits(in: data).contains { AnnexB.unitType(data, $0) == 7 }
    }

    /// A GstBuffer holding a copy of `bytes`, marked when it is not a keyframe.
    private static func buffer(_ bytes: [UInt8], isKeyframe: Bool) -> UnsafeMutablePointer<GstBuffer> {
        let buffer = bytes.withUnsafeBytes { gst_buffer_new_memdup($0.baseAddress, gsize($0.count)) }!
        if !isKeyframe { buffer.pointee.mini_object.flags |= GST_BUFFER_FLAG_DELTA_UNIT.rawValue }
        return buffer
    }
}
