import VideoCore

/// Scales planes of 8-bit samples with a separable filter (`nearest`,
/// `bilinear` or `area`): rows first, then columns, in 14-bit fixed point.
///
/// `area` gives each output sample the average of the source area it covers
/// (a box filter), so a thumbnail of fine detail comes out as its mean instead
/// of the aliasing `nearest` and `bilinear` give when shrinking by more than 2.
///
/// Keeps its filter tables and scratch rows between calls, so steady use
/// allocates nothing. Not thread-safe: one per worker, like `JPEGEncoder`.
public final class Resampler {
    private var horizontal = Taps()
    private var vertical = Taps()
    /// The rows pass's output, before the columns pass.
    private var rows: [UInt8] = []
    /// Column sums: 16-bit for 8-bit weights, 32-bit for 14-bit ones.
    private var narrowSums: [UInt16] = []
    private var wideSums: [UInt32] = []

    public init() {}

    /// Scales `region` of `source` (all of it when nil) to `size` into `output`,
    /// keeping the source's chroma subsampling.
    public func resize(_ source: YUVImage, region: Geometry.Rect? = nil, to size: FrameSize,
                       interpolation: Geometry.Interpolation, into output: inout YUVImage) {
        let r = region.map { (Double($0.x), Double($0.y), Double($0.width), Double($0.height)) }
            ?? (0, 0, Double(source.size.width), Double(source.size.height))
        output.reshape(size, source.subsampling)
        draw(source, region: r, interpolation: interpolation, into: &output,
             at: Geometry.Rect(x: 0, y: 0, width: size.width, height: size.height))
    }

    /// Scales `region` (in luma pixels, possibly fractional) of `source` into the
    /// rectangle `target` of `output`, whose geometry is already set. Chroma is
    /// resampled from the source's subsampling to the output's, so this also
    /// turns 4:2:2 into 4:2:0; a grey source gives neutral chroma.
    /// `target`'s origin must be even where the output's chroma is subsampled.
    func draw(_ source: YUVImage, region: (x: Double, y: Double, width: Double, height: Double),
              interpolation: Geometry.Interpolation, into output: inout YUVImage, at target: Geometry.Rect) {
        let planes = output.subsampling == .gray ? 1 : 3
        let (sfx, sfy) = source.subsampling.factors
        let (dfx, dfy) = output.subsampling.factors
        for plane in 0..<planes {
            // The target rectangle in this plane's samples.
            let tx = plane == 0 ? target.x : target.x / dfx
            let ty = plane == 0 ? target.y : target.y / dfy
            let tw = plane == 0 ? target.width : (target.width + dfx - 1) / dfx
            let th = plane == 0 ? target.height : (target.height + dfy - 1) / dfy
            let dstOffset = output.offset(plane) + ty * output.stride(plane) + tx, dstStride = output.stride(plane)
            if plane > 0 && source.subsampling == .gray {
                output.fillPlane(plane, x: tx, y: ty, width: tw, height: th, value: 128)
                continue
            }
            var r = region
            if plane > 0 {
                // An odd-sized target's last chroma sample covers one luma pixel past
                // it; stretch the source region to match so chroma stays registered.
                let over = (x: Double(tw * dfx) / Double(target.width), y: Double(th * dfy) / Double(target.height))
                r = (region.x / Double(sfx), region.y / Double(sfy),
                     region.width / Double(sfx) * over.x, region.height / Double(sfy) * over.y)
            }
            let (sw, sh, srcOffset, srcStride) = (source.stride(plane), source.planeHeight(plane), source.offset(plane), source.stride(plane))
            source.storage.withUnsafeBufferPointer { src in
                output.storage.withUnsafeMutableBufferPointer { dst in
                    resamplePlane(src, offset: srcOffset, stride: srcStride, width: sw, height: sh, region: r,
                                  into: dst, offset: dstOffset, stride: dstStride, width: tw, height: th,
                                  interpolation: interpolation)
                }
            }
        }
    }

