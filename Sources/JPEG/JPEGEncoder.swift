import CTurboJPEG
import VideoCore

/// One TurboJPEG compressor and its output buffer, reused for every frame.
/// Not thread-safe: give each encoding worker its own.
public final class JPEGEncoder {
    private let handle: tjhandle
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var bufferSize: UInt = 0
    /// Both chroma planes averaged down to 4:2:0 for an encode that halves them, kept between frames.
    private var halved: UnsafeMutablePointer<UInt8>?
    private var halvedCapacity = 0
    /// The luma plane of an odd size, padded as TurboJPEG reads it (`paddedLuma`).
    private var padded: UnsafeMutablePointer<UInt8>?
    private var paddedCapacity = 0

    public init() throws(JPEGError) {
        guard let handle = tjInitCompress() else { throw JPEGError("TurboJPEG could not create a compressor") }
        self.handle = handle
    }

    deinit {
        if let buffer { tjFree(buffer) }
        halved?.deallocate()
        padded?.deallocate()
        tjDestroy(handle)
    }

    /// Encodes full-range planar Y'CbCr (`tjCompressFromYUVPlanes`), no RGB round trip.
    public func compress(_ image: YUVImage, quality: Int, chroma: JPEGChroma = .camera) throws(JPEGError) -> [UInt8] {
        let planes = image.planes
        var result: Result<[UInt8], JPEGError> = .failure(JPEGError("no image"))
        image.storage.withUnsafeBytes { storage in
            result = Result { () throws(JPEGError) -> [UInt8] in
                try compress(planes: storage, planes, size: image.size, quality: quality, chroma: chroma)
            }
        }
        return try result.get()
    }

