import CTurboJPEG
import VideoCore

/// Decoding at a fraction of full size: TurboJPEG's DCT scaling runs a smaller
/// inverse DCT per block, so a thumbnail of a 1920x1080 photo decodes 240x135
/// pixels instead of two million, and never holds the full-size image.
extension JPEGDecoder {
    /// A DCT scaling factor (`tjscalingfactor`): decoding at numerator/denominator of full size.
    public struct Scale: Hashable, Sendable, CustomStringConvertible {
        public var numerator: Int
        public var denominator: Int

        public init(numerator: Int, denominator: Int) {
            self.numerator = numerator
            self.denominator = denominator
        }

        public static let full = Scale(numerator: 1, denominator: 1)

        /// The decoded size of a `size` image; rounds up, as the C macro `TJSCALED` does.
        public func apply(to size: FrameSize) -> FrameSize {
            FrameSize(width: (size.width * numerator + denominator - 1) / denominator,
                      height: (size.height * numerator + denominator - 1) / denominator)
        }

        public var description: String { "\(numerator)/\(denominator)" }
    }

    /// The scales camd decodes at, largest first: 1/1, 1/2, 1/4 and 1/8, as far as
    /// this TurboJPEG offers them (`tjGetScalingFactors`). It offers every eighth
    /// from 1/8 to 2, but only these have fast inverse DCTs (SIMD for 1/2 and 1/4,
    /// DC only for 1/8); the resampler does the rest of the way.
    public static let scales: [Scale] = {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return [.full] }
        let offered = (0..<Int(count)).map { Scale(numerator: Int(factors[$0].num), denominator: Int(factors[$0].denom)) }
        let wanted = [1, 2, 4, 8].map { Scale(numerator: 1, denominator: $0) }
        return [.full] + wanted.dropFirst().filter { offered.contains($0) }
    }()

    /// The smallest scale that still decodes `size` to at least `covering` in both directions.
    public static func scale(for size: FrameSize, covering: FrameSize) -> Scale {
        scales.last { scale in
            let scaled = scale.apply(to: size)
            return scaled.width >= covering.width && scaled.height >= covering.height
        } ?? .full
    }

    /// What a scaled decode made: the size is what the decoder produced, before any resampling.
    public struct ScaledDecode: Hashable, Sendable {
        public var fullSize: FrameSize
        public var scale: Scale
        public var size: FrameSize { scale.apply(to: fullSize) }
    }

    /// Decodes straight to planes (no RGB) at the smallest scale that still
    /// gives at least `covering` pixels each way (full size when nil), reusing
    /// `image`'s storage. JPEGs whose chroma layout `YUVImage` does not model
    /// (4:4:0, 4:1:1) are decoded through RGB into 4:4:4.
    public func decode(_ jpeg: [UInt8], covering: FrameSize? = nil, into image: inout YUVImage) throws(JPEGError) -> ScaledDecode {
        let header = try header(jpeg)
        let scale = covering.map { Self.scale(for: header.size, covering: $0) } ?? .full
        let result = ScaledDecode(fullSize: header.size, scale: scale)
        let size = result.size
        guard let sampling = header.subsampling else {
            let rgb = try decodeRGB(jpeg, size: size)
            image.reshape(size, .s444)
            image.storeRGB(rgb)
            return result
        }
        image.reshape(size, sampling)
        let offsets = (image.offset(0), image.offset(1), image.offset(2))
        let strides = (Int32(image.stride(0)), Int32(image.stride(1)), Int32(image.stride(2)))
        // TurboJPEG writes a subsampled image's luma with an even width and, for 4:2:0, an even
        // number of rows (`tjPlaneWidth`, `tjPlaneHeight`): of an odd size, past the luma plane
        // into the chroma, which it has already written (a 1080p JPEG decoded at 1/8 is
        // 240x135). Such a luma is decoded into a plane of that size and copied.
        let lumaSize = sampling.turboJPEGLuma(size)
        let padding = lumaSize != size
        var paddedLuma = padding ? [UInt8](repeating: 0, count: lumaSize.area) : []
        var status: Int32 = 0
        jpeg.withUnsafeBufferPointer { input in
            image.storage.withUnsafeMutableBufferPointer { output in
                paddedLuma.withUnsafeMutableBufferPointer { padded in
                    withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>?.self, capacity: 3) { planes in
                        withUnsafeTemporaryAllocation(of: Int32.self, capacity: 3) { rowBytes in
                            (planes[0], planes[1], planes[2]) = (padding ? padded.baseAddress! : output.baseAddress! + offsets.0,
                                                                 output.baseAddress! + offsets.1, output.baseAddress! + offsets.2)
                            (rowBytes[0], rowBytes[1], rowBytes[2]) = strides
                            if padding { rowBytes[0] = Int32(lumaSize.width) }
                            status = tjDecompressToYUVPlanes(handle, input.baseAddress, UInt(input.count), planes.baseAddress,
                                                             Int32(size.width), rowBytes.baseAddress, Int32(size.height), 0)
                        }
                    }
                    guard padding, let source = padded.baseAddress, status == 0 else { return }
                    for row in 0..<size.height {
                        (output.baseAddress! + offsets.0 + row * Int(strides.0)).update(from: source + row * lumaSize.width,
                                                                                       count: size.width)
                    }
                }
            }
        }
        try check(status, "decoding a \(header.size) JPEG at \(scale)")
        return result
    }

    /// Decodes to packed RGB at the smallest scale that still gives at least `covering` pixels each way.
    public func decodeRGB(_ jpeg: [UInt8], covering: FrameSize) throws(JPEGError) -> (decode: ScaledDecode, pixels: [UInt8]) {
        let header = try header(jpeg)
        let result = ScaledDecode(fullSize: header.size, scale: Self.scale(for: header.size, covering: covering))
        return (result, try decodeRGB(jpeg, size: result.size))
    }

    private func decodeRGB(_ jpeg: [UInt8], size: FrameSize) throws(JPEGError) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: size.area * 3)
        let status = jpeg.withUnsafeBufferPointer { input in
            pixels.withUnsafeMutableBufferPointer { output in
                tjDecompress2(handle, input.baseAddress, UInt(input.count), output.baseAddress,
                              Int32(size.width), 0, Int32(size.height), Int32(TJPF_RGB.rawValue), 0)
            }
        }
        try check(status, "decoding a JPEG to \(size) RGB")
        return pixels
    }

    /// Fails on errors; a warning (a slightly damaged frame that still decoded) is accepted.
    private func check(_ status: Int32, _ what: String) throws(JPEGError) {
        if status != 0 && tjGetErrorCode(handle) != Int32(TJERR_WARNING.rawValue) {
            throw JPEGError.last(handle, what)
        }
    }
}

extension YUVImage {
    /// Fills a 4:4:4 image of the same size from packed RGB, with JFIF's full-range matrix.
    mutating func storeRGB(_ rgb: [UInt8]) {
        let area = size.area, cbBase = offset(1), crBase = offset(2)
        rgb.withUnsafeBufferPointer { src in
            storage.withUnsafeMutableBufferPointer { out in
                for i in 0..<area {
                    let (y, cb, cr) = Geometry.Color.ycbcr(red: Int(src[3 * i]), green: Int(src[3 * i + 1]), blue: Int(src[3 * i + 2]))
                    out[i] = y
                    out[cbBase + i] = cb
                    out[crBase + i] = cr
                }
            }
        }
    }
}