    /// Scales one plane's `region` into a `width`×`height` block of `dst`.
    func resamplePlane(_ src: UnsafeBufferPointer<UInt8>, offset srcOffset: Int, stride srcStride: Int,
                       width sourceWidth: Int, height sourceHeight: Int,
                       region: (x: Double, y: Double, width: Double, height: Double),
                       into dst: UnsafeMutableBufferPointer<UInt8>, offset dstOffset: Int, stride dstStride: Int,
                       width: Int, height: Int, interpolation: Geometry.Interpolation) {
        guard width > 0, height > 0, sourceWidth > 0, sourceHeight > 0 else { return }
        horizontal.compute(interpolation, origin: region.x, length: region.width, extent: sourceWidth, count: width, bits: 14)
        // 8-bit weights down the columns keep every sum inside UInt16 (255 * 256 + 128), so
        // that pass runs eight or sixteen samples per SIMD instruction even on baseline x86-64.
        // Beyond 16:1 the weights get too small for 8 bits; those rare shrinks use 14 bits and UInt32.
        let coarse = region.height / Double(height) <= 16
        vertical.compute(interpolation, origin: region.y, length: region.height, extent: sourceHeight, count: height,
                         bits: coarse ? 8 : 14)

        if horizontal.isIdentity && vertical.isIdentity {
            let left = horizontal.lowest, top = vertical.lowest
            for row in 0..<height {
                let s = srcOffset + (top + row) * srcStride + left, d = dstOffset + row * dstStride
                UnsafeMutableRawPointer(dst.baseAddress! + d).copyMemory(from: src.baseAddress! + s, byteCount: width)
            }
        } else if horizontal.isIdentity {
            columnsPass(src, offset: srcOffset + horizontal.lowest, stride: srcStride, firstRow: 0,
                        into: dst, offset: dstOffset, stride: dstStride, width: width, height: height)
        } else if vertical.isIdentity {
            rowsPass(src, offset: srcOffset, stride: srcStride, rows: vertical.lowest..<vertical.highest,
                     into: dst, offset: dstOffset, stride: dstStride, width: width)
        } else {
            // The columns pass vectorises and the rows pass does not, so when shrinking
            // down the frame filter the columns first and leave the rows pass only the output rows.
            let needed = vertical.lowest..<vertical.highest, span = horizontal.highest - horizontal.lowest
            let rowsFirst = needed.count * width * horizontal.width + height * width * vertical.width / 8
            let columnsFirst = height * span * vertical.width / 8 + height * width * horizontal.width
            if columnsFirst < rowsFirst {
                if rows.count < span * height { rows = [UInt8](repeating: 0, count: span * height) }
                rows.withUnsafeMutableBufferPointer { scratch in
                    columnsPass(src, offset: srcOffset + horizontal.lowest, stride: srcStride, firstRow: 0,
                                into: scratch, offset: 0, stride: span, width: span, height: height)
                    // The rows pass indexes from column 0 of the plane; the scratch starts at `lowest`.
                    rowsPass(UnsafeBufferPointer(scratch), offset: -horizontal.lowest, stride: span, rows: 0..<height,
                             into: dst, offset: dstOffset, stride: dstStride, width: width)
                }
            } else {
                if rows.count < width * needed.count { rows = [UInt8](repeating: 0, count: width * needed.count) }
                rows.withUnsafeMutableBufferPointer { scratch in
                    rowsPass(src, offset: srcOffset, stride: srcStride, rows: needed,
                             into: scratch, offset: 0, stride: width, width: width)
                    columnsPass(UnsafeBufferPointer(scratch), offset: 0, stride: width, firstRow: needed.lowerBound,
                                into: dst, offset: dstOffset, stride: dstStride, width: width, height: height)
                }
            }
        }
    }

