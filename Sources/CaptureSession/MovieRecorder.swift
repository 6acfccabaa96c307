import Foundation
import Logging
import Video

/// A recording could not start or stop, with what to do.
public enum RecordingError: Error, CustomStringConvertible, Sendable {
    /// The camera records already; stop that recording first.
    case alreadyRecording(String)
    /// Nothing is being recorded.
    case notRecording(String)
    /// The disk of the photo folder is full.
    case diskFull(String)
    /// The camera could not give frames.
    case session(SessionError)
    /// Writing the recording failed otherwise.
    case failed(String)

    public var description: String {
        switch self {
        case .alreadyRecording(let text), .notRecording(let text), .diskFull(let text), .failed(let text): return text
        case .session(let error): return error.description
        }
    }
}

/// What a camera's recorder is doing, for status and for the recordings API.
public struct RecordingStatus: Sendable, Codable, Hashable {
    public enum State: String, Sendable, Codable, Hashable {
        /// Not recording.
        case off
        /// Writing a file.
        case recording
        /// A continuous recording filled the disk; it goes on once there is room.
        case waitingForSpace = "waiting_for_space"
    }

    public var state: State
    /// `manual` (asked for through the API or camctl) or `continuous` (`video.record`).
    public var mode: String?
    /// When the recording started (seconds since 1970).
    public var started: Double?
    /// The length asked for, in seconds; nil to run until stopped.
    public var duration: Double?
    /// The files this recording has saved so far (a continuous one saves one per segment).
    public var saved: [PhotoRecord]
    /// Why the last recording stopped or paused early (a full disk), until the next one starts.
    public var error: String?

    public init(state: State = .off, mode: String? = nil, started: Double? = nil, duration: Double? = nil,
                saved: [PhotoRecord] = [], error: String? = nil) {
        self.state = state
        self.mode = mode
        self.started = started
        self.duration = duration
        self.saved = saved
        self.error = error
    }
}

