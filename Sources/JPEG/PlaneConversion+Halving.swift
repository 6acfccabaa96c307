extension PlaneConversion {
    /// Averages one chroma plane down to 4:2:0 for the encoder (`JPEGChroma.halved`): each
    /// output sample is the mean of the two rows it covers (4:2:2), or of the 2x2 block (4:4:4),
    /// so the chroma sits between the rows as JFIF places it. A last odd row or column stands
    /// for itself. Rounding alternates from row to row, up then down, as libjpeg's
    /// downsampling alternates its bias, so a flat plane keeps its mean.
    ///
    /// By hand because TurboJPEG only subsamples what it converts from RGB itself; planes
    /// handed to `tjCompressFromYUVPlanes` are encoded in the subsampling they come in.
    /// `source` holds `rows` rows of `width` samples (the source plane's chroma width) `stride`
    /// bytes apart; `target` gets `(rows + 1) / 2` rows, packed, of `(width + 1) / 2` samples
    /// `horizontally`, else of `width`.
    static func halveChroma(_ source: UnsafePointer<UInt8>, stride: Int, width: Int, rows: Int, horizontally: Bool,
                            into target: UnsafeMutablePointer<UInt8>) {
        let outWidth = horizontally ? (width + 1) / 2 : width
        for row in 0..<(rows + 1) / 2 {
            let upper = source + 2 * row * stride, lower = 2 * row + 1 < rows ? upper + stride : upper
            let out = target + row * outWidth
            let roundUp = row % 2 == 0
            if horizontally {
                // 4:4:4 comes only from decoded or RGB-sourced planes, never from a camera's
                // steady Y'CbCr stream, so a plain loop is enough here.
                let bias = roundUp ? 2 : 1
                for x in 0..<outWidth {
                    let left = 2 * x, right = min(2 * x + 1, width - 1)
                    let sum = Int(upper[left]) + Int(upper[right]) + Int(lower[left]) + Int(lower[right])
                    out[x] = UInt8(truncatingIfNeeded: (sum + bias) >> 2)
                }
            } else {
                let done = averageRows(upper, lower, into: out, count: width, roundUp: roundUp)
                for x in done..<width { out[x] = mean(upper[x], lower[x], roundUp: roundUp) }
            }
        }
    }

    /// `target[x]` becomes the mean of itself and `other[x]`, rounded as `halveChroma` rounds.
    static func averageInto(_ target: UnsafeMutablePointer<UInt8>, _ other: UnsafePointer<UInt8>, count: Int, roundUp: Bool) {
        let done = averageRows(target, other, into: target, count: count, roundUp: roundUp)
        for x in done..<count { target[x] = mean(target[x], other[x], roundUp: roundUp) }
    }

    @inline(__always)
    private static func mean(_ a: UInt8, _ b: UInt8, roundUp: Bool) -> UInt8 {
        UInt8(truncatingIfNeeded: (Int(a) + Int(b) + (roundUp ? 1 : 0)) >> 1)
    }

    /// Whole groups of 16 of `halveChroma`'s vertical mean, on bytes without widening:
    /// (a | b) - ((a ^ b) >> 1) rounds up, (a & b) + ((a ^ b) >> 1) rounds down.
    @inline(never)
    static func averageRows(_ upper: UnsafePointer<UInt8>, _ lower: UnsafePointer<UInt8>, into target: UnsafeMutablePointer<UInt8>,
                            count: Int, roundUp: Bool) -> Int {
        let vectorCount = count / 16 * 16
        var x = 0
        while x < vectorCount {
            let a = UnsafeRawPointer(upper + x).loadUnaligned(as: SIMD16<UInt8>.self)
            let b = UnsafeRawPointer(lower + x).loadUnaligned(as: SIMD16<UInt8>.self)
            let half = (a ^ b) &>> 1
            let mean = roundUp ? (a | b) &- half : (a & b) &+ half
            UnsafeMutableRawPointer(target + x).storeBytes(of: mean, as: SIMD16<UInt8>.self)
            x += 16
        }
        return vectorCount
    }
}
