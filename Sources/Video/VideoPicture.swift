import CFFmpeg
import JPEG
import VideoCore

/// One 4:2:0 planar picture (`AV_PIX_FMT_YUV420P`) in an `AVFrame`, as the H.264 encoders
/// take it, filled from a camera frame by camd's own plane conversion: the samples keep
/// their range (a camera's limited-range YUYV stays 16...235 and is tagged so), so there is
/// no range pass and no libswscale. Reused from frame to frame by one thread.
public final class VideoPicture {
    let frame: UnsafeMutablePointer<AVFrame>
    public let size: FrameSize
    /// The range of the samples last filled in.
    public private(set) var range: ColorRange = .limited
    private let decoder: JPEGDecoder
    private var decoded = YUVImage()
    /// Two rows of each chroma plane of a packed 4:2:2 frame, averaged into one 4:2:0 row.
    private var chromaRows: [UInt8] = []

    public init(size: FrameSize) throws(VideoError) {
        try FFmpegLibraries.load()
        do { decoder = try JPEGDecoder() } catch { throw VideoError(.ffmpeg, "TurboJPEG: \(error)") }
        guard let frame = av_frame_alloc() else { throw VideoError(.ffmpeg, "av_frame_alloc failed: out of memory") }
        self.frame = frame
        self.size = size
        frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        frame.pointee.width = Int32(size.width)
        frame.pointee.height = Int32(size.height)
        try VideoError.check(av_frame_get_buffer(frame, 0), "allocating a \(size) picture")
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
    }

    /// The formats a camera may send that `fill` converts.
    public static func accepts(_ format: PixelFormat) -> Bool {
        switch format {
        case .yuyv, .uyvy, .yvyu, .vyuy, .nv12, .nv21, .nv16, .nv61, .yuv420, .yvu420, .yuv422p, .grey, .mjpeg, .jpeg: return true
        default: return false
        }
    }

    /// Fills the picture from one camera frame of this picture's size. MJPEG frames are
    /// decoded to planes with TurboJPEG (full range); the rest are copied plane by plane.
    public func fill(from source: Frame) throws(VideoError) {
        let layout = source.layout
        guard layout.size == size else {
            throw VideoError(.unsupportedFormat, "a \(layout.size) frame reached a \(size) video stage")
        }
        try VideoError.check(av_frame_make_writable(frame), "making the picture writable")
        switch layout.format {
        case .mjpeg, .jpeg:
            // Checked as the snapshot path checks it: a truncated frame decodes with only a
            // warning, its missing rows grey, and would be encoded into the video.
            let jpeg: [UInt8]
            switch source.withUnsafeBytes({ JPEGValidation.validate($0) }) {
            case .success(let whole): jpeg = whole
            case .failure(let problem): throw VideoError(.unsupportedFormat, "a broken MJPEG frame: \(problem)")
            }
            do {
                _ = try decoder.decode(jpeg, into: &decoded)
            } catch {
                throw VideoError(.unsupportedFormat, "a broken MJPEG frame: \(error)")
            }
            guard decoded.size == size else {
                throw VideoError(.unsupportedFormat, "an MJPEG frame of \(decoded.size) in a \(size) stream")
            }
            fill(from: decoded)
        default:
            let packed = PlaneConversion.packedPositions(layout.format)
            let planes = packed == nil ? Self.sourcePlanes(layout) : nil
            guard let needed = PlaneConversion.requiredBytes(layout), source.byteCount >= needed, packed != nil || planes != nil else {
                throw VideoError(.unsupportedFormat, "\(layout.format) frames cannot be encoded to H.264 here; "
                                 + "choose YUYV, NV12, YU12 or MJPEG with `format`")
            }
            source.withUnsafeBytes { raw in
                let bytes = raw.assumingMemoryBound(to: UInt8.self)
                if let packed, let base = bytes.baseAddress {
                    copyPacked(base, stride: PlaneConversion.stride(layout), positions: packed)
                } else if let planes {
                    copy(bytes, planes)
                }
            }
            range = layout.range
        }
    }

