import CamdTestSupport
@testable import JPEG
import Testing
import VideoCore

@Suite struct RangeExpansionTests {
    @Test func limitedBlackAndWhiteBecomeFullRange() {
        #expect(PlaneConversion.expandLuma[16] == 0)
        #expect(PlaneConversion.expandLuma[235] == 255)
        #expect(PlaneConversion.expandLuma[0] == 0)  // below black clamps
        #expect(PlaneConversion.expandLuma[255] == 255)
        // vivid's 75% grey bar: Y' = 16 + 219 * 0.75 = 180 in limited range, 191 in full.
        #expect(PlaneConversion.expandLuma[180] == 191)
        #expect(PlaneConversion.expandChroma[128] == 128)
        #expect(PlaneConversion.expandChroma[16] <= 1)  // (16 - 128) * 255 / 224 + 128 = 0.5
        #expect(PlaneConversion.expandChroma[240] == 255)
    }
}

@Suite struct PlaneConversionTests {
    /// Two pixels of YUYV: Y0=16 (black), Y1=235 (white), Cb=16, Cr=240, limited range.
    @Test func yuyvDeinterleavesAndExpands() {
        let bytes: [UInt8] = [16, 16, 235, 240, 180, 128, 180, 128]  // 2x2 pixels, two rows
        let layout = FrameLayout(format: .yuyv, size: FrameSize(width: 2, height: 2), bytesPerLine: 4, range: .limited)
        var image = YUVImage()
        let handled = bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: layout, into: &image) }
        #expect(handled)
        #expect(image.subsampling == .s422)
        #expect(image.sample(plane: 0, x: 0, y: 0) == 0)
        #expect(image.sample(plane: 0, x: 1, y: 0) == 255)
        #expect(image.sample(plane: 1, x: 0, y: 0) <= 1)
        #expect(image.sample(plane: 2, x: 0, y: 0) == 255)
        #expect(image.sample(plane: 0, x: 0, y: 1) == 191)
        #expect(image.sample(plane: 1, x: 0, y: 1) == 128)
    }

    @Test func uyvyReadsItsOwnOrder() {
        let bytes: [UInt8] = [16, 16, 240, 235]  // U Y0 V Y1
        let layout = FrameLayout(format: .uyvy, size: FrameSize(width: 2, height: 1), bytesPerLine: 4, range: .full)
        var image = YUVImage()
        _ = bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: layout, into: &image) }
        #expect(image.sample(plane: 0, x: 0, y: 0) == 16)  // full range: unchanged
        #expect(image.sample(plane: 0, x: 1, y: 0) == 235)
        #expect(image.sample(plane: 1, x: 0, y: 0) == 16)
        #expect(image.sample(plane: 2, x: 0, y: 0) == 240)
    }

    @Test func stridePaddingIsSkipped() {
        // 2x2 YUYV with 4 bytes of padding on each line.
        let bytes: [UInt8] = [100, 110, 102, 120, 9, 9, 9, 9, 104, 130, 106, 140, 9, 9, 9, 9]
        let layout = FrameLayout(format: .yuyv, size: FrameSize(width: 2, height: 2), bytesPerLine: 8, range: .full)
        var image = YUVImage()
        _ = bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: layout, into: &image) }
        #expect(image.sample(plane: 0, x: 0, y: 1) == 104)
        #expect(image.sample(plane: 2, x: 0, y: 1) == 140)
    }

    @Test func nv21SwapsChroma() {
        // 2x2 luma, then one V,U pair.
        let bytes: [UInt8] = [50, 60, 70, 80, 200, 100]
        let layout = FrameLayout(format: .nv21, size: FrameSize(width: 2, height: 2), bytesPerLine: 2, range: .full)
        var image = YUVImage()
        _ = bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: layout, into: &image) }
        #expect(image.subsampling == .s420)
        #expect(image.sample(plane: 0, x: 1, y: 1) == 80)
        #expect(image.sample(plane: 1, x: 0, y: 0) == 100)
        #expect(image.sample(plane: 2, x: 0, y: 0) == 200)
    }

    @Test func yvu420SwapsPlanes() {
        let bytes: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, /* V */ 200, 201, 202, 203, /* U */ 100, 101, 102, 103]
        let layout = FrameLayout(format: .yvu420, size: FrameSize(width: 4, height: 4), bytesPerLine: 4, range: .full)
        var image = YUVImage()
        _ = bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: layout, into: &image) }
        #expect(image.sample(plane: 1, x: 1, y: 1) == 103)
        #expect(image.sample(plane: 2, x: 0, y: 0) == 200)
    }

    @Test func requiredBytesCoversAllPlanes() {
        let size = FrameSize(width: 640, height: 480)
        #expect(PlaneConversion.requiredBytes(FrameLayout(format: .yuyv, size: size, bytesPerLine: 1280, range: .limited)) == 614_400)
        #expect(PlaneConversion.requiredBytes(FrameLayout(format: .nv12, size: size, bytesPerLine: 640, range: .limited)) == 460_800)
        #expect(PlaneConversion.requiredBytes(FrameLayout(format: .yuv420, size: size, bytesPerLine: 640, range: .limited)) == 460_800)
        #expect(PlaneConversion.requiredBytes(FrameLayout(format: .rgb24, size: size, bytesPerLine: 1920, range: .full)) == nil)
    }
}

