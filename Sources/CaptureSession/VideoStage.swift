import Foundation
import Logging
import Video
import VideoCore

/// Something that takes a camera's H.264: a recording, a live client, an RTSP client. Called on
/// the video stage's thread, so it must hand slow work (disk writes) to a thread of its own.
public protocol VideoConsumer: AnyObject, Sendable {
    /// A stream starts: packets of `format` follow, the first a keyframe. Comes again when
    /// the encoder opens anew (another size after a configure, other encoder settings).
    func begin(_ format: VideoStreamFormat)
    func receive(_ packet: VideoPacket)
    /// The stream ended: the encoder was flushed, or the consumer was removed.
    func end()
    /// The stage cannot give this consumer video (its encoder did not open) and has let it
    /// go: it should end now, with `error` as the reason, rather than wait for packets.
    func failed(_ error: VideoError)
}

/// A camera's H.264 stage: one encoder thread, beside the JPEG encoders, that takes every
/// frame the camera captures while at least one consumer wants video, converts it with
/// camd's plane conversion (`VideoPicture`), encodes it once, and hands each packet to
/// every consumer. With no consumer the thread is gone and the capture thread does not
/// even copy frames for it: an idle camera encodes nothing.
final class VideoStage: @unchecked Sendable {  // all state is guarded by `lock`
    private let lock = NSLock()
    private let hub: FrameHub
    private let camera: String
    private let logger: Logger
    private var settings: VideoEncoderSettings
    /// The nominal frame rate the encoder is opened with (the device's); timestamps are the capture times.
    private var frameRate: Double = 30
    private var consumers: [UInt64: Joined] = [:]
    private var nextID: UInt64 = 0
    private var run: UInt64 = 0
    private var running = false
    private var keyframeWanted = false
    /// New settings came: the thread flushes its encoder and opens another at the next frame.
    private var reopenWanted = false
    private var counters = Counters()

    private struct Joined {
        let consumer: any VideoConsumer
        /// Whether `begin` was sent for the encoder that runs now.
        var begun = false
    }

    /// What status and metrics show of the stage.
    struct Counters: Sendable {
        var framesEncoded = 0
        var bytesEncoded = 0
        var keyframes = 0
        var keyframesRequested = 0
        var encodeSeconds = 0.0
        /// From a frame's capture to its packet: waiting for the thread, converting, encoding.
        var latency = EncodeHistogram()
        var encoder: String?
        var encoderNotUsed: [String] = []
        var error: String?
    }

    init(camera: String, hub: FrameHub, settings: VideoEncoderSettings, logger: Logger) {
        self.camera = camera
        self.hub = hub
        self.settings = settings
        self.logger = logger
    }

    var snapshot: (counters: Counters, consumers: Int, running: Bool) {
        lock.lock()
        defer { lock.unlock() }
        return (counters, consumers.count, running)
    }

    /// Adds a consumer; the first one starts the encoder thread. A consumer joining a
    /// running stream gets a keyframe at the next frame rather than at the next interval.
    func add(_ consumer: any VideoConsumer) -> UInt64 {
        lock.lock()
        nextID &+= 1
        let id = nextID
        consumers[id] = Joined(consumer: consumer)
        keyframeWanted = true
        let start = !running
        if start {
            running = true
            run &+= 1
        }
        let thisRun = run
        lock.unlock()
        if start { launch(run: thisRun) }
        return id
    }

    /// Asks for a keyframe at the next frame: a live client joined a running stream.
    func requestKeyframe() {
        lock.lock()
        keyframeWanted = true
        lock.unlock()
    }

    /// Removes a consumer (its `end` is called); the last one stops the encoder thread.
    func remove(_ id: UInt64) {
        lock.lock()
        let removed = consumers.removeValue(forKey: id)
        let stop = consumers.isEmpty && running
        if stop { running = false }
        let thisRun = run
        lock.unlock()
        if let removed, removed.begun { removed.consumer.end() }
        if stop { hub.stopVideo(run: thisRun) }
    }

    /// New encoder settings: a running encoder is flushed and opened again with them at the
    /// next frame; consumers see the stream end and a new one begin.
    func update(settings: VideoEncoderSettings) {
        lock.lock()
        if settings != self.settings { reopenWanted = true }
        self.settings = settings
        lock.unlock()
    }

    /// The camera stopped or lost its device: the files and streams of the consumers end
    /// now, not whenever the next frame comes, and begin again at the next keyframe.
    func interrupt() {
        lock.lock()
        reopenWanted = true
        lock.unlock()
        endStreams()
    }

    private func endStreams() {
        lock.lock()
        var ending: [any VideoConsumer] = []
        for (id, joined) in consumers where joined.begun {
            consumers[id]?.begun = false
            ending.append(joined.consumer)
        }
        lock.unlock()
        for consumer in ending { consumer.end() }
    }

    func setFrameRate(_ rate: Double?) {
        guard let rate, rate > 0 else { return }
        lock.lock()
        frameRate = rate
        lock.unlock()
    }

    private func launch(run: UInt64) {
        hub.startVideo(run: run)
        WorkerThread.start(name: "camd-h264-\(camera)", niceness: EncoderWorker.niceness) { [self] in encode(run: run) }
    }

