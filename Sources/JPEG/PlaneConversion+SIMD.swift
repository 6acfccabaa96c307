/// Vector forms of the byte-wise table lookups in `PlaneConversion.convert`: a table
/// loop cannot vectorize, and it was ~40% of the frame-to-JPEG time.
///
/// Shaped for SSE2, the x86-64 baseline: 16-bit lanes, a high multiply (`pmulhuw`) and
/// a saturating pack (`packuswb`) that does the clamp. Swift's generic SIMD conversions
/// and clamps are easily left as scalar code or calls, so: the row functions stay out of
/// line (each loop compiles the same whatever calls it), and `saturatingNarrow` is called
/// straight from them (inside a helper called twice, the second call was not inlined).
/// After editing, check that `objdump -d` still shows `pmulhuw` and no calls in them.
/// Each returns how many samples it handled, a multiple of 16; the table loop does the rest.
extension PlaneConversion {
    /// One range-expansion table as fixed-point arithmetic on 16-bit lanes:
    /// `clamp((high16((x << 7) * multiplier) + bias) >> 6, 0, 255)`, exact for every
    /// byte (constants found by exhaustive search; tests compare all 256 with the tables).
    struct Expansion: Sendable {
        /// ≈ slope * 2^15.
        var multiplier: UInt16
        /// Intercept and the +0.5 of rounding, in 1/64ths.
        var bias: Int16

        /// `expandLuma`: (Y - 16) * 255 / 219. Computed, not stored, so it folds into the loops.
        static var luma: Expansion { Expansion(multiplier: 38154, bias: -1160) }
        /// `expandChroma`: (C - 128) * 255 / 224 + 128.
        static var chroma: Expansion { Expansion(multiplier: 37300, bias: -1101) }

        /// Expands samples 0...255 held in 16-bit lanes; the result is not yet clamped.
        @inline(__always)
        func apply(_ samples: SIMD8<UInt16>) -> SIMD8<Int16> {
            // Widen, multiply, keep the high half: LLVM matches this to `pmulhuw`.
            let product = SIMD8<UInt32>(truncatingIfNeeded: samples &<< 7) &* UInt32(multiplier)
            let high = SIMD8<Int16>(truncatingIfNeeded: product &>> 16)
            return (high &+ bias) &>> 6
        }
    }

    /// Splits and, if `expand`, range-expands whole groups of 16 pixels of one packed
    /// 4:2:2 row (YUYV and its byte orders).
    @inline(never)
    public static func convertPackedRow(_ source: UnsafeRawPointer, pixels: Int, luma: UnsafeMutablePointer<UInt8>,
                                 firstChroma: UnsafeMutablePointer<UInt8>, secondChroma: UnsafeMutablePointer<UInt8>,
                                 lumaInHighByte: Bool, expand: Bool) -> Int {
        let vectorPixels = pixels / 16 * 16
        var x = 0
        while x < vectorPixels {
            // Each little-endian 16-bit lane is one pixel: a luma byte and a chroma byte.
            let a = source.loadUnaligned(fromByteOffset: 2 * x, as: SIMD8<UInt16>.self)
            let b = source.loadUnaligned(fromByteOffset: 2 * x + 16, as: SIMD8<UInt16>.self)
            let (lumaA, lumaB) = lumaInHighByte ? (a &>> 8, b &>> 8) : (a & 0xFF, b & 0xFF)
            let (chromaA, chromaB) = lumaInHighByte ? (a & 0xFF, b & 0xFF) : (a &>> 8, b &>> 8)
            let (l, c) = (Expansion.luma, Expansion.chroma)
            let lumaBytes = expand ? saturatingNarrow(l.apply(lumaA), l.apply(lumaB)) : lowBytes(lumaA, lumaB)
            let chromaBytes = expand ? saturatingNarrow(c.apply(chromaA), c.apply(chromaB)) : lowBytes(chromaA, chromaB)
            // The chroma bytes alternate first, second: split them as 16-bit lanes again.
            let pairs = unsafeBitCast(chromaBytes, to: SIMD8<UInt16>.self)
            UnsafeMutableRawPointer(luma + x).storeBytes(of: lumaBytes, as: SIMD16<UInt8>.self)
            UnsafeMutableRawPointer(firstChroma + x / 2).storeBytes(of: lowBytes(pairs), as: SIMD8<UInt8>.self)
            UnsafeMutableRawPointer(secondChroma + x / 2).storeBytes(of: lowBytes(pairs &>> 8), as: SIMD8<UInt8>.self)
            x += 16
        }
        return vectorPixels
    }

