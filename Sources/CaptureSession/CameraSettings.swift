import Foundation
import JPEG
import V4L2
import Video
import VideoCore

/// How one camera should run: what the config file's `[[camera]]` table and
/// `POST /v1/cameras/{id}/configure` describe. Separate from runtime state.
public struct CameraSettings: Sendable, Hashable {
    /// The camera's name in the API and in photo names: letters, digits, '-' and '_'.
    public var id: String
    /// A camera selector (see `DeviceDiscovery.resolve`); nil means the first camera.
    public var device: String?
    public var format: PixelFormat?
    public var size: FrameSize?
    public var fps: Double?
    public var quality: Int
    /// Controls set whenever the device is opened, by v4l2-ctl name.
    public var controls: [String: String]
    /// Start capturing when the daemon starts; otherwise only on demand.
    public var autostart: Bool
    /// After a snapshot started an idle camera, stop it again after this long without use.
    public var idleStopSeconds: Double
    public var photos: PhotoSettings
    /// What snapshots and saved photos look like when a request does not say (`[camera.image]`).
    public var image: ImageSettings
    /// The H.264 stage and the camera's recordings (`[camera.video]`).
    public var video: VideoSettings
    /// Where the camera stands, written into the GPS IFD of every saved photo (`location`); nil for none.
    public var location: EXIF.GPSPosition?
    /// Encoder threads for this camera's stream (`encoder_threads`): frames are encoded
    /// side by side when one encode takes longer than a frame interval.
    public var encoderThreads: Int
    /// Encode every frame even with nobody streaming (`encode_every_frame`), as µStreamer
    /// does: a snapshot is then answered from a JPEG already made, for the CPU of a
    /// constant encode. Off by default: an idle camera then costs almost nothing.
    public var encodeEveryFrame: Bool
    /// Programs run on the camera's events (`on_photo`, ...): see `HookSettings`.
    public var hooks = HookSettings()

    /// One encoder per core, so 1080p30 keeps up on a small board.
    public static let defaultEncoderThreads = min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8)
    public static let encoderThreadLimit = 16

    public init(id: String, device: String? = nil, format: PixelFormat? = nil, size: FrameSize? = nil, fps: Double? = nil,
                quality: Int = 85, controls: [String: String] = [:], autostart: Bool = true, idleStopSeconds: Double = 30,
                photos: PhotoSettings = PhotoSettings(), image: ImageSettings = ImageSettings(), video: VideoSettings = VideoSettings(),
                location: EXIF.GPSPosition? = nil,
                encoderThreads: Int = CameraSettings.defaultEncoderThreads, encodeEveryFrame: Bool = false) {
        self.id = id
        self.device = device
        self.format = format
        self.size = size
        self.fps = fps
        self.quality = quality
        self.controls = controls
        self.autostart = autostart
        self.idleStopSeconds = idleStopSeconds
        self.photos = photos
        self.image = image
        self.video = video
        self.location = location
        self.encoderThreads = encoderThreads
        self.encodeEveryFrame = encodeEveryFrame
    }

    /// What to ask the device for.
    public var request: CaptureRequest { CaptureRequest(format: format, size: size, fps: fps) }

    /// Whether `id` may name a camera: it appears in URLs and file names.
    public static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 64 && id.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F
        }
    }

    /// An id made from a stable device name: "usb-046d_HD_Pro_Webcam_C920_1234-video-index0" → "usb-046d_HD_Pro_Webcam_C920_1234".
    public static func id(fromStableName name: String) -> String {
        var base = String(name.split(separator: "/").last ?? Substring(name))
        let suffix = "-video-index0"
        if base.hasSuffix(suffix) { base.removeLast(suffix.count) }
        let cleaned = String(base.map { c in c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_") ? c : "_" }.prefix(64))
        return cleaned.isEmpty ? "camera" : cleaned
    }
}

/// What the photo output does for one camera: timelapse and retention.
public struct PhotoSettings: Sendable, Hashable {
    /// Save a photo every this many seconds while the camera runs; nil for none.
    public var intervalSeconds: Double?
    /// File name pattern: {camera}, {date} (YYYYMMDD), {time} (HHMMSS), {ms} (milliseconds), {seq} (6 digits).
    public var namePattern: String
    /// Keep at most this many photos of this camera (oldest deleted first).
    public var keepCount: Int?
    /// Keep at most this many bytes of this camera's photos.
    public var keepBytes: Int64?
    /// Delete this camera's photos older than this.
    public var keepSeconds: Double?

    public static let defaultPattern = "{camera}-{date}-{time}-{ms}-{seq}.jpg"

    public init(intervalSeconds: Double? = nil, namePattern: String = PhotoSettings.defaultPattern,
                keepCount: Int? = nil, keepBytes: Int64? = nil, keepSeconds: Double? = nil) {
        self.intervalSeconds = intervalSeconds
        self.namePattern = namePattern
        self.keepCount = keepCount
        self.keepBytes = keepBytes
        self.keepSeconds = keepSeconds
    }
}

/// What the video stage and the recordings do for one camera (`[camera.video]`).
public struct VideoSettings: Sendable, Hashable, RetentionLimits {
    /// Whether the camera records on its own.
    public enum RecordMode: String, Sendable, Hashable, CaseIterable {
        /// Only when asked (`POST /v1/cameras/{id}/recordings`).
        case off
        /// Always while the camera runs, in files of `segmentSeconds`.
        case continuous
    }

    /// The encoder, its rate and its keyframe interval.
    public var encoder: VideoEncoderSettings
    public var record: RecordMode
    /// The length of one file of a continuous recording; a file ends at the first keyframe after it.
    public var segmentSeconds: Double
    /// Retention of the camera's movies, counted apart from its photos.
    public var keepCount: Int?
    public var keepBytes: Int64?
    public var keepSeconds: Double?

    public static let defaultSegmentSeconds = 600.0

    public init(encoder: VideoEncoderSettings = VideoEncoderSettings(), record: RecordMode = .off,
                segmentSeconds: Double = VideoSettings.defaultSegmentSeconds,
                keepCount: Int? = nil, keepBytes: Int64? = nil, keepSeconds: Double? = nil) {
        self.encoder = encoder
        self.record = record
        self.segmentSeconds = segmentSeconds
        self.keepCount = keepCount
        self.keepBytes = keepBytes
        self.keepSeconds = keepSeconds
    }
}