    /// The encoder thread of one run.
    private func encode(run: UInt64) {
        var generation: UInt64 = 0
        var encoder: H264Encoder?
        var picture: VideoPicture?
        var layout: FrameLayout?
        while let (frame, newGeneration) = hub.nextVideoFrame(after: generation, run: run) {
            generation = newGeneration
            var opening = false
            do throws(VideoError) {
                if frame.layout != layout || encoder == nil || takeReopenRequest() {
                    if let encoder { deliver(try encoder.flush(), from: encoder, run: run) }
                    endAll(run: run)
                    encoder = nil
                    opening = true
                    (encoder, picture) = try open(for: frame.layout)
                    opening = false
                    layout = frame.layout
                }
                guard let encoder, let picture else { continue }
                if takeKeyframeRequest() { encoder.requestKeyframe() }
                let started = ContinuousClock.now
                try picture.fill(from: frame)
                let packets = try encoder.encode(picture, monotonicTime: frame.monotonicTime, captureTime: frame.captureTime)
                count(seconds: (ContinuousClock.now - started).inSeconds)
                deliver(packets, from: encoder, run: run)
            } catch {
                fail(error)
                if opening {
                    // No video can come: the consumers end with the reason; one joining later tries again.
                    failAll(error, run: run)
                    encoder = nil
                    layout = frame.layout
                } else if error.kind != .unsupportedFormat || encoder == nil {
                    // One broken MJPEG frame is skipped; another failure opens the encoder again.
                    encoder = nil
                    layout = frame.layout
                }
            }
        }
        if let encoder, let packets = try? encoder.flush() { deliver(packets, from: encoder, run: run) }
        endAll(run: run)
    }

    private func open(for layout: FrameLayout) throws(VideoError) -> (H264Encoder, VideoPicture) {
        lock.lock()
        let settings = self.settings, rate = frameRate
        lock.unlock()
        guard VideoPicture.accepts(layout.format) else {
            throw VideoError(.unsupportedFormat, "\(layout.format) frames cannot be encoded to H.264; choose YUYV, NV12, YU12 or MJPEG with `format`")
        }
        let range: ColorRange = layout.format.isJPEG ? .full : layout.range
        let encoder = try H264Encoder(settings: settings, size: layout.size, frameRate: rate, range: range)
        let picture = try VideoPicture(size: layout.size)
        lock.lock()
        counters.encoder = encoder.name
        counters.encoderNotUsed = encoder.notUsed
        counters.error = nil
        lock.unlock()
        let others = encoder.notUsed.isEmpty ? "" : " (not used: \(encoder.notUsed.joined(separator: "; ")))"
        logger.info("H.264 encoder \(encoder.name) for \(layout) at \(rate) fps\(others)")
        return (encoder, picture)
    }

    private func takeReopenRequest() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let wanted = reopenWanted
        reopenWanted = false
        return wanted
    }

    private func takeKeyframeRequest() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let wanted = keyframeWanted
        keyframeWanted = false
        if wanted { counters.keyframesRequested += 1 }
        return wanted
    }

    private func count(seconds: Double) {
        lock.lock()
        counters.framesEncoded += 1
        counters.encodeSeconds += seconds
        lock.unlock()
    }

    private func fail(_ error: VideoError) {
        lock.lock()
        let first = counters.error != error.description
        counters.error = error.description
        lock.unlock()
        if first { logger.error("H.264 stage: \(error.description)") }
    }

    /// Hands packets to every consumer; one that joined since the last keyframe starts at the
    /// next. A thread whose run is over (the last consumer left) delivers nothing.
    private func deliver(_ packets: [VideoPacket], from encoder: H264Encoder, run: UInt64) {
        for packet in packets {
            lock.lock()
            guard run == self.run && running else { return lock.unlock() }
            counters.bytesEncoded += packet.data.count
            if packet.isKeyframe { counters.keyframes += 1 }
            counters.latency.record(FrameHub.monotonicNow() - packet.monotonicTime)
            var starting: [any VideoConsumer] = []
            if packet.isKeyframe {
                for (id, joined) in consumers where !joined.begun {
                    consumers[id]?.begun = true
                    starting.append(joined.consumer)
                }
            }
            let receivers = consumers.values.filter(\.begun).map(\.consumer)
            lock.unlock()
            for consumer in starting { consumer.begin(encoder.format) }
            for consumer in receivers { consumer.receive(packet) }
        }
    }

    /// The encoder of run `run` could not open: every consumer is let go with `error` and the
    /// run ends, rather than keep recordings and clients waiting for packets that cannot come.
    private func failAll(_ error: VideoError, run: UInt64) {
        lock.lock()
        guard run == self.run && running else { return lock.unlock() }
        let failing = consumers.values.map(\.consumer)
        consumers.removeAll()
        running = false
        lock.unlock()
        hub.stopVideo(run: run)
        for consumer in failing { consumer.failed(error) }
    }

    /// Ends the stream for every consumer that had begun; they begin again at the next keyframe.
    private func endAll(run: UInt64) {
        lock.lock()
        let current = run == self.run && running
        lock.unlock()
        if current { endStreams() }
    }
}
