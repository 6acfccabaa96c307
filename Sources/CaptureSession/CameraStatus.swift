import VideoCore

/// Where a capture session is in its life.
public enum SessionState: String, Sendable, Codable {
    case idle
    case starting
    case running
    case stopping
    /// The device is gone or failing; the session reopens it when it is back.
    case waitingForDevice = "waiting-for-device"
    /// Stopped for a reason retrying will not fix; `reason` says which.
    case failed
}

/// A camera's state and counters, for status and metrics.
public struct CameraStatus: Sendable, Codable {
    public var id: String
    public var state: SessionState
    /// Why the session is waiting or failed.
    public var reason: String?
    /// The selector from the settings ("/dev/v4l/by-id/...", nil for the first camera).
    public var device: String?
    /// What is open now ("/dev/video0 (vivid)").
    public var source: String?
    public var card: String?
    public var format: String?
    public var size: String?
    public var requestedSize: String?
    public var requestedFPS: Double?
    /// The rate the device agreed to.
    public var configuredFPS: Double?
    /// The rate frames actually arrive at.
    public var measuredFPS: Double
    public var quality: Int
    public var framesCaptured: Int
    public var framesEncoded: Int
    /// Frames the device flagged broken, never delivered, or that failed to encode.
    public var framesDropped: Int
    /// Frames copied out of the driver's buffers: a frame is read where the camera wrote it
    /// while the driver keeps two buffers to fill, and copied when consumers (encoders, a
    /// render, the video stage) hold more. Rising steadily means the consumers are slow.
    public var framesCopied: Int = 0
    /// Device errors since the daemon started (disconnects, stream failures, stalls).
    public var errors: Int
    public var lastError: String?
    /// The kind of the last device error ("disconnected", "permission_denied", "device_policy"...).
    public var lastErrorKind: String?
    /// The last failure to save a photo (a full disk), cleared by the next save that works.
    public var photoError: String?
    public var streamClients: Int
    /// Started by a snapshot or stream request; stops again when unused.
    public var startedOnDemand: Bool
    /// Mean encode time over recent frames, milliseconds.
    public var encodeMilliseconds: Double?
    public var encoderThreads: Int
    /// The most memory this camera's frames can hold while running, from its configuration:
    /// the driver's buffers, plus the newest raw frame and one being encoded per encoder
    /// thread, plus each encoder's planes. Encoded JPEGs (a few per stream client, far
    /// smaller) are not counted. Nil while not running.
    public var frameMemoryBytes: Int?
    /// The H.264 stage and the camera's recording.
    public var video: VideoStatus = VideoStatus()
    /// How snapshots were answered, and the JPEGs made ahead of polls.
    public var snapshots: SnapshotStatus = SnapshotStatus()
    /// In a configure's answer only: what the change restarted.
    public var restart: ConfigureRestart? = nil

    /// The API's JSON is snake_case (`measured_fps`); these names are what a snake_case
    /// key decoder turns it into, and a snake_case encoder turns back, so the status
    /// makes the round trip between camd and its clients.
    enum CodingKeys: String, CodingKey {
        case id, state, reason, device, source, card, format, size, requestedSize
        case requestedFPS = "requestedFps", configuredFPS = "configuredFps", measuredFPS = "measuredFps"
        case quality, framesCaptured, framesEncoded, framesDropped, framesCopied, errors, lastError, lastErrorKind, photoError
        case streamClients, startedOnDemand, encodeMilliseconds, encoderThreads, frameMemoryBytes, video, snapshots, restart
    }

    /// `frameMemoryBytes` for a configuration: (buffers + 1 + encoders) frames + encoders × planes.
    public static func frameMemoryBound(frameBytes: Int, size: FrameSize, driverBuffers: Int, encoderThreads: Int) -> Int {
        let planes = size.area * 3  // 4:4:4 at most, the largest `YUVImage` an encoder keeps
        return (driverBuffers + 1 + encoderThreads) * frameBytes + encoderThreads * planes
    }
}