/// The vector paths of `PlaneConversion` against a per-pixel reference written
/// independently of them (formulas and byte orders spelled out here).
@Suite struct VectorConversionTests {
    @Test func tablesMatchTheirFormulas() {
        for value in 0...255 {
            #expect(PlaneConversion.expandLuma[value] == referenceLuma(UInt8(value)), "Y \(value)")
            #expect(PlaneConversion.expandChroma[value] == referenceChroma(UInt8(value)), "C \(value)")
        }
    }

    /// Every byte through the planar vector path, as luma and as chroma.
    @Test func planeRowsExpandEveryByte() {
        let bytes = (0...255).map { UInt8($0) }
        for chroma in [false, true] {
            var out = [UInt8](repeating: 0, count: 256)
            let done = bytes.withUnsafeBytes { source in
                out.withUnsafeMutableBufferPointer {
                    PlaneConversion.expandRow(source.baseAddress!, into: $0.baseAddress!, count: 256, chroma: chroma)
                }
            }
            #expect(done == 256)
            #expect(out == bytes.map { chroma ? referenceChroma($0) : referenceLuma($0) }, "chroma: \(chroma)")
        }
    }

    /// Every byte through the packed vector path, as luma and in both chroma positions.
    @Test func packedRowsExpandEveryByte() {
        // 512 YUYV pixels: Y0 = i, Y1 = 255 - i, Cb = i, Cr = 255 - i for pair i.
        let bytes: [UInt8] = (0..<256).flatMap { (i: Int) -> [UInt8] in
            let up = UInt8(i), down = UInt8(255 - i)
            return [up, up, down, down]
        }
        var luma = [UInt8](repeating: 0, count: 512), cb = [UInt8](repeating: 0, count: 256)
        var cr = [UInt8](repeating: 0, count: 256)
        let done = bytes.withUnsafeBytes { source in
            luma.withUnsafeMutableBufferPointer { y in
                cb.withUnsafeMutableBufferPointer { u in
                    cr.withUnsafeMutableBufferPointer { v in
                        PlaneConversion.convertPackedRow(source.baseAddress!, pixels: 512, luma: y.baseAddress!,
                                                         firstChroma: u.baseAddress!, secondChroma: v.baseAddress!,
                                                         lumaInHighByte: false, expand: true)
                    }
                }
            }
        }
        #expect(done == 512)
        let expectedLuma: [UInt8] = (0..<256).flatMap { (i: Int) -> [UInt8] in
            [referenceLuma(UInt8(i)), referenceLuma(UInt8(255 - i))]
        }
        #expect(luma == expectedLuma)
        #expect(cb == (0..<256).map { referenceChroma(UInt8($0)) })
        #expect(cr == (0..<256).map { referenceChroma(UInt8(255 - $0)) })
    }

    static let widths = [2, 30, 34, 66, 642]  // below, between and just past multiples of 16
    static let paddings = [0, 3, 64]  // tight, odd (unaligned rows), wide

    @Test(arguments: [PixelFormat.yuyv, .uyvy, .yvyu, .vyuy])
    func packedFramesMatchPerPixelReference(format: PixelFormat) {
        // Where Y0, Cb (U), Y1, Cr (V) sit in each 4-byte group: the fourCC spells it.
        let order = Array(format.fourCC)
        let y0 = order.firstIndex(of: "Y")!, y1 = order.lastIndex(of: "Y")!
        let u = order.firstIndex(of: "U")!, v = order.firstIndex(of: "V")!
        var random = SplitMix64(seed: 42)
        for width in Self.widths {
            for padding in Self.paddings {
                for range in [ColorRange.limited, .full] {
                    let height = 3, stride = width * 2 + padding
                    let bytes = random.bytes(stride * height)
                    let (expandY, expandC) = expansions(range)
                    var y: [UInt8] = [], cb: [UInt8] = [], cr: [UInt8] = []
                    for row in 0..<height {
                        for pair in 0..<width / 2 {
                            let p = row * stride + pair * 4
                            y += [expandY(bytes[p + y0]), expandY(bytes[p + y1])]
                            cb.append(expandC(bytes[p + u]))
                            cr.append(expandC(bytes[p + v]))
                        }
                    }
                    let layout = FrameLayout(format: format, size: FrameSize(width: width, height: height),
                                             bytesPerLine: stride, range: range)
                    expectConversion(bytes, layout, equals: [y, cb, cr])
                }
            }
        }
    }