    /// Encodes planes where they lie in `bytes` (a full-range planar frame in the driver's
    /// buffer), read in place: no copy. The caller has checked `bytes` holds them. With
    /// `rows`, only those rows, as an image of their own (one of `JPEGStrips`): for
    /// `JPEGChroma.halved` from 4:2:2 or 4:4:4, their first row even. The planes are only
    /// read; chroma halved is averaged into this encoder's own buffer.
    public func compress(planes bytes: UnsafeRawBufferPointer, _ planes: PlaneConversion.Planes, size: FrameSize,
                         rows: Range<Int>? = nil, quality: Int, chroma: JPEGChroma = .camera) throws(JPEGError) -> [UInt8] {
        let rows = rows ?? 0..<size.height
        let base = bytes.bindMemory(to: UInt8.self).baseAddress!
        let chromaFirstRow = planes.subsampling == .s420 ? rows.lowerBound / 2 : rows.lowerBound
        var pointers: [UnsafePointer<UInt8>?] = planes.offsets.indices.map { plane in
            base + planes.offsets[plane] + (plane == 0 ? rows.lowerBound : chromaFirstRow) * planes.strides[plane]
        }
        var strides: [Int32] = planes.strides.map { Int32($0) }
        let encoded = chroma.encoded(planes.subsampling)
        if encoded != planes.subsampling, pointers.count == 3 {
            let width = planes.subsampling.chromaSize(size).width, halvedWidth = ChromaSubsampling.s420.chromaSize(size).width
            let planeBytes = halvedWidth * ((rows.count + 1) / 2)
            let target = halvedBuffer(2 * planeBytes)
            for plane in 1...2 {
                guard let source = pointers[plane] else { continue }
                PlaneConversion.halveChroma(source, stride: planes.strides[plane], width: width, rows: rows.count,
                                            horizontally: planes.subsampling == .s444, into: target + (plane - 1) * planeBytes)
                pointers[plane] = UnsafePointer(target + (plane - 1) * planeBytes)
                strides[plane] = Int32(halvedWidth)
            }
        }
        let read = encoded.turboJPEGLuma(FrameSize(width: size.width, height: rows.count))
        if read.width > size.width || read.height > rows.count, let luma = pointers[0] {
            pointers[0] = UnsafePointer(paddedLuma(luma, stride: planes.strides[0], width: size.width, rows: rows.count, read: read))
            strides[0] = Int32(read.width)
        }
        if tjCompressFromYUVPlanes(handle, &pointers, Int32(size.width), &strides, Int32(rows.count),
                                   encoded.turboJPEG, &buffer, &bufferSize, Int32(quality), 0) != 0 {
            throw JPEGError.last(handle, "encoding \(size) \(encoded)")
        }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(bufferSize)))
    }

    /// A copy of a luma plane padded to `read`, what TurboJPEG reads of it (`turboJPEGLuma`):
    /// of an odd width in 4:2:x each row one sample wider, of an odd height in 4:2:0 one row
    /// more, as the padding of the last MCU column and row. Without it TurboJPEG reads past
    /// each row and past the plane: the next row's first sample, the chroma after the plane,
    /// and in a strip (`JPEGStrips`) the next strip's rows, which another thread may be
    /// converting at that moment, so a frame encoded in strips came out differently from run
    /// to run. Padded with the last sample and row, as libjpeg pads an image it subsamples
    /// itself. Copied, not laid out with room to spare: only odd sizes pay, and no camera
    /// gives one (a render's `?max=` can).
    private func paddedLuma(_ luma: UnsafePointer<UInt8>, stride: Int, width: Int, rows: Int, read: FrameSize)
        -> UnsafeMutablePointer<UInt8> {
        let count = read.area
        if paddedCapacity < count {
            padded?.deallocate()
            (padded, paddedCapacity) = (.allocate(capacity: count), count)
        }
        let copy = padded!
        for row in 0..<read.height {
            let target = copy + row * read.width
            target.update(from: luma + min(row, rows - 1) * stride, count: width)
            for extra in width..<read.width { target[extra] = target[width - 1] }
        }
        return copy
    }

    /// This encoder's buffer for halved chroma, grown to at least `count` bytes.
    private func halvedBuffer(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        if let halved, halvedCapacity >= count { return halved }
        halved?.deallocate()
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
        (halved, halvedCapacity) = (grown, count)
        return grown
    }

    /// Packed RGB layouts TurboJPEG reads directly (`TJPF_*`).
    public enum RGBLayout: Sendable {
        case rgb, bgr, bgrx, xrgb
        var turboJPEG: Int32 {
            switch self {
            case .rgb: return Int32(TJPF_RGB.rawValue)
            case .bgr: return Int32(TJPF_BGR.rawValue)
            case .bgrx: return Int32(TJPF_BGRX.rawValue)
            case .xrgb: return Int32(TJPF_XRGB.rawValue)
            }
        }
        var bytesPerPixel: Int { self == .rgb || self == .bgr ? 3 : 4 }
    }

    /// Encodes packed RGB (`tjCompress2`), which subsamples it itself: 4:4:4 for `.camera`.
    public func compress(rgb pixels: UnsafeRawBufferPointer, layout: RGBLayout, size: FrameSize, pitch: Int,
                         quality: Int, chroma: JPEGChroma = .camera) throws(JPEGError) -> [UInt8] {
        let subsampling = chroma.encoded(.s444)
        let rowBytes = pitch > 0 ? pitch : size.width * layout.bytesPerPixel
        guard pixels.count >= rowBytes * (size.height - 1) + size.width * layout.bytesPerPixel else {
            throw JPEGError("an RGB frame of \(size) needs \(rowBytes * size.height) bytes; got \(pixels.count)")
        }
        let status = tjCompress2(handle, pixels.bindMemory(to: UInt8.self).baseAddress, Int32(size.width), Int32(rowBytes),
                                 Int32(size.height), layout.turboJPEG, &buffer, &bufferSize,
                                 subsampling.turboJPEG, Int32(quality), 0)
        if status != 0 { throw JPEGError.last(handle, "encoding \(size) RGB") }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(bufferSize)))
    }
}
