import CTurboJPEG
import VideoCore

/// Decodes JPEGs with TurboJPEG: used to check output and to scale saved photos.
public final class JPEGDecoder {
    let handle: tjhandle  // internal: JPEGDecoder+Scaled.swift decodes with it too

    public init() throws(JPEGError) {
        guard let handle = tjInitDecompress() else { throw JPEGError("TurboJPEG could not create a decompressor") }
        self.handle = handle
    }

    deinit { tjDestroy(handle) }

    /// What the JPEG's header says.
    public struct Header: Hashable, Sendable {
        public var size: FrameSize
        public var subsampling: ChromaSubsampling?
    }

    public func header(_ jpeg: [UInt8]) throws(JPEGError) -> Header {
        var width: Int32 = 0, height: Int32 = 0, subsamp: Int32 = 0, colorspace: Int32 = 0
        let status = jpeg.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsamp, &colorspace)
        }
        if status != 0 { throw JPEGError.last(handle, "reading the JPEG header") }
        let sampling = ChromaSubsampling.allCases.first { $0.turboJPEG == subsamp }
        return Header(size: FrameSize(width: Int(width), height: Int(height)), subsampling: sampling)
    }

    /// Decodes to packed RGB, 3 bytes a pixel, rows without padding.
    public func decodeRGB(_ jpeg: [UInt8]) throws(JPEGError) -> (size: FrameSize, pixels: [UInt8]) {
        let size = try header(jpeg).size
        var pixels = [UInt8](repeating: 0, count: size.area * 3)
        let status = jpeg.withUnsafeBufferPointer { input in
            pixels.withUnsafeMutableBufferPointer { output in
                tjDecompress2(handle, input.baseAddress, UInt(input.count), output.baseAddress,
                              Int32(size.width), 0, Int32(size.height), Int32(TJPF_RGB.rawValue), 0)
            }
        }
        if status != 0 { throw JPEGError.last(handle, "decoding a \(size) JPEG") }
        return (size, pixels)
    }
}
