import VideoCore

/// Turns camera pixel layouts into full-range planar Y'CbCr for the encoder, in
/// one pass per frame: deinterleave and expand limited range (16...235) to JPEG's
/// full range (0...255), so black stays black. Vector code (`PlaneConversion+SIMD`)
/// does most of each row; the lookup tables define the result and finish the rows.
public enum PlaneConversion {
    /// Formats converted here without libv4l, and the subsampling each keeps.
    public static func subsampling(for format: PixelFormat) -> ChromaSubsampling? {
        switch format {
        case .yuyv, .uyvy, .yvyu, .vyuy, .yuv422p, .nv16, .nv61: return .s422
        case .nv12, .nv21, .yuv420, .yvu420: return .s420
        case .grey: return .gray
        default: return nil
        }
    }

    /// Limited-range luma to full range: (Y - 16) * 255 / 219, rounded and clamped.
    public static let expandLuma: [UInt8] = (0..<256).map { clamp((Double($0) - 16) * 255 / 219) }
    /// Limited-range chroma to full range: (C - 128) * 255 / 224 + 128.
    public static let expandChroma: [UInt8] = (0..<256).map { clamp((Double($0) - 128) * 255 / 224 + 128) }
    static let identity: [UInt8] = (0..<256).map { UInt8($0) }

    private static func clamp(_ value: Double) -> UInt8 {
        UInt8(max(0, min(255, value.rounded())))
    }

    /// The subsampling a frame of `format` is converted into for a JPEG that keeps `chroma`:
    /// packed 4:2:2 (YUYV and its byte orders) is halved to 4:2:0 as it is converted, which
    /// costs less than halving it after (`JPEGEncoder`, which halves the other layouts).
    static func subsampling(for format: PixelFormat, chroma: JPEGChroma) -> ChromaSubsampling? {
        guard let own = subsampling(for: format) else { return nil }
        return isPacked(format) ? chroma.encoded(own) : own
    }

    private static func isPacked(_ format: PixelFormat) -> Bool {
        [.yuyv, .uyvy, .yvyu, .vyuy].contains(format)
    }

    /// Converts one frame into `image` (packed 4:2:2 halved for `chroma`); returns false for
    /// formats not handled here.
    public static func convert(_ source: UnsafeRawBufferPointer, layout: FrameLayout, into image: inout YUVImage,
                               chroma: JPEGChroma = .camera) -> Bool {
        guard let subsampling = subsampling(for: layout.format, chroma: chroma) else { return false }
        image.reshape(layout.size, subsampling)
        image.storage.withUnsafeMutableBufferPointer {
            convert(source, layout: layout, rows: 0..<layout.size.height, into: $0, chroma: chroma)
        }
        return true
    }

