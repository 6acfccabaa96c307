@testable import JPEG
import Testing
import VideoCore

/// A raw frame converted at a box reduction: every sample is the mean of its box,
/// and the thumbnail path picks the largest reduction that still has the pixels.
@Suite struct ReducedConversionTests {
    /// A packed 4:2:2 frame of seeded random samples, with padding at the end of each line.
    func frame(_ format: PixelFormat, width: Int, height: Int, padding: Int = 6) -> (bytes: [UInt8], layout: FrameLayout) {
        var state: UInt32 = 12345
        let stride = width * 2 + padding
        let bytes = (0..<(stride * height)).map { _ -> UInt8 in
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(16 + (state >> 16) % 220)
        }
        return (bytes, FrameLayout(format: format, size: FrameSize(width: width, height: height), bytesPerLine: stride, range: .limited))
    }

    /// The mean of a box of bytes, rounded half up, written out sample by sample.
    func boxMean(_ bytes: [UInt8], stride: Int, rows: Range<Int>, offsets: [Int]) -> UInt8 {
        var total = 0
        for row in rows { for offset in offsets { total += Int(bytes[row * stride + offset]) } }
        let count = rows.count * offsets.count
        return UInt8((total + count / 2) / count)
    }

    @Test(arguments: [(PixelFormat.yuyv, 0, 1, 3), (.uyvy, 1, 0, 2), (.yvyu, 0, 3, 1), (.vyuy, 1, 2, 0)])
    func everySampleIsItsBoxMean(format: PixelFormat, luma: Int, cb: Int, cr: Int) {
        let (bytes, layout) = frame(format, width: 70, height: 36)
        for factor in [2, 4, 8] {
            var image = YUVImage()
            let converted = bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: layout, reducedBy: factor, into: &image) }
            #expect(converted)
            let size = FrameSize(width: 70 / factor, height: 36 / factor)
            #expect(image.size == size && image.subsampling == .s422)
            var wrong = 0
            for y in 0..<size.height {
                let rows = (y * factor)..<(y * factor + factor)
                for x in 0..<size.width {
                    let offsets = (0..<factor).map { 2 * (x * factor + $0) + luma }
                    let want = PlaneConversion.expandLuma[Int(boxMean(bytes, stride: layout.bytesPerLine, rows: rows, offsets: offsets))]
                    if image.sample(plane: 0, x: x, y: y) != want { wrong += 1 }
                }
                for x in 0..<((size.width + 1) / 2) {
                    let pairs = (0..<factor).map { min(x * factor + $0, 70 / 2 - 1) }
                    for (plane, position) in [(1, cb), (2, cr)] {
                        let mean = boxMean(bytes, stride: layout.bytesPerLine, rows: rows, offsets: pairs.map { 4 * $0 + position })
                        if image.sample(plane: plane, x: x, y: y) != PlaneConversion.expandChroma[Int(mean)] { wrong += 1 }
                    }
                }
            }
            #expect(wrong == 0, "\(format) at 1/\(factor): \(wrong) samples are not their box's mean")
        }
    }

    @Test func theLargestReductionThatStillCoversIsChosen() {
        let hd = FrameLayout(format: .yuyv, size: FrameSize(width: 1920, height: 1080), bytesPerLine: 3840, range: .limited)
        #expect(PlaneConversion.reduction(for: hd, covering: FrameSize(width: 480, height: 270)) == 4)
        #expect(PlaneConversion.reduction(for: hd, covering: FrameSize(width: 481, height: 270)) == 2)
        #expect(PlaneConversion.reduction(for: hd, covering: FrameSize(width: 240, height: 135)) == 8)
        #expect(PlaneConversion.reduction(for: hd, covering: FrameSize(width: 1920, height: 1080)) == 1)
        let nv12 = FrameLayout(format: .nv12, size: FrameSize(width: 1920, height: 1080), bytesPerLine: 1920, range: .limited)
        #expect(PlaneConversion.reduction(for: nv12, covering: FrameSize(width: 100, height: 100)) == 1, "only packed 4:2:2 is reduced")
        var image = YUVImage()
        let bytes = [UInt8](repeating: 128, count: 1920 * 1080 * 3 / 2)
        #expect(!bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: nv12, reducedBy: 2, into: &image) })
    }

    /// A thumbnail from the raw frame: the exact size asked, made from the 1/4 box
    /// reduction, and the same picture as converting the whole frame and resampling it.
    @Test func aThumbnailFromTheRawFrameMatchesTheFullPath() throws {
        let size = FrameSize(width: 640, height: 480)
        // Smooth content (a gradient), where any two correct downscales agree closely.
        var bytes = [UInt8](repeating: 0, count: size.area * 2)
        for y in 0..<size.height {
            for pair in 0..<(size.width / 2) {
                let p = (y * size.width / 2 + pair) * 4
                bytes[p] = UInt8(16 + (pair * 2) * 219 / size.width)
                bytes[p + 2] = UInt8(16 + (pair * 2 + 1) * 219 / size.width)
                bytes[p + 1] = UInt8(16 + y * 224 / size.height)
                bytes[p + 3] = UInt8(240 - y * 224 / size.height)
            }
        }
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited)
        let geometry = Geometry(longestSide: 160)
        let pipeline = ImagePipeline()
        let thumbnail = try bytes.withUnsafeBytes { try pipeline.jpeg(frame: $0, layout: layout, geometry: geometry, overlay: nil, quality: 95) }
        #expect(pipeline.lastReduction == 4)
        var planes = YUVImage()
        _ = bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: layout, into: &planes) }
        let reference = try ImagePipeline().jpeg(planes, geometry: geometry, overlay: nil, quality: 95)

        let a = try JPEGDecoder().decodeRGB(thumbnail), b = try JPEGDecoder().decodeRGB(reference)
        #expect(a.size == FrameSize(width: 160, height: 120) && b.size == a.size)
        let difference = zip(a.pixels, b.pixels).map { abs(Int($0) - Int($1)) }
        #expect(Double(difference.reduce(0, +)) / Double(difference.count) < 2, "the reduced path draws another picture")
        #expect(difference.max()! < 16)
    }
}