/// Records a camera's H.264 into the media library: recordings asked for through the API
/// (`start`, `stop`) and continuous recording in segments (`follow`). One recording at a
/// time per camera. Files are written by a `RecordingSink` and given their names by
/// `PhotoOutput.adoptVideo`, which also applies the camera's `[camera.video]` retention.
public actor MovieRecorder {
    public nonisolated let camera: String
    private let session: CaptureSession
    private let output: PhotoOutput
    private let logger: Logger
    private var active: Active?
    private var current = RecordingStatus() {
        didSet { changed = true }
    }
    private var changed = false
    /// Why the last recording ended early; `stop` answers with it.
    private var failure: RecordingError?
    private var nextSinkID: UInt64 = 0
    /// A continuous recording that failed (an encoder that cannot open) starts again only
    /// after this, not at every `follow`, and logs a failure only when it differs.
    private var continuousRetry: ContinuousClock.Instant?
    private var continuousFailure: String?
    /// The sink `begin` is adding to the stage, and a failure it reported meanwhile: the stage
    /// can fail it (an encoder that cannot open) before `addVideoConsumer` returns.
    private var starting: UInt64?
    private var startFailure: VideoError?
    /// Messages from the sink's queue, handled in order by one task.
    private let messages: AsyncStream<Message>.Continuation

    /// Free bytes the disk must have for a recording to start: a few fragments' worth.
    public static let minimumFreeBytes: Int64 = 4 << 20
    /// How long a continuous recording that failed waits before it starts again.
    static let continuousRetrySeconds = 10

    private struct Active {
        var id: UInt64
        var sink: RecordingSink
        var consumer: UInt64
        var continuous: Bool
        /// Whether the sink is still one of the stage's consumers: one that stopped on its
        /// own leaves the stage before its file is named.
        var onStage = true
    }

    private enum Message: Sendable {
        case file(RecordingSink.FinishedFile)
        case event(UInt64, RecordingSink.Event)
        case barrier(CheckedContinuation<Void, Never>)
    }

    public init(session: CaptureSession, output: PhotoOutput, logger: Logger = Logger(label: "camd.recorder")) {
        camera = session.id
        self.session = session
        self.output = output
        var logger = logger
        logger[metadataKey: "camera"] = .string(session.id)
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: Message.self)
        messages = continuation
        Task { [weak self] in
            for await message in stream {
                guard let self else { return }
                await self.handle(message)
            }
        }
    }

    deinit { messages.finish() }

    public func status() -> RecordingStatus { current }

    /// Starts a recording, for `duration` seconds or until `stop`. A camera that is not
    /// running is started for it and kept running while it records.
    public func start(duration: Double? = nil) async throws(RecordingError) -> RecordingStatus {
        if let duration, !(duration > 0 && duration <= ValueSpelling.longestDuration) {
            throw .failed("duration must be above 0 seconds; got \(duration)")
        }
        guard active == nil else {
            throw .alreadyRecording("camera \(camera) is recording already (\(current.mode ?? "manual")); stop it first with POST /v1/cameras/\(camera)/recordings/stop")
        }
        try await begin(continuous: false, duration: duration)
        return current
    }

    /// Stops the recording and waits until its last file has its name.
    /// - Returns: the recording's files and why it stopped early, if it did.
    @discardableResult
    public func stop() async throws(RecordingError) -> RecordingStatus {
        if let active { await finish(active) }
        // A recording that ended on its own (its duration, a full disk) is reported as it ended.
        if let failure { throw failure }
        guard current.started != nil else {
            throw .notRecording("camera \(camera) is not recording; start one with POST /v1/cameras/\(camera)/recordings")
        }
        return current
    }

    /// Follows `video.record`: a continuous recording runs whenever the camera runs.
    /// Called by `ContinuousRecording`: every second while one is wanted, otherwise when the
    /// camera's settings or state change.
    func follow(settings: VideoSettings, cameraRunning: Bool) async {
        let wanted = Self.wantsContinuous(settings, cameraRunning: cameraRunning)
        if wanted, active == nil {
            if let retry = continuousRetry, ContinuousClock.now < retry { return }
            continuousRetry = nil
            do throws(RecordingError) {
                try await begin(continuous: true, duration: nil, segment: settings.segmentSeconds)
            } catch {
                if current.error != error.description { logger.error("continuous recording: \(error)") }
                current.error = error.description
                // On a full disk the continuous recording is on, waiting: it starts once there is room.
                if case .diskFull = error {
                    current.state = .waitingForSpace
                    current.mode = "continuous"
                }
                await publish()
            }
        } else if let active, active.continuous, !wanted {
            await finish(active)
        } else if !wanted, active == nil, current.state == .waitingForSpace {
            current.state = .off
            await publish()
        }
    }

    /// Whether a continuous recording should be running.
    static func wantsContinuous(_ settings: VideoSettings, cameraRunning: Bool) -> Bool {
        settings.record == .continuous && cameraRunning
    }

    private func begin(continuous: Bool, duration: Double?, segment: Double? = nil) async throws(RecordingError) {
        if let free = PhotoOutput.freeBytes(onDiskOf: output.root), free < Self.minimumFreeBytes {
            throw .diskFull("the disk of \(output.root) is full (\(free >> 10) KiB free; a recording needs \(Self.minimumFreeBytes >> 20) MiB): free some space or lower the retention limits")
        }
        let settings = await session.settings
        let plan = RecordingSink.Plan(camera: camera, root: output.root, transform: settings.image.displayTransform, duration: duration,
                                      segmentSeconds: continuous ? (segment ?? settings.video.segmentSeconds) : nil,
                                      minimumFreeBytes: Self.minimumFreeBytes)
        let messages = self.messages
        nextSinkID += 1
        let id = nextSinkID
        let sink = RecordingSink(plan: plan, finished: { messages.yield(.file($0)) }, event: { messages.yield(.event(id, $0)) })
        let consumer: UInt64
        starting = id
        startFailure = nil
        defer { starting = nil }
        do throws(SessionError) {
            consumer = try await session.addVideoConsumer(sink)
        } catch {
            throw .session(error)
        }
        if let error = startFailure {
            // It failed while it was being added: the stage has let it go already.
            startFailure = nil
            sink.stop {}
            let failed = recordFailure(error, continuous: continuous)
            await publish()
            throw failed
        }
        active = Active(id: id, sink: sink, consumer: consumer, continuous: continuous)
        failure = nil
        current = RecordingStatus(state: .recording, mode: continuous ? "continuous" : "manual",
                                  started: PhotoOutput.currentTime(), duration: duration)
        await publish()
        logger.info("recording started (\(continuous ? "continuous" : duration.map { "\($0) s" } ?? "until stopped"))")
    }

    /// Takes the sink off the stage, lets it finish its file, and waits for the file's name.
    /// A sink that stopped on its own (its duration, a failure) has handed its last file
    /// over already, ahead of the event that says so: then there is nothing to wait for,
    /// and waiting would wait on the very message being handled.
    private func finish(_ ending: Active, sinkStopped: Bool = false) async {
        guard active?.id == ending.id else { return }
        active = nil
        if ending.onStage { await session.removeVideoConsumer(ending.consumer) }
        if sinkStopped {
            ending.sink.stop {}
        } else {
            await withCheckedContinuation { continuation in
                ending.sink.stop { [messages] in messages.yield(.barrier(continuation)) }
            }
        }
        current.state = .off
        await publish()
        let names = current.saved.map(\.name).joined(separator: ", ")
        logger.info("recording stopped: \(names.isEmpty ? "no file saved" : names)")
    }

    /// Tells the session what changed, so its status shows it.
    private func publish() async {
        guard changed else { return }
        changed = false
        await session.noteRecording(current)
    }

    private func handle(_ message: Message) async {
        await apply(message)
        await publish()
    }

    private func apply(_ message: Message) async {
        switch message {
        case .file(let file):
            await adopt(file)
        case .barrier(let continuation):
            continuation.resume()
        case .event(let id, let event):
            if case .fileStarted(let name) = event {
                continuousFailure = nil
                output.events.publish(.recordingStarted(.init(camera: camera, name: name)))
                return
            }
            if case .failed(let error) = event, active == nil, id == starting {
                startFailure = error
                return
            }
            guard let active, active.id == id else { return }
            switch event {
            case .fileStarted:
                break
            case .stopping:
                // Finishing and naming its file (fsync, probing it) can take seconds on a slow
                // disk: the encoder stops now rather than encode for nobody meanwhile.
                self.active?.onStage = false
                await session.removeVideoConsumer(active.consumer)
            case .durationReached:
                await finish(active, sinkStopped: true)
            case .failed(let error):
                _ = recordFailure(error, continuous: active.continuous)
                await finish(active, sinkStopped: true)
            case .waitingForSpace(let error):
                current.state = .waitingForSpace
                current.error = describe(error)
                logger.error("continuous recording paused: \(current.error ?? "")")
            case .resumed:
                current.state = .recording
                logger.notice("continuous recording resumed: the disk has room again")
            }
        }
    }

    /// Notes why a recording stopped early, for its status and `stop`; a continuous one
    /// starts again after `continuousRetrySeconds`. Returns the error `stop` answers with.
    private func recordFailure(_ error: VideoError, continuous: Bool) -> RecordingError {
        let message = describe(error)
        current.error = message
        let failure: RecordingError = error.isDiskFull ? .diskFull(message) : .failed(message)
        self.failure = failure
        if continuous {
            continuousRetry = .now + .seconds(Self.continuousRetrySeconds)
            if continuousFailure != message { logger.error("continuous recording stopped, tried again every \(Self.continuousRetrySeconds) s: \(message)") }
            continuousFailure = message
        } else {
            logger.error("recording stopped: \(message)")
        }
        return failure
    }

    private func describe(_ error: VideoError) -> String {
        if error.isDiskFull {
            return "the disk of \(output.root) is full; the recording was saved up to its last whole second. Free some space or lower the retention limits"
        }
        return error.description
    }

    private func adopt(_ file: RecordingSink.FinishedFile) async {
        let settings = await session.settings
        do throws(PhotoError) {
            let record = try await output.adoptVideo(at: file.temporaryPath, camera: camera, name: file.name,
                                                     captureTime: file.startTime, retention: settings.video)
            current.saved.append(record)
            output.events.publish(.recordingFinished(.init(camera: camera, name: record.name,
                                                           durationSeconds: record.duration ?? 0, bytes: record.bytes)))
        } catch {
            if case .notFound = error { return }  // no whole fragment: nothing worth keeping
            logger.error("recording \(file.name) could not be named: \(error)")
            current.error = error.description
        }
    }
}

/// Runs each camera's continuous recording (`video.record = "continuous"`) for the
/// daemon's lifetime: it records whenever the camera runs. `CameraService` stops the
/// recorders on shutdown, so the last file is named before the camera stops.
public struct ContinuousRecording: Sendable {
    let session: CaptureSession
    let recorder: MovieRecorder

    public init(session: CaptureSession, recorder: MovieRecorder) {
        self.session = session
        self.recorder = recorder
    }

    /// While the recording is wanted and the camera runs, the recorder is asked every second
    /// (a recording that failed starts again after a while, one waiting for room once there is
    /// room); otherwise when the camera's settings or state change.
    public func run() async {
        // Followed before the settings are read, so a change made meanwhile is not missed.
        var changes = session.changes().makeAsyncIterator()
        while !Task.isCancelled {
            let settings = await session.settings.video
            let running = await session.state == .running
            await recorder.follow(settings: settings, cameraRunning: running)
            if MovieRecorder.wantsContinuous(settings, cameraRunning: running) {
                try? await Task.sleep(for: .seconds(1))
            } else {
                guard await changes.next() != nil else { return }
            }
        }
    }
}