    /// Expands whole groups of 16 samples of one row of a luma or chroma plane.
    @inline(never)
    static func expandRow(_ source: UnsafeRawPointer, into target: UnsafeMutablePointer<UInt8>,
                          count: Int, chroma: Bool) -> Int {
        // Chosen here, not passed in, so LLVM sees 16-bit constants and still uses `pmulhuw`.
        let expansion = chroma ? Expansion.chroma : Expansion.luma
        let vectorCount = count / 16 * 16
        var x = 0
        while x < vectorCount {
            // Expanded as even and odd samples, like the packed rows (widening bytes to
            // lanes directly costs LLVM the `pmulhuw`), then interleaved again.
            let lanes = source.loadUnaligned(fromByteOffset: x, as: SIMD8<UInt16>.self)
            let halves = saturatingNarrow(expansion.apply(lanes & 0xFF), expansion.apply(lanes &>> 8))
            let even = SIMD8<UInt16>(truncatingIfNeeded: halves.lowHalf)
            let odd = SIMD8<UInt16>(truncatingIfNeeded: halves.highHalf)
            UnsafeMutableRawPointer(target + x).storeBytes(of: even | odd &<< 8, as: SIMD8<UInt16>.self)
            x += 16
        }
        return vectorCount
    }

    /// Splits whole groups of 16 byte pairs of one semi-planar chroma row (NV12 and
    /// kin), expanding both samples if `expand`.
    @inline(never)
    static func splitPairRow(_ source: UnsafeRawPointer, pairs: Int, first: UnsafeMutablePointer<UInt8>,
                             second: UnsafeMutablePointer<UInt8>, expand: Bool) -> Int {
        let vectorPairs = pairs / 16 * 16
        var x = 0
        while x < vectorPairs {
            let a = source.loadUnaligned(fromByteOffset: 2 * x, as: SIMD8<UInt16>.self)
            let b = source.loadUnaligned(fromByteOffset: 2 * x + 16, as: SIMD8<UInt16>.self)
            let (firstA, firstB) = (a & 0xFF, b & 0xFF), (secondA, secondB) = (a &>> 8, b &>> 8)
            let chroma = Expansion.chroma
            let one = expand ? saturatingNarrow(chroma.apply(firstA), chroma.apply(firstB)) : lowBytes(firstA, firstB)
            let two = expand ? saturatingNarrow(chroma.apply(secondA), chroma.apply(secondB)) : lowBytes(secondA, secondB)
            UnsafeMutableRawPointer(first + x).storeBytes(of: one, as: SIMD16<UInt8>.self)
            UnsafeMutableRawPointer(second + x).storeBytes(of: two, as: SIMD16<UInt8>.self)
            x += 16
        }
        return vectorPairs
    }

    /// Clamps to 0...255 and narrows; written per lane so LLVM emits one `packuswb`
    /// (`SIMD16<UInt8>(clamping:)` and `clamped(lowerBound:upperBound:)` compile to scalar code).
    @inline(__always)
    private static func saturatingNarrow(_ low: SIMD8<Int16>, _ high: SIMD8<Int16>) -> SIMD16<UInt8> {
        let wide = SIMD16(lowHalf: low, highHalf: high)
        var result = SIMD16<UInt8>()
        for i in 0..<16 { result[i] = UInt8(truncatingIfNeeded: max(0, min(255, wide[i]))) }
        return result
    }

    /// The low byte of each lane.
    @inline(__always)
    private static func lowBytes(_ low: SIMD8<UInt16>, _ high: SIMD8<UInt16>) -> SIMD16<UInt8> {
        SIMD16<UInt8>(truncatingIfNeeded: SIMD16(lowHalf: low, highHalf: high) & 0xFF)
    }

    @inline(__always)
    private static func lowBytes(_ lanes: SIMD8<UInt16>) -> SIMD8<UInt8> {
        SIMD8<UInt8>(truncatingIfNeeded: lanes & 0xFF)
    }
}
