@testable import JPEG
import Testing
import VideoCore

/// Limited-range YUYV colour bars, as vivid and most webcams send them.
func yuyvBars(_ size: FrameSize) -> [UInt8] {
    // White, yellow, cyan, green, magenta, red, blue, black at 75%: (Y, Cb, Cr), BT.601 limited range.
    let bars: [(UInt8, UInt8, UInt8)] = [(180, 128, 128), (162, 44, 142), (131, 156, 44), (112, 72, 58),
                                         (84, 184, 198), (65, 100, 212), (35, 212, 114), (16, 128, 128)]
    var bytes = [UInt8]()
    for _ in 0..<size.height {
        for pair in 0..<(size.width / 2) {
            let (y, cb, cr) = bars[pair * 2 * 8 / size.width]
            bytes += [y, cb, y, cr]
        }
    }
    return bytes
}

func barColours(_ jpeg: [UInt8]) throws -> (FrameSize, [(Int, Int, Int)]) {
    let (size, rgb) = try JPEGDecoder().decodeRGB(jpeg)
    let row = size.height / 2
    let colours = (0..<8).map { bar -> (Int, Int, Int) in
        let x = (2 * bar + 1) * size.width / 16
        let p = (row * size.width + x) * 3
        return (Int(rgb[p]), Int(rgb[p + 1]), Int(rgb[p + 2]))
    }
    return (size, colours)
}

let expectedBars = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0), (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0)]

func near(_ a: (Int, Int, Int), _ b: (Int, Int, Int), _ tolerance: Int = 6) -> Bool {
    abs(a.0 - b.0) <= tolerance && abs(a.1 - b.1) <= tolerance && abs(a.2 - b.2) <= tolerance
}

@Suite struct FrameEncoderTests {
    @Test func limitedRangeBarsDecodeToFullRangeColours() throws {
        let size = FrameSize(width: 640, height: 480)
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: 1280, range: .limited)
        let jpeg = try yuyvBars(size).withUnsafeBytes { try FrameEncoder().encode($0, layout: layout) }
        let (decoded, colours) = try barColours(jpeg)
        #expect(decoded == size)
        for (got, want) in zip(colours, expectedBars) {
            #expect(near(got, want), "bar \(got) should be near \(want)")
        }
        #expect(colours[7].0 <= 2, "black must decode to about 0, not 16")
    }

    @Test func withoutRangeExpansionBlackWouldBeGrey() throws {
        // The same bytes claimed as full range: what ustreamer and fswebcam produce.
        let size = FrameSize(width: 320, height: 240)
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: 640, range: .full)
        let jpeg = try yuyvBars(size).withUnsafeBytes { try FrameEncoder().encode($0, layout: layout) }
        let (_, colours) = try barColours(jpeg)
        #expect(colours[7].0 >= 12, "unexpanded black decodes to about 16")
    }

    @Test func shortFramesAreRefused() throws {
        let layout = FrameLayout(format: .yuyv, size: FrameSize(width: 640, height: 480), bytesPerLine: 1280, range: .limited)
        let short = [UInt8](repeating: 0, count: 1000)
        #expect(throws: FrameEncodingError.self) { try short.withUnsafeBytes { try FrameEncoder().encode($0, layout: layout) } }
    }

    @Test func rgbIsEncodedDirectly() throws {
        let size = FrameSize(width: 64, height: 32)
        var rgb = [UInt8]()
        for _ in 0..<size.area { rgb += [200, 40, 10] }
        let layout = FrameLayout(format: .rgb24, size: size, bytesPerLine: 192, range: .full)
        let jpeg = try rgb.withUnsafeBytes { try FrameEncoder().encode($0, layout: layout) }
        let (decoded, pixels) = try JPEGDecoder().decodeRGB(jpeg)
        #expect(decoded == size)
        #expect(near((Int(pixels[0]), Int(pixels[1]), Int(pixels[2])), (200, 40, 10)))
    }

    @Test func otherFormatsGoThroughLibv4l() throws {
        // RGB565, which camd does not convert itself: pure red.
        let size = FrameSize(width: 32, height: 16)
        var bytes = [UInt8]()
        for _ in 0..<size.area { bytes += [0x00, 0xF8] }
        let layout = FrameLayout(format: PixelFormat(fourCC: "RGBP")!, size: size, bytesPerLine: 64, range: .full)
        let jpeg = try bytes.withUnsafeBytes { try FrameEncoder().encode($0, layout: layout) }
        let (_, pixels) = try JPEGDecoder().decodeRGB(jpeg)
        #expect(pixels[0] > 230 && pixels[1] < 20 && pixels[2] < 20)
    }

    @Test func unknownFormatsAreReportedNotGuessed() {
        let layout = FrameLayout(format: PixelFormat(fourCC: "ZZZZ")!, size: FrameSize(width: 8, height: 8), bytesPerLine: 8, range: .full)
        let bytes = [UInt8](repeating: 0, count: 64)
        do {
            _ = try bytes.withUnsafeBytes { try FrameEncoder().encode($0, layout: layout) }
            Issue.record("encoded an unknown format")
        } catch {
            guard case FrameEncodingError.unsupportedFormat(let format)? = error as? FrameEncodingError else { Issue.record("wrong error \(error)"); return }
            #expect(format.fourCC == "ZZZZ")
        }
    }
}