    /// Filters each of `rows` across, writing them one after another from `dstOffset`.
    private func rowsPass(_ src: UnsafeBufferPointer<UInt8>, offset srcOffset: Int, stride srcStride: Int, rows: Range<Int>,
                          into dst: UnsafeMutableBufferPointer<UInt8>, offset dstOffset: Int, stride dstStride: Int, width: Int) {
        let taps = horizontal.width, bits = horizontal.bits, half: Int32 = 1 << (bits - 1)
        horizontal.starts.withUnsafeBufferPointer { starts in
            horizontal.weights.withUnsafeBufferPointer { weights in
                guard let source = src.baseAddress, let target = dst.baseAddress,
                      let first = starts.baseAddress, let taps0 = weights.baseAddress else { return }
                for (index, row) in rows.enumerated() {
                    let line = source + srcOffset + row * srcStride
                    let out = target + dstOffset + index * dstStride
                    if taps == 1 {
                        for x in 0..<width { out[x] = line[first[x]] }
                        continue
                    }
                    var weight = taps0
                    for x in 0..<width {
                        let from = line + first[x]
                        var sum = half
                        for k in 0..<taps { sum &+= weight[k] &* Int32(from[k]) }
                        weight += taps
                        out[x] = UInt8(truncatingIfNeeded: Swift.min(sum &>> bits, 255))
                    }
                }
            }
        }
    }

    /// Filters down the columns: output row i mixes source rows `starts[i] - firstRow ...`.
    private func columnsPass(_ src: UnsafeBufferPointer<UInt8>, offset srcOffset: Int, stride srcStride: Int, firstRow: Int,
                             into dst: UnsafeMutableBufferPointer<UInt8>, offset dstOffset: Int, stride dstStride: Int,
                             width: Int, height: Int) {
        if vertical.bits <= 8 {
            if narrowSums.count < width { narrowSums = [UInt16](repeating: 0, count: width) }
            narrowSums.withUnsafeMutableBufferPointer { sums in
                columnsPass(src, offset: srcOffset, stride: srcStride, firstRow: firstRow, into: dst, offset: dstOffset,
                            stride: dstStride, width: width, height: height, sums: sums)
            }
        } else {
            if wideSums.count < width { wideSums = [UInt32](repeating: 0, count: width) }
            wideSums.withUnsafeMutableBufferPointer { sums in
                columnsPass(src, offset: srcOffset, stride: srcStride, firstRow: firstRow, into: dst, offset: dstOffset,
                            stride: dstStride, width: width, height: height, sums: sums)
            }
        }
    }

    /// The columns pass with `Sum` accumulators (specialised for UInt16 and UInt32).
    private func columnsPass<Sum: FixedWidthInteger & UnsignedInteger>(
        _ src: UnsafeBufferPointer<UInt8>, offset srcOffset: Int, stride srcStride: Int, firstRow: Int,
        into dst: UnsafeMutableBufferPointer<UInt8>, offset dstOffset: Int, stride dstStride: Int,
        width: Int, height: Int, sums: UnsafeMutableBufferPointer<Sum>) {
        let taps = vertical.width, bits = Sum(vertical.bits), half: Sum = 1 << (bits - 1)
        vertical.starts.withUnsafeBufferPointer { starts in
            vertical.weights.withUnsafeBufferPointer { weights in
                guard let source = src.baseAddress, let target = dst.baseAddress, let sum = sums.baseAddress else { return }
                for i in 0..<height {
                    let out = target + dstOffset + i * dstStride
                    let top = source + srcOffset + (starts[i] - firstRow) * srcStride
                    if taps == 1 {
                        out.update(from: top, count: width)
                        continue
                    }
                    sum.update(repeating: half, count: width)
                    for k in 0..<taps {
                        let weight = Sum(truncatingIfNeeded: weights[i * taps + k])
                        if weight == 0 { continue }
                        let line = top + k * srcStride
                        // Wrapping arithmetic over plain pointers: the compiler vectorises this loop.
                        for x in 0..<width { sum[x] = sum[x] &+ weight &* Sum(line[x]) }
                    }
                    for x in 0..<width { out[x] = UInt8(truncatingIfNeeded: sum[x] &>> bits) }
                }
            }
        }
    }

    /// For each output sample of one direction: the first source sample and
    /// `width` weights for it and the ones after, summing to 1 << `bits`.
    struct Taps {
        var bits: Int32 = 14
        var one: Int32 { 1 << bits }
        var starts: [Int] = []
        var weights: [Int32] = []
        /// One output's weights before fixed point, reused.
        private var fractions: [Double] = []
        var width = 1
        /// A plain copy of whole samples: no filtering needed.
        var isIdentity = false
        /// The source samples the taps reach, `lowest..<highest`.
        var lowest = 0, highest = 0