    /// Converts only `rows` of a frame into `out`, laid out as a `YUVImage` of the frame's
    /// size and subsampling (`subsampling(for:chroma:)`) holds its planes: one strip of a frame
    /// (`JPEGStrips`), whose first row, for 4:2:0, is even. Strips of one frame may be converted at once.
    static func convert(_ source: UnsafeRawBufferPointer, layout: FrameLayout, rows: Range<Int>,
                        into out: UnsafeMutableBufferPointer<UInt8>, chroma halving: JPEGChroma = .camera) {
        guard let subsampling = subsampling(for: layout.format, chroma: halving) else { return }
        let size = layout.size
        let expand = layout.range == .limited
        let lumaTable = expand ? expandLuma : identity
        let chromaTable = expand ? expandChroma : identity
        let stride = stride(layout)
        let chroma = subsampling.chromaSize(size)
        let cbOffset = size.area, crOffset = size.area + chroma.area
        // The chroma rows of these luma rows: half as many in 4:2:0, the last taking an odd height's extra one.
        let chromaRows = subsampling == .s420
            ? (rows.lowerBound / 2)..<(rows.upperBound == size.height ? chroma.height : rows.upperBound / 2) : rows

        lumaTable.withUnsafeBufferPointer { lut in
        chromaTable.withUnsafeBufferPointer { clut in
            let src = source.bindMemory(to: UInt8.self)
            switch layout.format {
            case .yuyv, .uyvy, .yvyu, .vyuy:
                // Byte positions of Y0, Y1, Cb, Cr within each 4-byte pair of pixels.
                let (y0, y1, cb, cr): (Int, Int, Int, Int) = switch layout.format {
                case .yuyv: (0, 2, 1, 3)
                case .uyvy: (1, 3, 0, 2)
                case .yvyu: (0, 2, 3, 1)
                default: (1, 3, 2, 0)  // VYUY
                }
                let lumaInHighByte = y0 == 1, cbFirst = cb < cr
                let pairs = size.width / 2
                guard let base = source.baseAddress, let target = out.baseAddress else { break }
                // Halved to 4:2:0: an odd row's chroma goes here first, then is averaged into the
                // even row's above it, as `halveChroma` averages (the same rounding, row by row).
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: subsampling == .s420 ? 2 * chroma.width : 0) { scratch in
                    for row in rows {
                        let line = row * stride, lumaRow = row * size.width
                        let chromaRow = (subsampling == .s420 ? row / 2 : row) * chroma.width
                        let cbOut = target + cbOffset + chromaRow, crOut = target + crOffset + chromaRow
                        let averaged = subsampling == .s420 && row % 2 == 1
                        let (cbRow, crRow) = averaged ? (scratch.baseAddress!, scratch.baseAddress! + chroma.width) : (cbOut, crOut)
                        let done = convertPackedRow(base + line, pixels: pairs * 2, luma: target + lumaRow,
                                                    firstChroma: cbFirst ? cbRow : crRow, secondChroma: cbFirst ? crRow : cbRow,
                                                    lumaInHighByte: lumaInHighByte, expand: expand)
                        for pair in done / 2..<pairs {
                            let p = line + pair * 4, luma = lumaRow + 2 * pair
                            out[luma] = lut[Int(src[p + y0])]
                            out[luma + 1] = lut[Int(src[p + y1])]
                            cbRow[pair] = clut[Int(src[p + cb])]
                            crRow[pair] = clut[Int(src[p + cr])]
                        }
                        if averaged {
                            averageInto(cbOut, cbRow, count: pairs, roundUp: (row / 2) % 2 == 0)
                            averageInto(crOut, crRow, count: pairs, roundUp: (row / 2) % 2 == 0)
                        }
                    }
                }
            case .grey:
                copyPlane(src, 0, stride, out, 0, size.width, size.width, rows, lut, expand ? .luma : .copy)
            case .yuv420, .yvu420, .yuv422p:
                copyPlane(src, 0, stride, out, 0, size.width, size.width, rows, lut, expand ? .luma : .copy)
                guard let planes = planarPlanes(layout) else { break }
                let chromaStride = planes.strides[1]
                copyPlane(src, planes.offsets[1], chromaStride, out, cbOffset, chroma.width, chroma.width, chromaRows, clut, expand ? .chroma : .copy)
                copyPlane(src, planes.offsets[2], chromaStride, out, crOffset, chroma.width, chroma.width, chromaRows, clut, expand ? .chroma : .copy)
            case .nv12, .nv21, .nv16, .nv61:
                copyPlane(src, 0, stride, out, 0, size.width, size.width, rows, lut, expand ? .luma : .copy)
                let swapped = layout.format == .nv21 || layout.format == .nv61
                let base = stride * size.height
                for row in chromaRows {
                    let line = base + row * stride
                    let cbRow = cbOffset + row * chroma.width, crRow = crOffset + row * chroma.width
                    let (firstRow, secondRow) = swapped ? (crRow, cbRow) : (cbRow, crRow)
                    var done = 0  // pairs the vector path split
                    if let from = source.baseAddress, let to = out.baseAddress {
                        done = splitPairRow(from + line, pairs: chroma.width, first: to + firstRow, second: to + secondRow,
                                            expand: expand)
                    }
                    for x in done..<chroma.width {
                        out[firstRow + x] = clut[Int(src[line + 2 * x])]
                        out[secondRow + x] = clut[Int(src[line + 2 * x + 1])]
                    }
                }
            default:
                break
            }
        }}
    }

    /// Where each of a frame's planes starts and its bytes per row: Y, Cb, Cr.
    public struct Planes: Sendable, Hashable {
        public var offsets: [Int]
        public var strides: [Int]
        public var subsampling: ChromaSubsampling
    }

    /// The frame's own planes, when the encoder can read them where they are: planar
    /// Y'CbCr (YU12, YV12, 422P, GREY) already in full range, such as a Raspberry Pi
    /// camera's. Nil for every layout that needs converting (packed, semi-planar, limited range).
    public static func inPlacePlanes(_ layout: FrameLayout) -> Planes? {
        layout.range == .full ? planarPlanes(layout) : nil
    }

    /// Where a planar frame's (YU12, YV12, 422P, GREY) planes lie in its bytes, whatever its
    /// range; nil for packed and semi-planar layouts.
    public static func planarPlanes(_ layout: FrameLayout) -> Planes? {
        guard let subsampling = subsampling(for: layout.format) else { return nil }
        let stride = stride(layout)
        switch layout.format {
        case .grey:
            return Planes(offsets: [0, 0, 0], strides: [stride, 0, 0], subsampling: .gray)
        case .yuv420, .yvu420, .yuv422p:
            let chromaStride = stride / 2
            let first = stride * layout.size.height, second = first + chromaStride * subsampling.chromaSize(layout.size).height
            let (cb, cr) = layout.format == .yvu420 ? (second, first) : (first, second)
            return Planes(offsets: [0, cb, cr], strides: [stride, chromaStride, chromaStride], subsampling: subsampling)
        default:
            return nil
        }
    }

    /// How many bytes a frame of `layout` needs, so a short buffer is refused before reading it.
    public static func requiredBytes(_ layout: FrameLayout) -> Int? {
        guard let subsampling = subsampling(for: layout.format) else { return nil }
        let stride = stride(layout)
        let h = layout.size.height, chromaHeight = subsampling.chromaSize(layout.size).height
        switch layout.format {
        case .yuyv, .uyvy, .yvyu, .vyuy, .grey: return stride * h
        case .yuv420, .yvu420, .yuv422p: return stride * h + 2 * (stride / 2) * chromaHeight
        default: return stride * h + stride * chromaHeight  // semi-planar
        }
    }

    /// Bytes from one row of a frame's first plane to the next: the driver's `bytesPerLine`,
    /// or the packed width when it gave none.
    public static func stride(_ layout: FrameLayout) -> Int {
        layout.bytesPerLine > 0 ? layout.bytesPerLine : defaultStride(layout)
    }

    static func defaultStride(_ layout: FrameLayout) -> Int {
        switch layout.format {
        case .yuyv, .uyvy, .yvyu, .vyuy: return layout.size.width * 2
        default: return layout.size.width
        }
    }

    /// What `copyPlane` does to each sample: copy it, or expand it as luma or chroma.
    private enum PlaneMode { case copy, luma, chroma }

    private static func copyPlane(_ src: UnsafeBufferPointer<UInt8>, _ srcOffset: Int, _ srcStride: Int,
                                  _ out: UnsafeMutableBufferPointer<UInt8>, _ outOffset: Int, _ outStride: Int,
                                  _ width: Int, _ rows: Range<Int>, _ table: UnsafeBufferPointer<UInt8>,
                                  _ mode: PlaneMode) {
        for row in rows {
            let s = srcOffset + row * srcStride, d = outOffset + row * outStride
            var done = 0  // samples the vector path or a plain copy handled
            if let from = src.baseAddress, let to = out.baseAddress {
                switch mode {
                case .copy:
                    (to + d).update(from: from + s, count: width)
                    done = width
                case .luma, .chroma:
                    done = expandRow(from + s, into: to + d, count: width, chroma: mode == .chroma)
                }
            }
            for x in done..<width { out[d + x] = table[Int(src[s + x])] }
        }
    }
}