/// Full-range planar frames (a Raspberry Pi camera's YU12) go to TurboJPEG where they lie.
@Suite struct InPlacePlanesTests {
    /// A full-range planar frame with rows padded to `stride`: a gradient in Y, chroma varying by position.
    func planarFrame(_ format: PixelFormat, _ size: FrameSize, stride: Int) -> Frame {
        let chromaHeight = format == .yuv422p ? size.height : size.height / 2
        var bytes = [UInt8](repeating: 0xEE, count: stride * size.height + 2 * (stride / 2) * chromaHeight)
        for y in 0..<size.height { for x in 0..<size.width { bytes[y * stride + x] = UInt8((x + 2 * y) & 0xFF) } }
        let first = stride * size.height, second = first + (stride / 2) * chromaHeight
        for y in 0..<chromaHeight {
            for x in 0..<(size.width / 2) {
                bytes[first + y * (stride / 2) + x] = UInt8(40 + x % 150)
                bytes[second + y * (stride / 2) + x] = UInt8(200 - y % 150)
            }
        }
        let layout = FrameLayout(format: format, size: size, bytesPerLine: stride, range: .full)
        return Frame(layout: layout, bytes: bytes, sequence: 1, monotonicTime: 0, captureTime: 0)
    }

    @Test(arguments: [PixelFormat.yuv420, .yvu420, .yuv422p])
    func fullRangePlanarFramesAreEncodedInPlaceAsTheyWouldBeConverted(format: PixelFormat) throws {
        let frame = planarFrame(format, FrameSize(width: 320, height: 240), stride: 352)
        let encoder = try FrameEncoder()
        let jpeg = try encoder.encode(frame)
        #expect(encoder.planes.storage.count == 0, "the frame was copied into the encoder's planes")
        // The same picture as the converting path gives: convert, then encode the copy.
        var copy = YUVImage()
        _ = frame.bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: frame.layout, into: &copy) }
        #expect(jpeg == (try JPEGEncoder().compress(copy, quality: FrameEncoder.defaultQuality)))
    }

    @Test func limitedRangeAndSemiPlanarFramesAreStillConverted() throws {
        var frame = planarFrame(.yuv420, FrameSize(width: 64, height: 48), stride: 64)
        frame.layout.range = .limited
        let encoder = try FrameEncoder()
        _ = try encoder.encode(frame)
        #expect(encoder.planes.size == frame.layout.size)
        #expect(PlaneConversion.inPlacePlanes(FrameLayout(format: .nv12, size: frame.layout.size, bytesPerLine: 64, range: .full)) == nil)
    }

    /// The stream overlay draws on converted planes: an in-place frame must not leave it drawing on an old one.
    @Test func aStreamOverlayOnAnInPlaceFrameDrawsOnThisFrame() throws {
        let encoder = try FrameEncoder()
        let frame = planarFrame(.yuv420, FrameSize(width: 320, height: 240), stride: 320)
        let (plain, overlaid) = try encoder.encode(frame, overlay: TextOverlay(text: "8", corner: .topLeft, scale: 3))
        let (_, plainRGB) = try JPEGDecoder().decodeRGB(plain)
        let (_, overlaidRGB) = try JPEGDecoder().decodeRGB(try #require(overlaid))
        // Far from the text, both are this frame's pixels.
        let far = (200 * 320 + 300) * 3
        #expect(abs(Int(plainRGB[far]) - Int(overlaidRGB[far])) <= 2)
        #expect(plainRGB != overlaidRGB)
    }
}

/// Steady capture allocates no planes: the encoder's buffer is reused from frame to frame.
@Suite struct PlaneReuseTests {
    func address(_ image: YUVImage) -> UnsafeRawPointer? {
        image.storage.withUnsafeBytes { $0.baseAddress }
    }

    @Test func reshapingToTheSameOrASmallerSizeKeepsTheStorage() {
        var image = YUVImage(size: FrameSize(width: 640, height: 480), subsampling: .s422)
        let first = address(image)
        image.reshape(FrameSize(width: 640, height: 480), .s422)
        #expect(address(image) == first)
        image.reshape(FrameSize(width: 320, height: 240), .s420)
        #expect(address(image) == first, "a smaller frame fits the storage already there")
    }

    @Test func theEncoderConvertsEveryFrameIntoTheSamePlanes() throws {
        let size = FrameSize(width: 320, height: 240)
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited)
        let encoder = try FrameEncoder()
        let bytes = yuyvBars(size)
        _ = try bytes.withUnsafeBytes { try encoder.encode($0, layout: layout) }
        let first = address(encoder.planes)
        for _ in 0..<5 { _ = try bytes.withUnsafeBytes { try encoder.encode($0, layout: layout) } }
        #expect(first != nil && address(encoder.planes) == first)
    }
}