        mutating func compute(_ interpolation: Geometry.Interpolation, origin: Double, length: Double, extent: Int, count: Int, bits: Int32) {
            self.bits = bits
            starts.removeAll(keepingCapacity: true)
            weights.removeAll(keepingCapacity: true)
            let scale = length / Double(count)
            isIdentity = Double(count) == length && origin == origin.rounded(.down) && origin >= 0 && Int(origin) + count <= extent
            switch interpolation {
            case _ where isIdentity: width = 1
            case .nearest: width = 1
            case .bilinear: width = 2
            case .area:
                // A whole-number scale from a whole-sample origin never straddles an extra sample.
                let aligned = scale == scale.rounded() && origin == origin.rounded()
                width = Int(scale.rounded(.up)) + (aligned ? 0 : 1)
            }
            width = Swift.max(1, Swift.min(width, extent))
            if fractions.count < width { fractions = [Double](repeating: 0, count: width) }
            lowest = Int.max
            highest = 0
            for i in 0..<count {
                let base = weights.count
                weights.append(contentsOf: repeatElement(0, count: width))
                switch interpolation {
                case _ where isIdentity:
                    place(Int(origin) + i, 1, base: base, extent: extent, first: Int(origin) + i)
                case .nearest:
                    let j = Int((origin + (Double(i) + 0.5) * scale).rounded(.down))
                    place(j, 1, base: base, extent: extent, first: j)
                case .bilinear:
                    let centre = origin + (Double(i) + 0.5) * scale - 0.5
                    let j = Int(centre.rounded(.down)), f = centre - Double(j)
                    let first = clamp(j, extent)
                    place(j, 1 - f, base: base, extent: extent, first: first)
                    place(j + 1, f, base: base, extent: extent, first: first)
                case .area:
                    let a = origin + Double(i) * scale, b = a + scale
                    let j0 = Int(a.rounded(.down)), j1 = Int(b.rounded(.up))
                    let first = clamp(j0, extent)
                    for j in j0..<Swift.max(j1, j0 + 1) {
                        let overlap = Swift.min(b, Double(j + 1)) - Swift.max(a, Double(j))
                        if overlap > 1e-9 { place(j, overlap / scale, base: base, extent: extent, first: first) }
                    }
                }
                quantize(base)
                lowest = Swift.min(lowest, starts[i])
                highest = Swift.max(highest, starts[i] + width)
            }
        }

        private func clamp(_ j: Int, _ extent: Int) -> Int { Swift.max(0, Swift.min(j, extent - 1)) }

        /// Adds `weight` for source sample `j` (clamped to the plane) to the taps of the
        /// output whose weights start at `base`; `first` fixes where those taps begin.
        private mutating func place(_ j: Int, _ weight: Double, base: Int, extent: Int, first: Int) {
            if starts.count == base / width { starts.append(Swift.max(0, Swift.min(first, extent - width))) }
            let start = starts[base / width]
            // Rounding in `a + scale` can reach one sample past the span; keep it inside.
            let index = Swift.max(0, Swift.min(clamp(j, extent) - start, width - 1))
            fractions[index] += weight
        }

        /// Turns one output's weights into fixed point summing to exactly `one`, so flat
        /// areas stay flat. Rounding the running total spreads the error: each weight is
        /// off by less than one unit, even when a thousand of them share the sum.
        private mutating func quantize(_ base: Int) {
            if starts.count == base / width { starts.append(0); fractions[0] = 1 }
            var total = 0.0
            for k in 0..<width { total += fractions[k] }
            var running = 0.0, previous: Int32 = 0
            for k in 0..<width {
                running += fractions[k] / total
                let rounded = k == width - 1 ? one : Int32((running * Double(one)).rounded())
                weights[base + k] = rounded - previous
                previous = rounded
                fractions[k] = 0
            }
        }
    }
}

extension ChromaSubsampling {
    /// How many luma samples one chroma sample spans, across and down.
    var factors: (x: Int, y: Int) {
        switch self {
        case .s444, .gray: return (1, 1)
        case .s422: return (2, 1)
        case .s420: return (2, 2)
        }
    }
}