    @Test(arguments: [PixelFormat.grey, .yuv420, .yvu420, .yuv422p, .nv12, .nv21, .nv16, .nv61])
    func planarFramesMatchPerPixelReference(format: PixelFormat) {
        var random = SplitMix64(seed: 7)
        for width in Self.widths {
            for padding in Self.paddings {
                for range in [ColorRange.limited, .full] {
                    let height = 3, stride = width + padding
                    let chromaWidth = (width + 1) / 2
                    let chromaHeight = [.yuv420, .yvu420, .nv12, .nv21].contains(format) ? (height + 1) / 2 : height
                    let planar = [.yuv420, .yvu420, .yuv422p].contains(format)
                    let chromaBytes = format == .grey ? 0 : planar ? 2 * (stride / 2) * chromaHeight : stride * chromaHeight
                    let bytes = random.bytes(stride * height + chromaBytes)
                    let (expandY, expandC) = expansions(range)
                    var y: [UInt8] = [], cb: [UInt8] = [], cr: [UInt8] = []
                    for row in 0..<height {
                        y += (0..<width).map { expandY(bytes[row * stride + $0]) }
                    }
                    let base = stride * height
                    for row in 0..<(format == .grey ? 0 : chromaHeight) {
                        for x in 0..<chromaWidth {
                            let first: UInt8, second: UInt8
                            if planar {
                                let plane = (stride / 2) * chromaHeight, at = base + row * (stride / 2) + x
                                (first, second) = (bytes[at], bytes[at + plane])
                            } else {
                                let at = base + row * stride + 2 * x
                                (first, second) = (bytes[at], bytes[at + 1])
                            }
                            let swapped = [.yvu420, .nv21, .nv61].contains(format)
                            cb.append(expandC(swapped ? second : first))
                            cr.append(expandC(swapped ? first : second))
                        }
                    }
                    let layout = FrameLayout(format: format, size: FrameSize(width: width, height: height),
                                             bytesPerLine: stride, range: range)
                    expectConversion(bytes, layout, equals: [y, cb, cr])
                }
            }
        }
    }

    private func expectConversion(_ bytes: [UInt8], _ layout: FrameLayout, equals planes: [[UInt8]],
                                  sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(PlaneConversion.requiredBytes(layout) == bytes.count, sourceLocation: sourceLocation)
        var image = YUVImage()
        let handled = bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: layout, into: &image) }
        #expect(handled, sourceLocation: sourceLocation)
        for (plane, expected) in planes.enumerated() {
            let start = image.offset(plane)
            let actual = Array(image.storage[start..<start + expected.count])
            // Name the first wrong sample rather than print whole planes.
            let wrong = expected.indices.first { actual[$0] != expected[$0] }
            #expect(wrong == nil, """
                \(layout) stride \(layout.bytesPerLine) \(layout.range): plane \(plane) sample \(wrong ?? 0) \
                is \(actual[wrong ?? 0]), want \(expected[wrong ?? 0])
                """, sourceLocation: sourceLocation)
        }
    }
}

/// round((Y - 16) * 255 / 219), clamped: limited-range luma in full range.
private func referenceLuma(_ value: UInt8) -> UInt8 {
    let scaled = (Double(value) - 16) * 255 / 219
    return UInt8(max(0, min(255, scaled.rounded())))
}

/// round((C - 128) * 255 / 224 + 128), clamped.
private func referenceChroma(_ value: UInt8) -> UInt8 {
    let scaled = (Double(value) - 128) * 255 / 224 + 128
    return UInt8(max(0, min(255, scaled.rounded())))
}

private func expansions(_ range: ColorRange) -> (luma: (UInt8) -> UInt8, chroma: (UInt8) -> UInt8) {
    let unchanged: (UInt8) -> UInt8 = { $0 }
    return range == .limited ? (referenceLuma, referenceChroma) : (unchanged, unchanged)
}