/// How a camera's snapshots were answered. Clients that poll at a steady period have the
/// JPEG of the newest frame made just before their next request is due (`SnapshotCadence`).
public struct SnapshotStatus: Sendable, Codable, Hashable {
    /// Snapshots answered at once from a JPEG already made (ahead of a poll, for a stream,
    /// or for another snapshot), without waiting for an encode.
    public var answeredReady = 0
    /// Of those, the ones the listener answered on its event loop (`CaptureSession.readySnapshot`),
    /// without a turn of the camera's actor: polls with the camera's own image settings.
    public var answeredOnEventLoop = 0
    /// Polls that waited on the listener's event loop for their JPEG and were given it there
    /// once it was made (`CaptureSession.waitForSnapshot`), without a task either: not counted
    /// in `answeredReady`.
    public var waitedOnEventLoop = 0
    /// JPEGs made just before a poll was due.
    public var madeAhead = 0
    /// JPEGs made ahead that no request took (the client stopped, or came too late).
    public var madeAheadUnused = 0
    /// The period snapshots come at, in seconds, while they come steadily.
    public var pollPeriod: Double?
    /// How long before such a poll is due its JPEG is started, in milliseconds: the encode it
    /// is given and how early the poll's requests come. A poll's frame is this much older, and
    /// up to a frame interval more, than a frame encoded as the request comes would be.
    public var leadMilliseconds: Double?

    public init() {}
}

/// A camera's H.264 stage: whether it runs (only while something wants video), which
/// encoder it chose and why not the others, and what it has encoded since camd started.
public struct VideoStatus: Sendable, Codable, Hashable {
    /// Whether the encoder thread runs: a recording or a live client wants video.
    public var running = false
    /// Recordings and live clients taking the H.264 now.
    public var consumers = 0
    /// The encoder in use or last used ("libx264"); nil before the first.
    public var encoder: String?
    /// Why each encoder tried before it was not used.
    public var encoderNotUsed: [String] = []
    public var framesEncoded = 0
    public var keyframes = 0
    /// Keyframes asked for when a consumer joined, rather than waited for.
    public var keyframesRequested = 0
    public var bytesEncoded = 0
    /// Mean time to convert and encode one frame, milliseconds.
    public var encodeMilliseconds: Double?
    /// The last failure of the stage (an encoder that would not open, a format it cannot take).
    public var error: String?
    /// The camera's recording.
    public var recording = RecordingStatus()
    /// The clients of the live H.264 (`GET /v1/cameras/{id}/video`).
    public var live = LiveVideoStatus()

    public init() {}
}

/// The live H.264's clients, and what all of them (those gone too) were sent.
public struct LiveVideoStatus: Sendable, Codable, Hashable {
    public var clients: [LiveClientStatus] = []
    public var framesSent = 0
    public var bytesSent = 0
    /// Times a client fell behind and lost its queued frames (it goes on from the next keyframe).
    public var drops = 0
    public var framesDropped = 0

    public init() {}
}

public struct LiveClientStatus: Sendable, Codable, Hashable {
    public var id: UInt64
    /// When the client connected, seconds since 1970.
    public var since: Double
    public var framesSent: Int
    public var bytesSent: Int
    public var drops: Int
    public var framesDropped: Int
}

/// What a change of a camera's settings restarts while it runs: only what must.
public enum ConfigureRestart: String, Sendable, Codable {
    /// The device is closed and opened again (device, format, size, fps, controls).
    case device
    /// The capture keeps running; new encoders take over from the next frame (quality,
    /// encoder threads, `encode_every_frame`, image defaults).
    case encoders
    /// The capture and the JPEG streams keep running; the H.264 encoder opens again with
    /// the new settings, and recordings go on into a new file (the `[camera.video]` encoder keys).
    case video
    /// Nothing restarts (photos, retention, `idle_stop`, `autostart`, location).
    case none

    /// What a change from `old` to `new` restarts: the most any changed setting's declaration says.
    public static func needed(from old: CameraSettings, to new: CameraSettings) -> ConfigureRestart {
        let changed = CameraSettings.keys.filter { $0.value(in: old) != $0.value(in: new) }
        for restart in [ConfigureRestart.device, .encoders, .video] where changed.contains(where: { $0.restart == restart }) {
            return restart
        }
        return .none
    }
}
