import CTurboJPEG
import VideoCore

/// One TurboJPEG compressor and its output buffer, reused for every frame.
/// Not thread-safe: give each encoding worker its own.
public final class JPEGEncoder {
    private let handle: tjhandle
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var bufferSize: UInt = 0

    public init() throws(JPEGError) {
        guard let handle = tjInitCompress() else { throw JPEGError("TurboJPEG could not create a compressor") }
        self.handle = handle
    }

    deinit {
        if let buffer { tjFree(buffer) }
        tjDestroy(handle)
    }

    /// Encodes full-range planar Y'CbCr as is (`tjCompressFromYUVPlanes`), no RGB round trip.
    public func compress(_ image: YUVImage, quality: Int) throws(JPEGError) -> [UInt8] {
        var failed = false
        image.storage.withUnsafeBufferPointer { storage in
            let base = storage.baseAddress!
            var planes: [UnsafePointer<UInt8>?] = (0..<3).map { base + image.offset($0) }
            var strides: [Int32] = (0..<3).map { Int32(image.stride($0)) }
            failed = tjCompressFromYUVPlanes(handle, &planes, Int32(image.size.width), &strides,
                                             Int32(image.size.height), image.subsampling.turboJPEG,
                                             &buffer, &bufferSize, Int32(quality), 0) != 0
        }
        if failed { throw JPEGError.last(handle, "encoding \(image.size) \(image.subsampling)") }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(bufferSize)))
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

    /// Encodes packed RGB (`tjCompress2`).
    public func compress(rgb pixels: UnsafeRawBufferPointer, layout: RGBLayout, size: FrameSize, pitch: Int,
                         subsampling: ChromaSubsampling = .s420, quality: Int) throws(JPEGError) -> [UInt8] {
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
