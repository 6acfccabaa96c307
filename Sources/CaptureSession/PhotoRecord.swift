import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// One saved photo, as the photo list shows it and as retention counts it.
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

    /// Describes a saved photo; `PhotoOutput` makes these, tests and API clients may too.
    public init(name: String, camera: String, bytes: Int, captureTime: Double,
                width: Int?, height: Int?, sequence: UInt32?) {
        self.name = name
        self.camera = camera
        self.bytes = bytes
        self.captureTime = captureTime
        self.width = width
        self.height = height
        self.sequence = sequence
    }
}

extension PhotoRecord {
    /// Describes a photo a previous run left on disk: the time from the file's
    /// modification time, the size from the JPEG frame header if it can be read.
    init(foundAt path: String, name: String, camera: String, status: stat) {
        let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
        let size = Self.jpegDimensions(atPath: path)
        self.init(name: name, camera: camera, bytes: Int(status.st_size), captureTime: modified,
                  width: size?.width, height: size?.height, sequence: nil)
    }

    /// Reads the width and height from a JPEG's frame header (SOFn) by walking the
    /// segments before it: one read of the first 16 KiB covers the usual file, and
    /// a large EXIF block costs a few more small reads. Nil if it is not a JPEG.
    static func jpegDimensions(atPath path: String) -> (width: Int, height: Int)? {
        // O_NOFOLLOW: a file that turned into a symbolic link is not read through.
        guard let file = try? FileDescriptor.open(path, .readOnly, options: [.noFollow, .closeOnExec],
                                                  retryOnInterrupt: true) else { return nil }
        defer { try? file.close() }

        func read(_ count: Int, at offset: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            let got = (try? bytes.withUnsafeMutableBytes {
                try file.read(fromAbsoluteOffset: Int64(offset), into: $0, retryOnInterrupt: true)
            }) ?? 0
            return Array(bytes.prefix(got))
        }
        let head = read(16_384, at: 0)
        func bytes(_ count: Int, at offset: Int) -> [UInt8]? {
            if offset + count <= head.count { return Array(head[offset..<offset + count]) }
            let more = read(count, at: offset)
            return more.count == count ? more : nil
        }

        guard bytes(2, at: 0) == [0xFF, 0xD8] else { return nil }
        var offset = 2
        for _ in 0..<512 {
            guard let segment = bytes(4, at: offset), segment[0] == 0xFF else { return nil }
            let marker = segment[1]
            if marker == 0xFF { offset += 1; continue }  // fill byte
            if marker == 0x01 || (0xD0...0xD8).contains(marker) { offset += 2; continue }  // no length
            if marker == 0xDA || marker == 0xD9 { return nil }  // the scan came first: no frame header
            let length = Int(segment[2]) << 8 | Int(segment[3])
            guard length >= 2 else { return nil }
            if (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
                // SOFn: precision (1 byte), height (2), width (2).
                guard length >= 7, let frame = bytes(5, at: offset + 4) else { return nil }
                let height = Int(frame[1]) << 8 | Int(frame[2])
                let width = Int(frame[3]) << 8 | Int(frame[4])
                return width > 0 && height > 0 ? (width, height) : nil
            }
            offset += 2 + length
        }
        return nil
    }
}
