import VideoCore

/// Frames with motion made from the photograph, as a camera would send them.
struct PanningClip {
    let size: FrameSize
    let frames: [Frame]
    static let frameRate = 30.0

    /// One plane of the source frame, deinterleaved from YUYV.
    struct Plane {
        var samples: [UInt8]
        var width: Int
        var height: Int
    }

    /// `source` is a limited-range YUYV frame of `sourceSize`; the window (90% of it) moves
    /// from its left edge to its right and from a quarter to three quarters of its free height.
    /// `noise` is the standard deviation, in luma levels, of noise new in every frame.
    init(source: [UInt8], sourceSize: FrameSize, size: FrameSize, count: Int, noise: Double) {
        let (sw, sh) = (sourceSize.width, sourceSize.height)
        var luma = Plane(samples: [UInt8](repeating: 0, count: sw * sh), width: sw, height: sh)
        var cb = Plane(samples: [UInt8](repeating: 0, count: sw / 2 * sh), width: sw / 2, height: sh)
        var cr = cb
        for i in 0..<(sw * sh) { luma.samples[i] = source[2 * i] }
        for i in 0..<(sw / 2 * sh) {
            cb.samples[i] = source[4 * i + 1]
            cr.samples[i] = source[4 * i + 3]
        }
        let window = 0.9, scale = Double(sw) * window / Double(size.width)
        let freeWidth = Double(sw) * (1 - window), freeHeight = Double(sh) * (1 - window)
        let noiseTable = Self.noiseTable(deviation: noise)
        var random = SplitMix64(seed: 0x6361_6d64)
        var frames: [Frame] = []
        frames.reserveCapacity(count)
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited)
        for index in 0..<count {
            let t = count > 1 ? Double(index) / Double(count - 1) : 0
            let (x0, y0) = (t * freeWidth, (0.25 + 0.5 * t) * freeHeight)
            var bytes = [UInt8](repeating: 0, count: size.width * size.height * 2)
            bytes.withUnsafeMutableBufferPointer { out in
                let base = out.baseAddress!
                Self.resample(luma, originX: x0, originY: y0, scale: scale, width: size.width, height: size.height,
                              into: base, step: 2)
                Self.resample(cb, originX: x0 / 2, originY: y0, scale: scale, width: size.width / 2, height: size.height,
                              into: base + 1, step: 4)
                Self.resample(cr, originX: x0 / 2, originY: y0, scale: scale, width: size.width / 2, height: size.height,
                              into: base + 3, step: 4)
                if !noiseTable.isEmpty {
                    for i in stride(from: 0, to: out.count, by: 2) {
                        let noisy = Int(out[i]) + Int(noiseTable[Int(truncatingIfNeeded: random.next() & 0xFFFF)])
                        out[i] = UInt8(min(235, max(16, noisy)))
                    }
                }
            }
            let time = Double(index) / Self.frameRate
            frames.append(Frame(layout: layout, bytes: bytes, sequence: UInt32(index), monotonicTime: 1000 + time,
                                captureTime: 1_700_000_000 + time))
        }
        self.size = size
        self.frames = frames
    }

    /// Samples `plane` bilinearly at output pixel centres mapped through `scale` from the
    /// window's origin, and writes every `step`th byte of `out`, row after row.
    static func resample(_ plane: Plane, originX: Double, originY: Double, scale: Double, width: Int, height: Int,
                         into out: UnsafeMutablePointer<UInt8>, step: Int) {
        func taps(_ count: Int, origin: Double, limit: Int) -> [(Int, Int)] {
            (0..<count).map { i in
                let position = max(0, min(Double(limit - 1), origin + (Double(i) + 0.5) * scale - 0.5))
                let first = min(Int(position), limit - 2)
                return (first, Int(((position - Double(first)) * 256).rounded()))
            }
        }
        let columns = taps(width, origin: originX, limit: plane.width)
        let rows = taps(height, origin: originY, limit: plane.height)
        plane.samples.withUnsafeBufferPointer { samples in
            for (y, (row, wy)) in rows.enumerated() {
                let top = samples.baseAddress! + row * plane.width, bottom = top + plane.width
                let line = out + y * width * step
                for (x, (column, wx)) in columns.enumerated() {
                    let upper = Int(top[column]) * (256 - wx) + Int(top[column + 1]) * wx
                    let lower = Int(bottom[column]) * (256 - wx) + Int(bottom[column + 1]) * wx
                    line[x * step] = UInt8((upper * (256 - wy) + lower * wy + 32768) >> 16)
                }
            }
        }
    }

    /// 65536 values of roughly normal noise (the sum of four uniform draws), rounded to levels.
    static func noiseTable(deviation: Double) -> [Int8] {
        guard deviation > 0 else { return [] }
        var random = SplitMix64(seed: 0x6e6f_6973_65)
        // Four uniform draws on [0, 1) sum to a variance of 4/12.
        let unit = deviation / (4.0 / 12).squareRoot()
        return (0..<65536).map { _ in
            let sum = (0..<4).reduce(0.0) { total, _ in total + Double(random.next() >> 11) / Double(1 << 53) }
            return Int8(max(-127, min(127, ((sum - 2) * unit).rounded())))
        }
    }
}

/// A small, seeded generator, so every run sees the same noise.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