    /// Packed 4:2:2 (YUYV and its byte orders) to 4:2:0 with the JPEG path's vector row
    /// splitter (no range change): each row gives its luma and two chroma rows, and each pair
    /// of chroma rows is averaged into one, rounding up as `(a + b + 1) >> 1`, as libswscale does.
    private func copyPacked(_ base: UnsafePointer<UInt8>, stride: Int, positions: (luma: Int, cb: Int, cr: Int)) {
        let width = size.width, height = size.height, chromaWidth = (width + 1) / 2
        if chromaRows.count < 4 * chromaWidth + 16 { chromaRows = [UInt8](repeating: 0, count: 4 * chromaWidth + 16) }
        let lumaInHighByte = positions.luma == 1, cbFirst = positions.cb < positions.cr
        let yOut = frame.pointee.data.0!, yStride = Int(frame.pointee.linesize.0)
        let cbOut = frame.pointee.data.1!, crOut = frame.pointee.data.2!
        let cbStride = Int(frame.pointee.linesize.1), crStride = Int(frame.pointee.linesize.2)
        chromaRows.withUnsafeMutableBufferPointer { scratch in
            let rows = scratch.baseAddress!
            // Rows of the pair: Cb then Cr of the even row, Cb then Cr of the odd row.
            let cb = [rows, rows + 2 * chromaWidth], cr = [rows + chromaWidth, rows + 3 * chromaWidth]
            for row in 0..<height {
                let source = base + row * stride, luma = yOut + row * yStride
                let (cbRow, crRow) = (cb[row & 1], cr[row & 1])
                let done = PlaneConversion.convertPackedRow(UnsafeRawPointer(source), pixels: width / 2 * 2, luma: luma,
                                                            firstChroma: cbFirst ? cbRow : crRow,
                                                            secondChroma: cbFirst ? crRow : cbRow,
                                                            lumaInHighByte: lumaInHighByte, expand: false)
                for pair in done / 2..<width / 2 {
                    let p = source + pair * 4
                    luma[2 * pair] = p[positions.luma]
                    luma[2 * pair + 1] = p[positions.luma + 2]
                    cbRow[pair] = p[positions.cb]
                    crRow[pair] = p[positions.cr]
                }
                // A pair of rows is complete (or the last row of an odd height pairs with itself).
                guard row & 1 == 1 || row == height - 1 else { continue }
                let second = row & 1
                average(cb[0], cb[second], into: cbOut + (row / 2) * cbStride, count: chromaWidth)
                average(cr[0], cr[second], into: crOut + (row / 2) * crStride, count: chromaWidth)
            }
        }
    }

    /// `(a + b + 1) >> 1` of two rows, 16 samples at a time: `(a | b) - ((a ^ b) >> 1)` needs no widening.
    private func average(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, count: Int) {
        var x = 0
        while x + 16 <= count {
            let first = UnsafeRawPointer(a + x).loadUnaligned(as: SIMD16<UInt8>.self)
            let second = UnsafeRawPointer(b + x).loadUnaligned(as: SIMD16<UInt8>.self)
            UnsafeMutableRawPointer(out + x).storeBytes(of: (first | second) &- ((first ^ second) &>> 1), as: SIMD16<UInt8>.self)
            x += 16
        }
        while x < count {
            out[x] = UInt8((UInt16(a[x]) + UInt16(b[x]) + 1) >> 1)
            x += 1
        }
    }

    /// Fills the picture from a full-range planar image of this picture's size (a decoded
    /// JPEG, a resampled photo).
    public func fill(from image: YUVImage) {
        let chroma = image.subsampling
        let planes: SourcePlanes
        if chroma == .gray {
            planes = SourcePlanes(luma: .init(offset: 0, stride: image.stride(0), step: 1), cb: nil, cr: nil, chromaRowsPerRow: 1)
        } else {
            let step = chroma == .s444 ? 2 : 1
            planes = SourcePlanes(luma: .init(offset: 0, stride: image.stride(0), step: 1),
                                  cb: .init(offset: image.offset(1), stride: image.stride(1), step: step),
                                  cr: .init(offset: image.offset(2), stride: image.stride(2), step: step),
                                  chromaRowsPerRow: chroma == .s420 ? 1 : 2)
        }
        image.storage.withUnsafeBufferPointer { bytes in copy(bytes, planes) }
        range = .full
    }

