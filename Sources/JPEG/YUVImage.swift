import CTurboJPEG
import VideoCore

/// How much colour resolution planar Y'CbCr keeps.
public enum ChromaSubsampling: String, Hashable, Sendable, CaseIterable {
    case s444 = "4:4:4", s422 = "4:2:2", s420 = "4:2:0", gray = "gray"

    /// The corresponding TurboJPEG constant (`TJSAMP_*`).
    var turboJPEG: Int32 {
        switch self {
        case .s444: return Int32(TJSAMP_444.rawValue)
        case .s422: return Int32(TJSAMP_422.rawValue)
        case .s420: return Int32(TJSAMP_420.rawValue)
        case .gray: return Int32(TJSAMP_GRAY.rawValue)
        }
    }

    /// The luma plane TurboJPEG reads and writes for an image of `size` (`tjPlaneWidth`,
    /// `tjPlaneHeight`): of an odd size, in 4:2:2 and 4:2:0 a sample wider, in 4:2:0 a row more.
    func turboJPEGLuma(_ size: FrameSize) -> FrameSize {
        FrameSize(width: Int(tjPlaneWidth(0, Int32(size.width), turboJPEG)),
                  height: Int(tjPlaneHeight(0, Int32(size.height), turboJPEG)))
    }

    /// The pixels one MCU (minimum coded unit) of a JPEG covers.
    var mcuSize: FrameSize {
        switch self {
        case .s444, .gray: return FrameSize(width: 8, height: 8)
        case .s422: return FrameSize(width: 16, height: 8)
        case .s420: return FrameSize(width: 16, height: 16)
        }
    }

    /// The size of a chroma plane for a luma plane of `size`.
    func chromaSize(_ size: FrameSize) -> FrameSize {
        switch self {
        case .s444: return size
        case .s422: return FrameSize(width: (size.width + 1) / 2, height: size.height)
        case .s420: return FrameSize(width: (size.width + 1) / 2, height: (size.height + 1) / 2)
        case .gray: return FrameSize(width: 0, height: 0)
        }
    }
}

/// A full-range planar Y'CbCr image (Y, then Cb, then Cr), whose storage is kept
/// and reused from frame to frame so steady capture allocates nothing.
public struct YUVImage: Sendable {
    public private(set) var size = FrameSize(width: 0, height: 0)
    public private(set) var subsampling = ChromaSubsampling.s422
    /// All three planes, one after another.
    public internal(set) var storage: [UInt8] = []

    public init() {}

    public init(size: FrameSize, subsampling: ChromaSubsampling) {
        reshape(size, subsampling)
    }

    /// Sets the geometry, growing the storage only when it is too small.
    public mutating func reshape(_ size: FrameSize, _ subsampling: ChromaSubsampling) {
        self.size = size
        self.subsampling = subsampling
        let needed = size.area + 2 * subsampling.chromaSize(size).area
        if storage.count < needed { storage = [UInt8](repeating: 0, count: needed) }
    }

    /// Bytes per row of plane 0 (Y), 1 (Cb) or 2 (Cr); planes are packed without padding.
    public func stride(_ plane: Int) -> Int {
        plane == 0 ? size.width : subsampling.chromaSize(size).width
    }

    public func planeHeight(_ plane: Int) -> Int {
        plane == 0 ? size.height : subsampling.chromaSize(size).height
    }

    /// Where its planes lie in `storage`, as the encoder reads planes.
    public var planes: PlaneConversion.Planes {
        PlaneConversion.Planes(offsets: (0..<3).map(offset), strides: (0..<3).map(stride), subsampling: subsampling)
    }

    /// Where each plane starts in `storage`.
    public func offset(_ plane: Int) -> Int {
        switch plane {
        case 0: return 0
        case 1: return size.area
        default: return size.area + subsampling.chromaSize(size).area
        }
    }

    /// Lends each plane's storage in turn to `body` (plane index, first sample, bytes per
    /// row, rows), for code outside this module that writes pixels (the video decoder).
    public mutating func withUnsafeMutablePlanes(_ body: (Int, UnsafeMutablePointer<UInt8>, Int, Int) -> Void) {
        let planes = subsampling == .gray ? 1 : 3
        let layout = (0..<planes).map { (offset($0), stride($0), planeHeight($0)) }
        storage.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for (plane, (offset, stride, rows)) in layout.enumerated() { body(plane, base + offset, stride, rows) }
        }
    }

    /// The sample at (x, y) of a plane, for tests and image operations.
    public func sample(plane: Int, x: Int, y: Int) -> UInt8 {
        storage[offset(plane) + y * stride(plane) + x]
    }
}
