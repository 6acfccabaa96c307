import Foundation
import JPEG
import LibCamera
import Logging
import Synchronization
import V4L2
import Video
import VideoCore

/// One camera: configures, starts and stops it, and hands its frames out.
///
/// Device work runs on the session's capture thread (`CaptureWorker`) and
/// encoding on its pool of encoder threads; the actor only keeps state, so status and
/// other cameras answer at once while this camera is slow or gone.
public actor CaptureSession {
    public nonisolated let id: String
    public private(set) var settings: CameraSettings {
        didSet {
            refreshLoopView()
            announceChange()
        }
    }
    /// Every change is published to `events` as `camera_state`; set `reason` first, so it goes with it.
    public private(set) var state: SessionState = .idle {
        didSet {
            refreshLoopView()
            guard state != oldValue else { return }
            announceChange()
            events.publish(.cameraState(.init(camera: id, state: state, previous: oldValue, reason: reason)))
        }
    }
    private var reason: String?
    /// Where the camera's state changes go (the daemon's one log).
    public nonisolated let events: EventLog
    private let hub = FrameHub()
    /// The H.264 stage: runs only while a recording (or a live client) wants video.
    private let video: VideoStage
    private let live: LiveVideo
    private let hlsWindow: HLSWindow
    /// What the camera's `MovieRecorder` last reported, for status.
    private var recording = RecordingStatus()
    private let logger: Logger
    private var worker: CaptureWorker?
    private var source: String?
    /// The camera's own name (V4L2's card name) once it has run, for EXIF; nil before.
    public private(set) var card: String? {
        didSet { refreshLoopView() }
    }
    private var configuration: CaptureConfiguration? {
        didSet { refreshLoopView() }
    }
    private var errors = 0
    private var lastError: String?
    private var lastErrorKind: String?
    private var photoError: String?
    private var startedOnDemand = false
    private var lastUse = ContinuousClock.now
    /// Snapshots under way: while one waits for its camera to start or its frame to come,
    /// an on-demand camera is in use and the idle watch must not stop it.
    private var snapshotsInProgress = 0
    private var idleWatch: Task<Void, Never>?
    private var settleWaiters: [CheckedContinuation<Void, Never>] = []
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    private let openSource: CaptureWorker.Opener
    /// Configures take turns: each reads the settings the previous one left.
    private let configureTurn = TurnLock()
    /// A configure is restarting the device; requests for frames wait on `restartWaiters`.
    private var restarting = false {
        didSet { refreshLoopView() }
    }
    private var restartWaiters: [CheckedContinuation<Void, Never>] = []
    /// What a poll answered on the listener's event loop needs (`readySnapshot`), set by the
    /// actor as it changes; nil while the camera is not running or is restarting.
    private nonisolated let loopView = Mutex<LoopView?>(nil)
    /// Those following the camera's changes (`changes`), by a number of their own.
    private nonisolated let changeFollowers = Mutex<[Int: AsyncStream<Void>.Continuation]>([:])
    /// When `readySnapshot` last answered, for the idle watch (`lastUse` is the actor's).
    private nonisolated let loopUse = Mutex<ContinuousClock.Instant?>(nil)

    private struct LoopView: Sendable {
        var image: ImageSettings
        var tag: SnapshotTag
        /// The configured frame interval, seconds; nil for the measured rate's.
        var interval: Double?
    }

    /// Warm-up frames skipped when a snapshot had to start the camera.
    public static let warmUpFrames = 3

    public init(settings: CameraSettings, logger: Logger = Logger(label: "camd.camera"), events: EventLog = EventLog()) {
        self.init(settings: settings, logger: logger, events: events, openSource: CaptureWorker.openSource)
    }

    /// With `openSource`, tests stand in for `FrameSources.open` to make a device fail on cue.
    init(settings: CameraSettings, logger: Logger = Logger(label: "camd.camera"), events: EventLog = EventLog(),
         openSource: @escaping CaptureWorker.Opener) {
        self.openSource = openSource
        self.events = events
        self.id = settings.id
        self.settings = settings
        var logger = logger
        logger[metadataKey: "camera"] = .string(settings.id)
        self.logger = logger
        video = VideoStage(camera: settings.id, hub: hub, settings: settings.video.encoder, logger: logger)
        live = LiveVideo(stage: video, logger: logger)
        live.setTransform(settings.image.displayTransform)
        hlsWindow = HLSWindow(keyframeInterval: settings.video.encoder.keyframeInterval)
    }

    // MARK: life cycle

    /// Starts capturing; returns once the device is streaming, has failed, or is being
    /// waited for (at most `settleTimeout`). Starting a running camera does nothing.
    @discardableResult
    public func start(onDemand: Bool = false, settleTimeout: Duration = .seconds(10)) async -> CameraStatus {
        if worker != nil {
            if !onDemand { startedOnDemand = false }
            return status()
        }
        reason = nil
        state = .starting
        startedOnDemand = onDemand
        lastUse = .now
        let epoch = hub.reopen(encodeEveryFrame: settings.encodeEveryFrame)
        let (events, sink) = AsyncStream.makeStream(of: CaptureEvent.self)
        let worker = CaptureWorker(settings: settings, hub: hub, open: openSource) { sink.yield($0) }
        self.worker = worker
        startEncoders(epoch: epoch)
        worker.start()
        Task { [weak self] in
            for await event in events {
                await self?.handle(event, from: worker)
                if case .stopped = event { sink.finish() }
            }
        }
        if onDemand { watchIdle() }
        logger.info("starting \(settings.device ?? "the first camera")")
        await waitUntilSettled(timeout: settleTimeout)
        return status()
    }

    /// Stops capturing and releases the device; returns once it is closed, so
    /// another program can open it right away.
    @discardableResult
    public func stop() async -> CameraStatus {
        guard let worker else { return status() }
        state = .stopping
        idleWatch?.cancel()
        idleWatch = nil
        worker.requestStop()
        hub.close()
        video.interrupt()
        live.endClients()
        await withCheckedContinuation { stopWaiters.append($0) }
        return status()
    }

    /// Replaces the settings; a running camera restarts with them (stream clients stay connected).
    public func configure(_ new: CameraSettings) async throws(SessionError) -> CameraStatus {
        await configureTurn.acquire()
        defer { configureTurn.release() }
        return try await apply(new)
    }

    /// Changes the settings in one step: `change` gets the settings as they are when this
    /// configure's turn comes (configures run one after another, so two concurrent ones
    /// both take effect) and returns the new ones, or throws to change nothing.
    ///
    /// Only what must restart does: a new device, format, size, rate or controls restart
    /// the device; quality, encoder threads, `encode_every_frame` and image defaults start
    /// new encoders on the running capture; photos, retention, `idle_stop` and the rest
    /// apply at once. `restart` in the answer says which happened. A snapshot or stream
    /// asked for during a restart waits for it.
    ///
    /// A new device or format is checked first, and refused with nothing changed when
    /// the device is not a V4L2 camera or does not offer the format. What only a restart
    /// can show (a control the driver refuses, say) puts the previous settings back and
    /// throws, so a bad configure never leaves a working camera failed.
    public func configure(_ change: sending (CameraSettings) throws -> CameraSettings) async throws -> CameraStatus {
        await configureTurn.acquire()
        defer { configureTurn.release() }
        let new = try change(settings)
        return try await apply(new)
    }

    private func apply(_ new: CameraSettings) async throws(SessionError) -> CameraStatus {
        guard new.id == id else { throw .invalidSettings("a camera's id cannot change (\(id) → \(new.id))") }
        if new.device != settings.device || new.format != settings.format {
            try await checkDevice(of: new)
        }
        let previous = settings
        let restart = ConfigureRestart.needed(from: previous, to: new)
        settings = new
        video.update(settings: new.video.encoder)
        live.setTransform(new.image.displayTransform)
        hlsWindow.setKeyframeInterval(new.video.encoder.keyframeInterval)
        guard worker != nil, restart != .none else { return status(restart: worker == nil ? ConfigureRestart.none : restart) }
        if restart == .encoders {
            logger.info("new encoders: \(describe(new))")
            startEncoders(epoch: hub.renewEncoders(encodeEveryFrame: new.encodeEveryFrame))
            return status(restart: .encoders)
        }
        let onDemand = startedOnDemand
        logger.info("reconfiguring: \(describe(new))")
        await restartKeepingStreams(onDemand: onDemand)
        guard state == .failed else { return status(restart: .device) }

        let failure = reason ?? "the camera failed"
        logger.warning("the new settings failed (\(failure)); restarting with the previous ones")
        settings = previous
        await restartKeepingStreams(onDemand: onDemand)
        let restored = status()
        throw .invalidSettings("the camera cannot run with these settings: \(failure). It was restarted with its previous settings"
                               + (restored.state == .running ? "." : " and is \(restored.state.rawValue)."))
    }

    /// Refuses a device that is not there, is not a V4L2 camera (a regular file, /dev/null, a
    /// link to either) or does not offer the format. A device that is there but cannot be
    /// looked at now (busy, no permission) is not refused: the session waits for it as it
    /// would at start. A camera that is not plugged in yet is named in camd.toml, where camd
    /// waits for it; through configure, where someone is waiting for the answer, a name that
    /// matches nothing is far likelier a typo.
    private func checkDevice(of new: CameraSettings) async throws(SessionError) {
        typealias Offer = (source: String, formats: [PixelFormat])
        let selector = new.device
        let outcome: Result<Offer, DeviceError>?
        if selector == settings.device, selector != FrameSources.syntheticName, state == .running, let worker {
            // The camera has this device open: ask on its capture thread instead of opening it twice.
            outcome = await withCheckedContinuation { continuation in
                worker.perform { source in
                    guard let camera = source as? V4L2Source else { return continuation.resume(returning: nil) }
                    continuation.resume(returning: Self.capture { () throws(DeviceError) -> Offer in
                        (camera.name, try camera.device.formats().map(\.format))
                    })
                }
            }
        } else {
            outcome = await BlockingIO.run { () -> Result<Offer, DeviceError> in
                Self.capture { () throws(DeviceError) -> Offer in try FrameSources.offeredFormats(selector) }
            }
        }
        switch outcome {
        case .failure(let error) where error.kind == .notACamera || error.kind == .unsupported:
            throw .invalidSettings("device \"\(selector ?? "")\" is not a camera camd can use: \(error.message)")
        case .failure(let error) where error.kind == .noSuchDevice:
            throw .invalidSettings("device \"\(selector ?? "the first camera")\" is not there: \(error.message). Plug it in or choose one `camctl devices` lists; "
                                   + "to wait for a camera that is not plugged in yet, name it in camd.toml")
        case .success(let offer):
            if let format = new.format, !offer.formats.contains(format) {
                let list = offer.formats.isEmpty ? "no capture formats" : offer.formats.map(\.description).joined(separator: ", ")
                throw .invalidSettings("format \(format) is not offered by \(offer.source); it offers \(list)")
            }
        case .failure, .none:
            return
        }
    }

    /// The encoder threads for the hub's run `epoch`; they end when it moves on.
    private func startEncoders(epoch: UInt64) {
        for index in 0..<max(1, settings.encoderThreads) {
            EncoderWorker(id: id, index: index, hub: hub, quality: settings.quality, epoch: epoch, image: settings.image,
                          snapshotTag: { [weak self] in self?.loopSnapshotTag }).start()
        }
    }

    /// Stops the capture thread if there is one (a failed one may still be winding down or
    /// retrying: start() would take it for a running camera) and starts a new one. Requests
    /// for frames that come meanwhile wait for it (`ensureRunning`): a planned restart is
    /// not a lost device.
    private func restartKeepingStreams(onDemand: Bool) async {
        restarting = true
        defer {
            restarting = false
            let waiting = restartWaiters
            restartWaiters.removeAll()
            for continuation in waiting { continuation.resume() }
        }
        if let worker {
            state = .stopping
            worker.requestStop()
            await withCheckedContinuation { stopWaiters.append($0) }
        }
        await start(onDemand: onDemand)
    }

    // MARK: frames

    /// The newest frame as JPEG, captured no longer than `maxAge` seconds before the
    /// request (default: `FrameHub.defaultSnapshotAge`; 0: captured after the request). A camera
    /// that is not running is started for it, and stopped again after it idles.
    public func snapshot(maxAge: Double? = nil, timeout: Duration? = nil) async throws(SessionError) -> EncodedFrame {
        lastUse = .now
        snapshotsInProgress += 1
        defer {
            snapshotsInProgress -= 1
            lastUse = .now
        }
        try await ensureRunning()
        let interval = frameInterval
        let age = maxAge ?? hub.defaultSnapshotAge(interval: interval)
        // Generous: it returns as soon as a frame arrives, and a slow machine may need it.
        let wait = timeout ?? .milliseconds(Int64(max(10, 10 * interval) * 1000))
        do {
            return try await hub.frame(notBefore: Self.monotonicNow() - age, timeout: wait, poll: true)
        } catch let error as SessionError {
            throw error
        } catch {
            throw .shuttingDown
        }
    }

    /// A snapshot answered at once on the caller's thread: what `renderedSnapshot(settings.image,
    /// maxAge:)` answers without waiting, from the JPEG made ahead of a poll (or for a stream),
    /// tagged with EXIF; the poll is learned as that one learns it. For the listener's event
    /// loop, which must not wait: it takes no turn of the actor. Nil when the answer would wait
    /// or render (the camera is not running or is restarting, its image settings change the
    /// frame, no JPEG is new enough): `renderedSnapshot` answers then.
    public nonisolated func readySnapshot(maxAge: Double? = nil) -> RenderedSnapshot? {
        readyTaggedSnapshot(maxAge: maxAge)?.snapshot
    }

    /// `readySnapshot`, and whether its EXIF was written on the encoder thread (a JPEG made
    /// ahead of the poll, tagged with what the camera says still) rather than here.
    nonisolated func readyTaggedSnapshot(maxAge: Double?) -> (snapshot: RenderedSnapshot, taggedAhead: Bool)? {
        guard let view = loopView.withLock({ $0 }), view.image.isIdentity,
              let frame = hub.readyFrame(maxAge: maxAge, interval: view.interval) else { return nil }
        loopUse.withLock { $0 = .now }
        return Self.tagged(frame, view)
    }

    /// A frame as captured, as a snapshot with the EXIF `view` says; whether its EXIF was
    /// written on the encoder thread (see `readyTaggedSnapshot`).
    private static func tagged(_ frame: EncodedFrame, _ view: LoopView) -> (snapshot: RenderedSnapshot, taggedAhead: Bool) {
        let ahead = frame.snapshot.flatMap { $0.tag == view.tag ? $0.jpeg : nil }
        let jpeg = ahead ?? view.tag.tagged(frame.jpeg, size: frame.size, captureTime: frame.captureTime)
        return (RenderedSnapshot(jpeg: jpeg, size: frame.size, frameSize: frame.size, sequence: frame.sequence,
                                 captureTime: frame.captureTime, fromRawFrame: false), ahead != nil)
    }

    /// What `waitForSnapshot` found.
    public enum LoopSnapshot: Sendable {
        /// A JPEG new enough was made meanwhile: the snapshot, at once.
        case ready(RenderedSnapshot)
        /// The poll waits for its JPEG; the wait is cancelled with `cancel`.
        case waiting(SnapshotWait)
        /// Not one the loop can wait for (the camera is not running or is restarting, its
        /// image settings change the frame): `renderedSnapshot` answers it.
        case unavailable
    }

    /// A poll's wait on the listener's event loop (`waitForSnapshot`).
    public struct SnapshotWait: Sendable {
        fileprivate let hub: FrameHub
        fileprivate let id: UInt64
        /// How long to wait before cancelling and letting the router answer (it waits as long
        /// as it waits for any snapshot, and answers a camera that sends nothing with its error).
        public let patience: Duration

        /// Ends the wait: its `done` is called with nil, if it was not called already.
        public func cancel() {
            hub.cancelWaiter(id, with: CancellationError())
        }
    }

    /// For a poll `readySnapshot` found no JPEG for, on the listener's event loop, which must
    /// not wait: the encoders are asked for one as `renderedSnapshot(settings.image, maxAge:)`
    /// asks them, and `done` is called with the snapshot once it is made (on the encoder's
    /// thread), or with nil when the wait ends otherwise (the camera stopped, was lost, or its
    /// image settings changed meanwhile; `SnapshotWait.cancel`): `renderedSnapshot` answers
    /// then. Saves a poll that waits for its encode the router's task and its turns of the
    /// actor: the JPEG made ahead of a poll that comes a little early, and the first few of a
    /// new poll, whose period is not learned yet (issue 16).
    public nonisolated func waitForSnapshot(maxAge: Double? = nil,
                                            done: @escaping @Sendable (RenderedSnapshot?) -> Void) -> LoopSnapshot {
        guard let view = loopView.withLock({ $0 }), view.image.isIdentity else { return .unavailable }
        loopUse.withLock { $0 = .now }
        let found = hub.waitForFrame(maxAge: maxAge, interval: view.interval) { [self] result in
            // The settings may have changed while the JPEG was made: the router renders with the new ones.
            guard case .success(let frame) = result, let now = self.loopView.withLock({ $0 }), now.image.isIdentity else {
                return done(nil)
            }
            self.loopUse.withLock { $0 = .now }
            self.hub.countWaitedOnLoop()
            done(Self.tagged(frame, now).snapshot)
        }
        switch found {
        case .ready(let frame): return .ready(Self.tagged(frame, view).snapshot)
        case .wait(let id): return .waiting(SnapshotWait(hub: hub, id: id, patience: Self.loopPatience(interval: hub.frameInterval(configured: view.interval))))
        case .closed: return .unavailable
        }
    }

    /// How long a poll waits on the loop before the router has it (`SnapshotWait.patience`):
    /// longer than an encode takes even in the emulated VM, and five frames of a slow camera.
    static func loopPatience(interval: Double) -> Duration {
        .milliseconds(Int64(max(2, 5 * interval) * 1000))
    }

    /// What the EXIF of a snapshot answered on the event loop says, for the encoders to tag
    /// the JPEGs they make ahead of a poll with; nil while none is answered there.
    private nonisolated var loopSnapshotTag: SnapshotTag? {
        loopView.withLock { view in view.flatMap { $0.image.isIdentity ? $0.tag : nil } }
    }

    private func refreshLoopView() {
        var view: LoopView?
        if state == .running, !restarting {
            view = LoopView(image: settings.image, tag: SnapshotTag(card: card, location: settings.location), interval: configuredInterval)
        }
        loopView.withLock { $0 = view }
    }

    /// The newest raw frame, captured no longer than `maxAge` seconds before the request,
    /// for an image rendered from the camera's own planes; nil when the camera sends
    /// JPEG or a format `PlaneConversion` cannot read (those render from `snapshot`).
    /// Asks the encoders for nothing.
    public func rawSnapshot(maxAge: Double? = nil, timeout: Duration? = nil) async throws(SessionError) -> Frame? {
        lastUse = .now
        snapshotsInProgress += 1
        defer {
            snapshotsInProgress -= 1
            lastUse = .now
        }
        try await ensureRunning()
        guard let layout = configuration?.layout, !layout.format.isJPEG, PlaneConversion.requiredBytes(layout) != nil else { return nil }
        let interval = frameInterval
        let wait = timeout ?? .milliseconds(Int64(max(10, 10 * interval) * 1000))
        do {
            return try await hub.rawFrame(notBefore: Self.monotonicNow() - (maxAge ?? interval), timeout: wait)
        } catch let error as SessionError {
            throw error
        } catch {
            throw .shuttingDown
        }
    }

    /// A live feed of encoded frames for one client; ends when the camera is stopped.
    public func subscribe() async throws(SessionError) -> AsyncStream<EncodedFrame> {
        lastUse = .now
        try await ensureRunning()
        return hub.subscribe()
    }

    /// FFmpeg's libraries, loaded by the first request for video (camd does not map them before:
    /// issue 16); a machine without them refuses it at once, saying what to install. Loaded on
    /// `BlockingIO`: mapping them and the libraries they need (over a hundred) may take seconds
    /// from a cold SD card, which on the actor held this camera's turn and a thread of Swift's tasks.
    private static func videoLibraries() async throws(SessionError) {
        if videoLibrariesLoaded.load(ordering: .acquiring) { return }
        let failure = await BlockingIO.run { () -> String? in
            do throws(VideoError) { try FFmpegLibraries.load() } catch { return error.description }
            return nil
        }
        if let failure { throw .unavailable(failure) }
        videoLibrariesLoaded.store(true, ordering: .releasing)
    }

    private static let videoLibrariesLoaded = Atomic(false)

    /// Adds a consumer of the camera's H.264 (a recording, an RTSP client); the camera is
    /// started for it if it is not running, and kept running while the consumer stays. Its
    /// stream begins at a keyframe asked for now. Returns the id to remove it with.
    public func addVideoConsumer(_ consumer: any VideoConsumer) async throws(SessionError) -> UInt64 {
        lastUse = .now
        try await Self.videoLibraries()
        try await ensureRunning()
        video.setFrameRate(configuration?.interval?.fps ?? settings.fps)
        return video.add(consumer)
    }

    /// A client of the camera's live H.264; the camera is started for it if it is not
    /// running, and kept running while the client stays. Its stream starts at a keyframe
    /// asked for now.
    public func liveVideo() async throws(SessionError) -> LiveVideoClient {
        lastUse = .now
        try await Self.videoLibraries()
        try await ensureRunning()
        video.setFrameRate(configuration?.interval?.fps ?? settings.fps)
        return live.join()
    }

    /// The camera's HLS: a window of the live stream's recent parts and segments, fed
    /// while players keep asking for it (every request counts).
    public func hls() async throws(SessionError) -> HLSWindow {
        if !hlsWindow.isFed {
            hlsWindow.feed(from: try await liveVideo())
        } else {
            lastUse = .now
        }
        return hlsWindow
    }

    /// Removes a consumer (its `end` is called); the last one stops the encoder.
    public func removeVideoConsumer(_ id: UInt64) {
        video.remove(id)
        lastUse = .now
    }

    /// Asks the encoder for a keyframe at the next frame: a consumer that dropped packets
    /// (its client fell behind) can start again from it.
    public nonisolated func requestVideoKeyframe() {
        video.requestKeyframe()
    }

    /// Whether a snapshot or stream asked for now would be served, without starting the
    /// camera or waiting for a frame: throws what `snapshot()` would throw at once (a
    /// failed or lost device, a stopping camera). For `HEAD`, which must not capture.
    public func checkServable() throws(SessionError) {
        if restarting { return }
        switch state {
        case .failed: throw .failed(reason ?? "the camera failed")
        case .waitingForDevice: throw .waitingForDevice(reason ?? "waiting for the device")
        case .stopping: throw .shuttingDown
        case .running, .idle, .starting: return
        }
    }

    private func ensureRunning() async throws(SessionError) {
        // A configure is restarting the camera: wait for it rather than answer "stopping".
        while restarting { await withCheckedContinuation { restartWaiters.append($0) } }
        switch state {
        case .failed: throw .failed(reason ?? "the camera failed")
        case .waitingForDevice: throw .waitingForDevice(reason ?? "waiting for the device")
        case .stopping: throw .shuttingDown
        case .running: return
        case .idle, .starting:
            let wasIdle = worker == nil
            _ = await start(onDemand: wasIdle)
            switch state {
            case .running:
                if wasIdle { try await skipWarmUp() }
            case .failed: throw .failed(reason ?? "the camera failed")
            case .waitingForDevice: throw .waitingForDevice(reason ?? "waiting for the device")
            default: throw .timeout("the camera did not start in time")
            }
        }
    }

    /// Frames right after STREAMON are often dark or half-exposed: let a few go by.
    private func skipWarmUp() async throws(SessionError) {
        var notBefore = Self.monotonicNow()
        for _ in 0..<Self.warmUpFrames {
            do {
                // Raw frames: skipping needs no JPEG.
                let frame = try await hub.rawFrame(notBefore: notBefore, timeout: .seconds(max(10, 10 * frameInterval)))
                notBefore = frame.monotonicTime + 0.000_001
            } catch let error as SessionError {
                throw error
            } catch {
                throw .shuttingDown
            }
        }
    }

    private var frameInterval: Double { hub.frameInterval(configured: configuredInterval) }

    /// The frame interval the device was given, seconds; nil when it gave none (`frameInterval`
    /// then takes the measured rate's).
    private var configuredInterval: Double? {
        (configuration?.interval?.seconds).flatMap { $0 > 0 ? $0 : nil }
    }

    // MARK: controls

    /// The camera's controls, read on the capture thread when running or from a briefly opened device.
    public func controls() async throws(SessionError) -> [DeviceControl] {
        try await onDevice { (device) throws(DeviceError) in try device.controls() }
    }

    /// Sets controls; they are also kept in the settings so they survive a reconnect.
    public func setControls(_ assignments: [(name: String, value: String)]) async throws(SessionError) -> [DeviceControl] {
        let changed = try await onDevice { (device) throws(DeviceError) in try device.setControls(assignments) }
        for control in changed where control.kind != .button {
            settings.controls[control.name] = control.real?.value.map { String($0) } ?? control.value.map(String.init)
                ?? settings.controls[control.name]
        }
        return changed
    }

    private func onDevice<T: Sendable>(_ work: @escaping @Sendable (any ControllableCamera) throws(DeviceError) -> T) async throws(SessionError) -> T {
        let outcome: Result<T, DeviceError>
        if state == .running, let worker, settings.device != FrameSources.syntheticName {
            outcome = await withCheckedContinuation { continuation in
                worker.perform { source in
                    guard let source else {
                        continuation.resume(returning: .failure(DeviceError(.disconnected, path: self.id,
                                                                            "camera \(self.id) has no device open right now")))
                        return
                    }
                    let camera: any ControllableCamera
                    switch source {
                    case let v4l2 as V4L2Source: camera = v4l2.device
                    case let libcamera as LibCameraSource: camera = libcamera
                    default:
                        continuation.resume(returning: .failure(DeviceError(.unsupported, path: source.name, "\(source.name) has no controls")))
                        return
                    }
                    continuation.resume(returning: Self.capture { () throws(DeviceError) in try work(camera) })
                }
            }
        } else if settings.device == FrameSources.syntheticName {
            throw .invalidSettings("the synthetic test source has no controls")
        } else {
            let selector = settings.device
            let kept = settings.controls.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
            outcome = await BlockingIO.run { () -> Result<T, DeviceError> in
                Self.capture { () throws(DeviceError) in
                    // A libcamera camera not running is acquired for the while: what is set
                    // is checked and kept in the settings, and applied when it starts.
                    if LibCameraLibrary.isSelector(selector), let selector {
                        return try work(IdleLibCamera(try LibCameraDevice(selector: selector), kept: kept))
                    }
                    return try work(try VideoDevice(path: try DeviceDiscovery.resolve(selector)))
                }
            }
        }
        switch outcome {
        case .success(let value): return value
        case .failure(let error) where error.kind == .invalidArgument: throw .invalidSettings(error.message)
        case .failure(let error) where error.kind == .disconnected || error.kind == .noSuchDevice: throw .waitingForDevice(error.message)
        case .failure(let error): throw .failed(error.message)
        }
    }

    private static func capture<T>(_ body: () throws(DeviceError) -> T) -> Result<T, DeviceError> {
        do { return .success(try body()) } catch { return .failure(error) }
    }

    /// Records the outcome of a photo save, so status shows a full disk until saving works again.
    public func recordPhotoSave(error: String?) {
        if let error, error != photoError { logger.error("photo not saved: \(error)") }
        photoError = error
    }

    // MARK: status

    public func status() -> CameraStatus { status(restart: nil) }

    /// The status; `restart` says what the configure that asked for it restarted.
    private func status(restart: ConfigureRestart?) -> CameraStatus {
        let counters = hub.snapshot
        let encode = counters.meanEncodeSeconds.map { $0 * 1000 }
        var status = CameraStatus(
            id: id, state: state, reason: reason, device: settings.device, source: source, card: card,
            format: configuration?.layout.format.description, size: configuration?.layout.size.description,
            requestedSize: settings.size?.description, requestedFPS: settings.fps,
            configuredFPS: configuration?.interval?.fps, measuredFPS: (counters.measuredFPS * 10).rounded() / 10,
            quality: settings.quality, framesCaptured: counters.framesCaptured, framesEncoded: counters.framesEncoded,
            framesDropped: counters.brokenFrames + counters.deviceDrops, errors: errors, lastError: lastError, lastErrorKind: lastErrorKind, photoError: photoError,
            streamClients: hub.subscriberCount, startedOnDemand: startedOnDemand, encodeMilliseconds: encode,
            encoderThreads: settings.encoderThreads,
            frameMemoryBytes: configuration.map { configuration in
                CameraStatus.frameMemoryBound(frameBytes: configuration.bufferSize, size: configuration.layout.size,
                                              driverBuffers: source?.hasPrefix(FrameSources.syntheticName) == true ? 0 : CaptureStream.defaultBufferCount,
                                              encoderThreads: settings.encoderThreads)
            },
            video: videoStatus(), restart: restart)
        status.framesCopied = counters.framesCopied
        status.snapshots.answeredReady = counters.snapshotsReady
        status.snapshots.answeredOnEventLoop = counters.snapshotsOnLoop
        status.snapshots.waitedOnEventLoop = counters.snapshotsWaitedOnLoop
        status.snapshots.madeAhead = counters.encodesAhead
        status.snapshots.madeAheadUnused = counters.encodesAheadUnused
        status.snapshots.pollPeriod = counters.pollPeriod.map { ($0 * 1000).rounded() / 1000 }
        status.snapshots.leadMilliseconds = counters.pollLead.map { ($0 * 10_000).rounded() / 10 }
        return status
    }

    private func videoStatus() -> VideoStatus {
        let stage = video.snapshot
        var status = VideoStatus()
        status.running = stage.running
        status.consumers = stage.consumers
        status.encoder = stage.counters.encoder
        status.encoderNotUsed = stage.counters.encoderNotUsed
        status.framesEncoded = stage.counters.framesEncoded
        status.keyframes = stage.counters.keyframes
        status.keyframesRequested = stage.counters.keyframesRequested
        status.bytesEncoded = stage.counters.bytesEncoded
        status.encodeMilliseconds = stage.counters.framesEncoded > 0
            ? (stage.counters.encodeSeconds / Double(stage.counters.framesEncoded) * 10_000).rounded() / 10 : nil
        status.error = stage.counters.error
        status.recording = recording
        status.live = live.status
        return status
    }

    /// The recorder's news, shown in status.
    func noteRecording(_ status: RecordingStatus) {
        recording = status
    }

    /// Encode times since the daemon started.
    public func encodeHistogram() -> EncodeHistogram { hub.snapshot.encodeHistogram }

    /// Times from capture to H.264 packet since the daemon started.
    public func videoLatencyHistogram() -> EncodeHistogram { video.snapshot.counters.latency }

    // MARK: events from the capture thread

    private func handle(_ event: CaptureEvent, from sender: CaptureWorker) {
        guard sender === worker else { return }
        switch event {
        case .running(let name, let cardName, let configuration):
            self.reason = nil
            // The card and configuration first: a poll answered on the event loop once the
            // state says running takes them (`readySnapshot`).
            self.source = name
            self.card = cardName
            self.configuration = configuration
            self.state = sender.isStopping ? .stopping : .running
            logger.info("streaming \(name): \(configuration.layout)\(configuration.interval.map { " at \($0)" } ?? "")")
            video.setFrameRate(configuration.interval?.fps ?? settings.fps)
            settle()
        case .lost(let error, let retryIn):
            guard !sender.isStopping else { break }
            record(error, state: .waitingForDevice)
            video.interrupt()
            logger.warning("\(error.message); retrying in \(retryIn) s")
            settle()
        case .failed(let error):
            record(error, state: .failed)
            logger.error("\(error.message)")
            hub.deviceLost(.failed(error.message))
            worker = nil
            settle()
            finishStop()
        case .stopped:
            worker = nil
            if state != .failed { state = .idle }
            source = nil
            configuration = nil
            logger.info("stopped; device released")
            settle()
            finishStop()
        }
    }

    private func record(_ error: DeviceError, state: SessionState) {
        errors += 1
        lastError = error.message
        lastErrorKind = error.kind.rawValue
        reason = error.message
        self.state = state
    }

    private func settle() {
        let waiting = settleWaiters
        settleWaiters.removeAll()
        for continuation in waiting { continuation.resume() }
    }

    private func finishStop() {
        let waiting = stopWaiters
        stopWaiters.removeAll()
        for continuation in waiting { continuation.resume() }
    }

    private func waitUntilSettled(timeout: Duration) async {
        guard state == .starting else { return }
        let timer = Task { [weak self] in
            // Cancelled when the camera settled first: then it must not settle again, or it
            // would wake the next start's waiters early (a rollback returned still starting).
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            await self?.settle()
        }
        await withCheckedContinuation { settleWaiters.append($0) }
        timer.cancel()
    }

    /// Stops a camera that a request started, once nobody has used it for `idleStopSeconds`.
    /// It sleeps until the camera would have been idle long enough, and looks again then: a
    /// camera polled every few seconds wakes it once an `idleStopSeconds`, not every second.
    private func watchIdle() {
        idleWatch?.cancel()
        idleWatch = Task { [weak self] in
            while !Task.isCancelled {
                guard let wait = await self?.untilIdleLongEnough() else { return }
                if wait <= .zero {
                    await self?.stop()
                    return
                }
                try? await Task.sleep(for: wait)
            }
        }
    }

    /// How long until the camera has been idle for `idleStopSeconds`, zero once it has. A
    /// second while it is in use (a stream client, a recording, a snapshot still waiting for a
    /// slow start or its frame, here or on the listener's event loop), or while it is not a
    /// camera a request started: use is looked at again then, and counts until then.
    private func untilIdleLongEnough() -> Duration {
        guard startedOnDemand, worker != nil else { return .seconds(1) }
        if hub.subscriberCount > 0 || snapshotsInProgress > 0 || hub.waiterCount > 0 || video.snapshot.consumers > 0 {
            lastUse = .now
            return .seconds(1)
        }
        if let answered = loopUse.withLock({ $0 }), answered > lastUse { lastUse = answered }
        let idle = ContinuousClock.now - lastUse, limit = Duration.seconds(settings.idleStopSeconds)
        // Stopped once idle for longer than the limit: a wake-up that comes exactly on it looks again a moment later.
        return idle > limit ? .zero : max(limit - idle, .milliseconds(1))
    }

    /// The camera's settings or state changed: its followers (`changes`) wake.
    private func announceChange() {
        changeFollowers.withLock { followers in
            for follower in followers.values { follower.yield() }
        }
    }

    /// An element each time the camera's settings or state change, for work that follows
    /// them (the timelapse, the continuous recording) to wait for rather than look every
    /// second. Changes made while the follower is busy come as one element.
    public nonisolated func changes() -> AsyncStream<Void> {
        let (stream, follower) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = changeFollowers.withLock { followers in
            let id = (followers.keys.max() ?? 0) + 1
            followers[id] = follower
            return id
        }
        follower.onTermination = { [weak self] _ in _ = self?.changeFollowers.withLock { $0.removeValue(forKey: id) } }
        return stream
    }

    private func describe(_ s: CameraSettings) -> String {
        [s.format.map { "\($0)" }, s.size.map { "\($0)" }, s.fps.map { "\($0) fps" }, "quality \(s.quality)"]
            .compactMap { $0 }.joined(separator: ", ")
    }

    /// CLOCK_MONOTONIC in seconds, the clock of the driver's frame timestamps.
    static func monotonicNow() -> Double { FrameHub.monotonicNow() }
}