    /// Where one plane's samples lie in a frame: the first sample, bytes from one row to
    /// the next, and bytes from one sample to the next (2 in semi-planar layouts and 4:4:4).
    struct Plane {
        var offset: Int
        var stride: Int
        var step: Int
    }

    /// A frame's planes as the converter reads them. `chromaRowsPerRow` is 2 when the
    /// source has a chroma row for every luma row (4:2:2): two are averaged into one.
    struct SourcePlanes {
        var luma: Plane
        var cb: Plane?
        var cr: Plane?
        var chromaRowsPerRow: Int
    }

    /// The planes of a planar or semi-planar frame; packed 4:2:2 goes through `copyPacked`.
    static func sourcePlanes(_ layout: FrameLayout) -> SourcePlanes? {
        let stride = PlaneConversion.stride(layout)
        let height = layout.size.height
        switch layout.format {
        case .nv12, .nv21, .nv16, .nv61:
            let swapped = layout.format == .nv21 || layout.format == .nv61
            let base = stride * height
            return SourcePlanes(luma: Plane(offset: 0, stride: stride, step: 1),
                                cb: Plane(offset: base + (swapped ? 1 : 0), stride: stride, step: 2),
                                cr: Plane(offset: base + (swapped ? 0 : 1), stride: stride, step: 2),
                                chromaRowsPerRow: layout.format == .nv16 || layout.format == .nv61 ? 2 : 1)
        case .yuv420, .yvu420, .yuv422p:
            guard let planes = PlaneConversion.planarPlanes(layout) else { return nil }
            return SourcePlanes(luma: Plane(offset: 0, stride: stride, step: 1),
                                cb: Plane(offset: planes.offsets[1], stride: planes.strides[1], step: 1),
                                cr: Plane(offset: planes.offsets[2], stride: planes.strides[2], step: 1),
                                chromaRowsPerRow: layout.format == .yuv422p ? 2 : 1)
        case .grey:
            return SourcePlanes(luma: Plane(offset: 0, stride: stride, step: 1), cb: nil, cr: nil, chromaRowsPerRow: 1)
        default:
            return nil
        }
    }

    /// Copies the luma plane and makes the two 4:2:0 chroma planes; grey gets neutral chroma.
    private func copy(_ source: UnsafeBufferPointer<UInt8>, _ planes: SourcePlanes) {
        guard let base = source.baseAddress else { return }
        let width = size.width, height = size.height
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        let luma = planes.luma
        let yOut = frame.pointee.data.0!, yStride = Int(frame.pointee.linesize.0)
        for row in 0..<height {
            (yOut + row * yStride).update(from: base + luma.offset + row * luma.stride, count: width)
        }
        let outputs = [(frame.pointee.data.1!, Int(frame.pointee.linesize.1), planes.cb),
                       (frame.pointee.data.2!, Int(frame.pointee.linesize.2), planes.cr)]
        for (out, outStride, plane) in outputs {
            guard let plane else {
                for row in 0..<chromaHeight { (out + row * outStride).update(repeating: 128, count: chromaWidth) }
                continue
            }
            let rows = height / 2 * 2 == height ? chromaHeight : chromaHeight - 1
            for row in 0..<chromaHeight {
                let to = out + row * outStride
                if planes.chromaRowsPerRow == 2 {
                    // 4:2:2 to 4:2:0: the mean of the two source rows this row covers.
                    let first = base + plane.offset + 2 * row * plane.stride
                    let second = row < rows ? first + plane.stride : first
                    if plane.step == 1 {
                        average(first, second, into: to, count: chromaWidth)
                    } else {
                        for x in 0..<chromaWidth {
                            to[x] = UInt8((UInt16(first[x * plane.step]) + UInt16(second[x * plane.step]) + 1) >> 1)
                        }
                    }
                } else {
                    let from = base + plane.offset + row * plane.stride
                    if plane.step == 1 {
                        to.update(from: from, count: chromaWidth)
                    } else {
                        for x in 0..<chromaWidth { to[x] = from[x * plane.step] }
                    }
                }
            }
        }
    }

    /// The picture as a full-range planar image (limited samples expanded), for tests and thumbnails.
    public func image() throws(VideoError) -> YUVImage {
        frame.pointee.color_range = range == .full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
        return try VideoFile.image(of: frame)
    }
}
