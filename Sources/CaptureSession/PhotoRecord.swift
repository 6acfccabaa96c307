import JPEG
import SystemPackage
import Video
#if canImport(Glibc)
import Glibc
#endif

/// What a file in the media library holds.
public enum MediaKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A JPEG photo (`.jpg`).
    case photo
    /// An H.264 movie in MP4 (`.mp4`): a recording or a timelapse movie.
    case video

    /// The file name ending of this kind.
    public var fileExtension: String { self == .photo ? ".jpg" : ".mp4" }

    /// The kind a file name's ending says, or nil for any other file.
    public init?(fileName: String) {
        guard let kind = Self.allCases.first(where: { fileName.hasSuffix($0.fileExtension) }) else { return nil }
        self = kind
    }
}

/// One saved photo or movie, as the media list shows it and as retention counts it.
public struct PhotoRecord: Sendable, Hashable, Codable {
    /// The file name, e.g. "front-20240501-120000-123-000042.jpg"; unique across all cameras.
    public var name: String
    /// The camera id, which is also the name of the folder the file is in.
    public var camera: String
    /// The file's size.
    public var bytes: Int
    /// When the frame was captured, in seconds since 1970 (UTC). For a file found
    /// on disk at start-up this is the file's modification time, which `PhotoOutput`
    /// sets to the capture time when it saves.
    public var captureTime: Double
    /// The image size; nil for a file found on disk whose JPEG header could not be read.
    public var width: Int?
    public var height: Int?
    /// The frame's sequence number from the driver; nil for files found on disk at start-up.
    public var sequence: UInt32?
    /// A photo or a movie.
    public var kind: MediaKind
    /// A movie's length in seconds; nil for photos.
    public var duration: Double?
    /// Clockwise degrees a movie's track says to turn it for display (its camera's `rotate`); nil for photos.
    public var rotate: Int?

    /// Describes a saved photo; `PhotoOutput` makes these, tests and API clients may too.
    public init(name: String, camera: String, bytes: Int, captureTime: Double,
                width: Int?, height: Int?, sequence: UInt32?, kind: MediaKind = .photo, duration: Double? = nil,
                rotate: Int? = nil) {
        self.name = name
        self.camera = camera
        self.bytes = bytes
        self.captureTime = captureTime
        self.width = width
        self.height = height
        self.sequence = sequence
        self.kind = kind
        self.duration = duration
        self.rotate = rotate
    }
}

extension PhotoRecord {
    private enum CodingKeys: String, CodingKey {
        case name, camera, bytes, captureTime, width, height, sequence, kind, duration, rotate
    }

    /// Reads a record; one without `kind` (from a camd before movies) is a photo.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try c.decode(String.self, forKey: .name), camera: try c.decode(String.self, forKey: .camera),
                  bytes: try c.decode(Int.self, forKey: .bytes), captureTime: try c.decode(Double.self, forKey: .captureTime),
                  width: try c.decodeIfPresent(Int.self, forKey: .width), height: try c.decodeIfPresent(Int.self, forKey: .height),
                  sequence: try c.decodeIfPresent(UInt32.self, forKey: .sequence),
                  kind: try c.decodeIfPresent(MediaKind.self, forKey: .kind) ?? .photo,
                  duration: try c.decodeIfPresent(Double.self, forKey: .duration),
                  rotate: try c.decodeIfPresent(Int.self, forKey: .rotate))
    }

    /// Describes a photo or movie a previous run left on disk: the time from the file's
    /// modification time (set to the capture time, or a movie's start, when saved), the
    /// size from the JPEG frame header or the movie's track if it can be read.
    init(foundAt path: String, name: String, camera: String, status: stat) {
        let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
        if MediaKind(fileName: name) == .video {
            let info = try? VideoFile(path: path).info
            self.init(name: name, camera: camera, bytes: Int(status.st_size), captureTime: modified,
                      width: info?.displaySize.width, height: info?.displaySize.height, sequence: nil, kind: .video,
                      duration: info?.duration, rotate: info?.rotate)
            return
        }
        let size = Self.jpegDimensions(atPath: path)
        self.init(name: name, camera: camera, bytes: Int(status.st_size), captureTime: modified,
                  width: size?.width, height: size?.height, sequence: nil)
    }

    /// Reads the width and height from a JPEG's frame header (SOFn) with the JPEG module's
    /// segment reader: the first 16 KiB covers the usual file; a header that runs past it
    /// (large EXIF or ICC segments) is read again longer, up to 1 MiB. Nil if it is not a JPEG.
    static func jpegDimensions(atPath path: String) -> (width: Int, height: Int)? {
        // O_NOFOLLOW: a file that turned into a symbolic link is not read through.
        guard let file = try? FileDescriptor.open(path, .readOnly, options: [.noFollow, .closeOnExec],
                                                  retryOnInterrupt: true) else { return nil }
        defer { try? file.close() }
        var length = 16_384
        while true {
            var head = [UInt8](repeating: 0, count: length)
            let got = (try? head.withUnsafeMutableBytes {
                try file.read(fromAbsoluteOffset: 0, into: $0, retryOnInterrupt: true)
            }) ?? 0
            head.removeLast(length - got)
            switch JPEGSegments.dimensions(in: head) {
            case .success(let size): return (size.width, size.height)
            case .failure(.truncated) where got == length && length < 1 << 20: length *= 4
            case .failure: return nil
            }
        }
    }
}
