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
