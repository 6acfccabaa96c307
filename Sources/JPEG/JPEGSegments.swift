// The fuzzer (scripts/fuzz-jpeg) builds this file into one module with FrameSize.swift.
#if canImport(VideoCore)
import VideoCore
#endif

/// The one reader of a JPEG's marker segments: from after the start-of-image marker
/// up to and including the start of scan, each segment's marker and where its bytes lie.
/// Validation, EXIF insertion and reading, photo records and the tests all walk a JPEG
/// with it, so each of them handles fill bytes, markers without a length, and segments
/// that run past the end alike. Reads only within the bytes given: a broken or hostile
/// file ends the walk with an error, never a trap.
public struct JPEGSegments<Bytes: RandomAccessCollection>: Sequence, IteratorProtocol
where Bytes.Element == UInt8, Bytes.Index == Int {
    private let bytes: Bytes
    private var at: Int
    private var done = false
    /// Set when the walk ended before a start of scan was returned.
    public private(set) var stop: JPEGSegmentStop?

    public init(_ bytes: Bytes) {
        self.bytes = bytes
        let start = bytes.startIndex
        if bytes.count >= 2, bytes[start] == 0xFF, bytes[start + 1] == 0xD8 {
            at = start + 2
        } else {
            at = start
            done = true
            stop = .notJPEG
        }
    }

    public mutating func next() -> JPEGSegment? {
        guard !done else { return nil }
        let end = bytes.endIndex
        while true {
            guard at + 2 <= end else { return finish(.truncated(offset: at)) }
            guard bytes[at] == 0xFF else { return finish(.malformed(offset: at)) }
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue }  // a fill byte before the marker
            // Markers that stand alone, without a length: TEM, RSTn, and a repeated SOI.
            if marker == 0x01 || (0xD0...0xD8).contains(marker) { at += 2; continue }
            if marker == 0xD9 { return finish(.endOfImage(offset: at)) }
            guard at + 4 <= end else { return finish(.truncated(offset: at)) }
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard length >= 2 else { return finish(.malformed(offset: at)) }
            guard at + 2 + length <= end else { return finish(.truncated(offset: at)) }
            let segment = JPEGSegment(marker: marker, offset: at, payload: (at + 4)..<(at + 2 + length))
            at = segment.end
            if marker == 0xDA { done = true }  // the scan: entropy-coded data follows
            return segment
        }
    }

    private mutating func finish(_ reason: JPEGSegmentStop) -> JPEGSegment? {
        done = true
        stop = reason
        return nil
    }
}

extension JPEGSegment {
    /// "Exif\0\0" at the start of an APP1 payload.
    static let exifSignature: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]

    /// The TIFF structure of an EXIF APP1 segment (after "Exif\0\0"), nil for any other segment.
    public func exifTIFF<C: RandomAccessCollection>(in bytes: C) -> Range<Int>? where C.Element == UInt8, C.Index == Int {
        guard marker == 0xE1, payload.count > Self.exifSignature.count + 8,
              bytes[payload.lowerBound..<(payload.lowerBound + 6)].elementsEqual(Self.exifSignature) else { return nil }
        return (payload.lowerBound + 6)..<payload.upperBound
    }
}

extension JPEGSegments {
    /// The TIFF bytes of the first EXIF APP1 segment before the scan, if any.
    public static func exifTIFF(in bytes: Bytes) -> Range<Int>? {
        var segments = JPEGSegments(bytes)
        while let segment = segments.next() {
            if let tiff = segment.exifTIFF(in: bytes) { return tiff }
        }
        return nil
    }

    /// The width and height in the frame header (SOFn: precision, height, width);
    /// `.failure` says why there is none, `.truncated` when more bytes may hold it.
    public static func dimensions(in bytes: Bytes) -> Result<FrameSize, JPEGSegmentStop> {
        var segments = JPEGSegments(bytes)
        while let segment = segments.next() {
            guard segment.isFrameHeader else { continue }
            guard segment.payload.count >= 5 else { return .failure(.malformed(offset: segment.offset)) }
            let p = segment.payload.lowerBound
            let height = Int(bytes[p + 1]) << 8 | Int(bytes[p + 2])
            let width = Int(bytes[p + 3]) << 8 | Int(bytes[p + 4])
            guard width > 0, height > 0 else { return .failure(.malformed(offset: segment.offset)) }
            return .success(FrameSize(width: width, height: height))
        }
        return .failure(segments.stop ?? .noFrameHeader)
    }
}

/// One marker segment of a JPEG, as `JPEGSegments` finds it.
public struct JPEGSegment: Equatable, Sendable {
    /// The marker's second byte: 0xE1 for APP1, 0xC0 for SOF0, 0xDA for SOS.
    public var marker: UInt8
    /// Where the segment's 0xFF marker byte is.
    public var offset: Int
    /// The segment's payload, after the marker and its two length bytes.
    public var payload: Range<Int>
    /// Where the next segment starts.
    public var end: Int { payload.upperBound }

    /// A frame header (SOF0 to SOF15, not DHT, JPG or DAC): it holds the image's size.
    public var isFrameHeader: Bool { (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC }
}

/// Why a walk of `JPEGSegments` stopped before the scan.
public enum JPEGSegmentStop: Error, Equatable, Sendable {
    /// The bytes do not start with FFD8.
    case notJPEG
    /// Where a segment should start there is no marker, or its length is impossible.
    case malformed(offset: Int)
    /// The bytes end inside the segment at `offset`: a longer read may finish it.
    case truncated(offset: Int)
    /// An end-of-image marker came before any scan.
    case endOfImage(offset: Int)
    /// The scan came without a frame header before it (`dimensions` only).
    case noFrameHeader
}
