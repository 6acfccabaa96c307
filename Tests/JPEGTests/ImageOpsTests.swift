import CamdTestSupport
#if canImport(Glibc)
import Glibc
#endif
import CTurboJPEG
@testable import JPEG
import Testing
import VideoCore

/// The 8 colour bars as camd's planes: limited-range YUYV converted as captured frames are.
func barsImage(_ size: FrameSize) -> YUVImage {
    let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited)
    var image = YUVImage()
    _ = yuyvBars(size).withUnsafeBytes { PlaneConversion.convert($0, layout: layout, into: &image) }
    return image
}

/// A decoded JPEG with a pixel reader.
struct Decoded {
    var size: FrameSize
    var rgb: [UInt8]
    init(_ jpeg: [UInt8]) throws {
        (size, rgb) = try JPEGDecoder().decodeRGB(jpeg)
    }
    func at(_ x: Int, _ y: Int) -> (Int, Int, Int) {
        let p = (y * size.width + x) * 3
        return (Int(rgb[p]), Int(rgb[p + 1]), Int(rgb[p + 2]))
    }
    /// Which of the 8 bars a colour is closest to.
    func bar(_ x: Int, _ y: Int) -> Int {
        let c = at(x, y)
        return (0..<8).min { a, b in
            distance(c, expectedBars[a]) < distance(c, expectedBars[b])
        }!
    }
    private func distance(_ a: (Int, Int, Int), _ b: (Int, Int, Int)) -> Int {
        (a.0 - b.0) * (a.0 - b.0) + (a.1 - b.1) * (a.1 - b.1) + (a.2 - b.2) * (a.2 - b.2)
    }
}

/// The parameter an operation's error names, or nil if it did not fail that way.
func failingParameter(_ body: () throws -> Void) -> String? {
    do { try body() } catch { return (error as? ImageError)?.parameter ?? "not an ImageError: \(error)" }
    return nil
}

func render(_ image: YUVImage, _ query: [String: String], overlay: TextOverlay? = nil) throws -> Decoded {
    let pipeline = ImagePipeline()
    return try Decoded(pipeline.jpeg(image, geometry: Geometry.parse(query: query), overlay: overlay, quality: 90))
}

@Suite struct GeometryTests {
    let bars = barsImage(FrameSize(width: 640, height: 480))

    @Test(arguments: [
        (["width": "320", "height": "320", "fit": "contain"], FrameSize(width: 320, height: 240)),
        (["width": "320", "height": "320", "fit": "contain", "pad": "black"], FrameSize(width: 320, height: 320)),
        (["width": "320", "height": "320", "fit": "cover"], FrameSize(width: 320, height: 320)),
        (["width": "320", "height": "100", "fit": "stretch"], FrameSize(width: 320, height: 100)),
        (["width": "320"], FrameSize(width: 320, height: 240)),
        (["height": "120"], FrameSize(width: 160, height: 120)),
        (["width": "1280", "height": "1280", "fit": "cover"], FrameSize(width: 1280, height: 1280)),
        (["max": "200"], FrameSize(width: 200, height: 150)),
        (["max": "1000"], FrameSize(width: 640, height: 480)),  // never enlarged
        (["width": "1000", "height": "1000", "fit": "cover", "max": "300"], FrameSize(width: 300, height: 300)),
        (["width": "101", "height": "77", "fit": "stretch"], FrameSize(width: 101, height: 77)),
        (["rotate": "90", "width": "240", "height": "400"], FrameSize(width: 240, height: 320)),
        (["rotate": "270", "max": "100"], FrameSize(width: 75, height: 100)),
        (["crop": "0,0,300,100", "max": "150"], FrameSize(width: 150, height: 50)),
        (["width": "101", "height": "77", "fit": "stretch", "rotate": "90"], FrameSize(width: 101, height: 77)),
        (["width": "77", "fit": "cover", "height": "101", "rotate": "270", "flip": "h"], FrameSize(width: 77, height: 101)),
        (["rotate": "90", "width": "300", "height": "300", "pad": "white"], FrameSize(width: 300, height: 300)),
        (["width": "640", "height": "640", "pad": "black", "max": "320"], FrameSize(width: 320, height: 320)),
        (["rotate": "exif", "width": "240", "height": "320"], FrameSize(width: 240, height: 180)),
    ])
    func sizesAreExact(query: [String: String], expected: FrameSize) throws {
        let decoded = try render(bars, query)
        #expect(decoded.size == expected)
        #expect(try Geometry.parse(query: query).outputSize(for: bars.size) == expected)
    }

    @Test func containWithPadCentresThePictureOnBars() throws {
        let decoded = try render(bars, ["width": "320", "height": "320", "pad": "#0000ff"])
        #expect(near(decoded.at(160, 10), (0, 0, 255), 12), "bar above the picture is the pad colour")
        #expect(near(decoded.at(160, 310), (0, 0, 255), 12))
        #expect(decoded.bar(10, 160) == 0 && decoded.bar(310, 160) == 7, "the picture spans the full width")
    }

    @Test func coverKeepsTheCentreBarsAndDropsTheOuterOnes() throws {
        // 16:9 into a square keeps the middle 9/16: bars 1...6, with 2...5 whole.
        let decoded = try render(barsImage(FrameSize(width: 1280, height: 720)), ["width": "240", "height": "240", "fit": "cover"])
        #expect(decoded.size == FrameSize(width: 240, height: 240))
        let bars = (0..<240).map { decoded.bar($0, 120) }
        #expect(!bars.contains(0) && !bars.contains(7), "the white and black outer bars are cropped away")
        #expect(decoded.bar(2, 120) == 1 && decoded.bar(237, 120) == 6)
        #expect(decoded.bar(110, 120) == 3 && decoded.bar(130, 120) == 4, "green and magenta meet in the middle")
    }

    @Test func aQuarterTurnMakesTheBarsHorizontal() throws {
        let pipeline = ImagePipeline()
        let turned = try pipeline.render(bars, geometry: Geometry(rotate: .clockwise90), overlay: nil)
        #expect(turned.size == FrameSize(width: 480, height: 640))
        #expect(turned.subsampling == .s420, "4:2:2 turned a quarter is resampled to 4:2:0")
        let decoded = try Decoded(pipeline.encode(turned, quality: 90))
        for y in stride(from: 40, to: 640, by: 80) {
            let row = (0..<480).map { decoded.bar($0, y) }
            #expect(Set(row).count == 1, "one colour along row \(y)")
        }
        // Clockwise: the left (white) bar is now at the top, black at the bottom.
        #expect((0..<8).map { decoded.bar(240, 40 + 80 * $0) } == Array(0..<8))

        let ccw = try render(bars, ["rotate": "270"])
        #expect((0..<8).map { ccw.bar(240, 40 + 80 * $0) } == Array((0..<8).reversed()))
        let half = try render(bars, ["rotate": "180"])
        #expect((0..<8).map { half.bar(40 + 80 * $0, 240) } == Array((0..<8).reversed()))
    }

    @Test func flipHorizontalReversesTheBars() throws {
        let decoded = try render(bars, ["flip": "h"])
        #expect((0..<8).map { decoded.bar(40 + 80 * $0, 240) } == Array((0..<8).reversed()))
        let vertical = try render(bars, ["flip": "v"])
        #expect((0..<8).map { vertical.bar(40 + 80 * $0, 240) } == Array(0..<8), "a vertical flip keeps vertical bars")
        #expect(bars.flipped(.horizontal).sample(plane: 0, x: 0, y: 0) == bars.sample(plane: 0, x: 639, y: 0))
    }

    @Test func turnsMatchWhatAViewerDoesForEachOrientation() {
        // A 3x2 image with distinct samples, 4:4:4 so chroma follows luma exactly.
        var image = YUVImage(size: FrameSize(width: 3, height: 2), subsampling: .s444)
        for i in 0..<6 { image.storage[i] = UInt8(i) }  // 0 1 2 / 3 4 5
        func luma(_ o: EXIF.Orientation) -> [UInt8] {
            let t = image.transformed(o)
            return Array(t.storage[0..<6])
        }
        #expect(luma(.up) == [0, 1, 2, 3, 4, 5])
        #expect(luma(.upMirrored) == [2, 1, 0, 5, 4, 3])
        #expect(luma(.down) == [5, 4, 3, 2, 1, 0])
        #expect(luma(.downMirrored) == [3, 4, 5, 0, 1, 2])
        #expect(luma(.leftMirrored) == [0, 3, 1, 4, 2, 5])   // transpose: 2 wide, 3 high
        #expect(luma(.right) == [3, 0, 4, 1, 5, 2])          // clockwise
        #expect(luma(.rightMirrored) == [5, 2, 4, 1, 3, 0])
        #expect(luma(.left) == [2, 5, 1, 4, 0, 3])           // counter-clockwise
        #expect(EXIF.Orientation(rotation: .clockwise90, flip: .horizontal) == .leftMirrored)
        #expect(EXIF.Orientation(rotation: .clockwise90, flip: .vertical) == .rightMirrored)
        #expect(EXIF.Orientation(rotation: .upright, flip: [.horizontal, .vertical]) == .down)
        #expect(EXIF.Orientation(rotation: .clockwise270, flip: []) == .left)
    }

    @Test func cropSelectsTheRightBars() throws {
        let decoded = try render(bars, ["crop": "160,0,160,480"])
        #expect(decoded.size == FrameSize(width: 160, height: 480))
        #expect(decoded.bar(40, 240) == 2 && decoded.bar(120, 240) == 3, "cyan then green")
        let cut = try bars.cropped(to: Geometry.Rect(x: 480, y: 100, width: 160, height: 100))
        #expect(cut.size == FrameSize(width: 160, height: 100))
        #expect(cut.sample(plane: 0, x: 10, y: 10) == bars.sample(plane: 0, x: 490, y: 110))
        #expect(cut.sample(plane: 1, x: 70, y: 50) == bars.sample(plane: 1, x: 310, y: 150))
    }

    @Test func cropOutsideTheFrameNamesCrop() {
        #expect(failingParameter { _ = try bars.cropped(to: Geometry.Rect(x: 600, y: 0, width: 100, height: 100)) } == "crop")
        #expect(failingParameter {
            _ = try ImagePipeline().render(bars, geometry: Geometry.parse(query: ["crop": "0,400,10,100"]), overlay: nil)
        } == "crop")
        do {
            _ = try ImagePipeline().render(bars, geometry: Geometry(crop: Geometry.Rect(x: 600, y: 0, width: 100, height: 100)), overlay: nil)
            Issue.record("a crop outside the frame was rendered")
        } catch {
            #expect(error.description.contains("640x480"), "\(error)")
        }
    }

    @Test(arguments: [
        ("width", "0"), ("height", "-3"), ("width", "100000"), ("max", "-1"), ("max", "big"),
        ("rotate", "45"), ("fit", "zoom"), ("interpolation", "cubic"), ("crop", "1,2,3"), ("crop", "0,0,0,10"),
        ("flip", "x"), ("pad", "chartreuse-ish"),
    ])
    func badValuesNameTheirParameter(name: String, value: String) {
        var message = ""
        do {
            _ = try Geometry.parse(query: [name: value])
        } catch {
            #expect(error.parameter == name)
            message = error.description
        }
        #expect(message.hasPrefix(name) && message.contains("got \(value)"), "\(message)")
    }

    @Test func rotateMessageListsTheAngles() {
        do {
            _ = try Geometry.parse(query: ["rotate": "45"])
            Issue.record("rotate=45 was accepted")
        } catch {
            #expect(error.description.hasPrefix("rotate must be 0, 90, 180 or 270"))
            #expect(error.description.hasSuffix("got 45"))
        }
    }

    @Test func aBoxFromOneSideCannotGrowWithoutLimit() {
        let sliver = YUVImage(size: FrameSize(width: 2, height: 1000), subsampling: .s444)
        #expect(failingParameter { _ = try ImagePipeline().render(sliver, geometry: Geometry(width: 4000), overlay: nil) } == "width")
    }

    @Test func queryValuesGoOnTopOfDefaults() throws {
        let defaults = Geometry(longestSide: 640, rotate: .clockwise90)
        let geometry = try Geometry.parse(query: ["rotate": "exif", "quality": "80"], defaults: defaults)
        #expect(geometry.rotate == .clockwise90 && geometry.rotationInEXIF && geometry.longestSide == 640)
        #expect(geometry.exifOrientation == .right)
        // The box is in displayed orientation; the stored pixels stay as captured.
        #expect(try geometry.outputSize(for: FrameSize(width: 1920, height: 1080)) == FrameSize(width: 640, height: 360))
        let g2 = try Geometry.parse(query: ["rotate": "exif", "width": "360", "height": "640", "fit": "cover"], defaults: defaults)
        #expect(try g2.outputSize(for: FrameSize(width: 1920, height: 1080)) == FrameSize(width: 640, height: 360))
        #expect(try !Geometry.parse(query: ["rotate": "exif"], defaults: Geometry(rotate: .clockwise90)).changesPixels)
        #expect(try Geometry.parse(query: [:], defaults: defaults).changesPixels)
    }
}

@Suite struct ResamplerTests {
    /// A one-pixel checkerboard of black and white.
    func checkerboard(_ size: FrameSize) -> YUVImage {
        var image = YUVImage(size: size, subsampling: .gray)
        for y in 0..<size.height {
            for x in 0..<size.width { image.storage[y * size.width + x] = (x + y) % 2 == 0 ? 0 : 255 }
        }
        return image
    }

    @Test func areaTurnsFineDetailIntoItsMeanAndNearestDoesNot() throws {
        let board = checkerboard(FrameSize(width: 640, height: 480))
        let small = FrameSize(width: 64, height: 48)
        let area = board.scaled(to: small, interpolation: .area)
        let nearest = board.scaled(to: small, interpolation: .nearest)
        let areaLuma = area.storage[0..<small.area].map { Int($0) }
        let nearestLuma = nearest.storage[0..<small.area].map { Int($0) }
        #expect(areaLuma.allSatisfy { abs($0 - 128) <= 2 }, "area gives uniform grey: \(Set(areaLuma))")
        #expect(nearestLuma.allSatisfy { $0 == 0 || $0 == 255 }, "nearest picks single black or white pixels")
        let mean = nearestLuma.reduce(0, +) / nearestLuma.count
        #expect(abs(mean - 128) > 100, "and aliases to a flat black or white, not grey")

        // The default for shrinking is area, through the pipeline and an encoder.
        let jpeg = try ImagePipeline().jpeg(board, geometry: Geometry(longestSide: 64), overlay: nil, quality: 90)
        let (_, rgb) = try JPEGDecoder().decodeRGB(jpeg)
        #expect(rgb.allSatisfy { abs(Int($0) - 128) <= 4 })
    }

    @Test func flatColoursStayExactAtAnyScale() {
        var flat = YUVImage(size: FrameSize(width: 97, height: 53), subsampling: .s420)
        flat.fill(Geometry.Color(red: 200, green: 40, blue: 10))
        let (y, cb, cr) = Geometry.Color(red: 200, green: 40, blue: 10).ycbcr
        for interpolation in Geometry.Interpolation.allCases {
            for size in [FrameSize(width: 13, height: 7), FrameSize(width: 97, height: 53), FrameSize(width: 301, height: 200)] {
                let out = flat.scaled(to: size, interpolation: interpolation)
                #expect(out.storage[0..<out.offset(1)].allSatisfy { $0 == y })
                #expect(out.storage[out.offset(1)..<out.offset(2)].allSatisfy { $0 == cb })
                #expect(out.storage[out.offset(2)..<(out.offset(2) + out.offset(2) - out.offset(1))].allSatisfy { $0 == cr })
            }
        }
    }

    /// Past 16:1 the columns pass needs finer weights; a 1-pixel-high output is still the mean.
    @Test func extremeShrinksStillAverage() {
        var stripes = YUVImage(size: FrameSize(width: 8, height: 1000), subsampling: .gray)
        for y in 0..<1000 { stripes.fillPlane(0, x: 0, y: y, width: 8, height: 1, value: y % 2 == 0 ? 40 : 200) }
        let line = stripes.scaled(to: FrameSize(width: 2, height: 1), interpolation: .area)
        #expect(line.storage[0..<2].allSatisfy { abs(Int($0) - 120) <= 1 }, "\(line.storage[0..<2])")
        let few = stripes.scaled(to: FrameSize(width: 8, height: 100), interpolation: .area)
        #expect(few.storage[0..<800].allSatisfy { abs(Int($0) - 120) <= 1 })
    }

    @Test func bilinearEnlargesSmoothly() {
        var ramp = YUVImage(size: FrameSize(width: 2, height: 1), subsampling: .gray)
        ramp.storage[0] = 0
        ramp.storage[1] = 200
        let wide = ramp.scaled(to: FrameSize(width: 8, height: 1), interpolation: .bilinear)
        let row = wide.storage[0..<8].map { Int($0) }
        #expect(row == row.sorted() && row.first == 0 && row.last == 200)
        #expect(Set(row).count > 4, "in-between values, not two blocks: \(row)")
    }
}

@Suite struct OverlayTests {
    @Test func templatesExpandTimeCameraAndSequence() {
        let time = 1_795_241_240.5
        let exif = EXIF(captureTime: time).timestamps.dateTime  // "YYYY:MM:DD HH:MM:SS", local time
        let date = String(exif.prefix(10).map { $0 == ":" ? "-" : $0 })
        let text = TextOverlay.expand("%Y-%m-%d %H:%M:%S {camera} #{seq} 100%% %q", time: time, camera: "porch", sequence: 42)
        #expect(text == "\(date) \(exif.suffix(8)) porch #42 100% %q")
    }

    @Test func templatesTakeTheOtherStrftimeConversions() {
        var at = tm()
        at.tm_year = 2026 - 1900; at.tm_mon = 10; at.tm_mday = 21; at.tm_hour = 18; at.tm_min = 4; at.tm_sec = 5; at.tm_isdst = -1
        let time = Double(mktime(&at)) + 0.75  // Saturday 21 November 2026, 18:04:05.75 local time
        let text = TextOverlay.expand("%a %A %b %B %e|%j|%y|%I%p|%D %T|%F|%u|%s|%Ez|%Q", time: time, camera: "c", sequence: 1)
        #expect(text == "Sat Saturday Nov November 21|325|26|06PM|11/21/26 18:04:05|2026-11-21|6|\(Int(time))|%Ez|%Q")
        #expect(TextOverlay.expand("%H:%M%n{camera}", time: time, camera: "porch", sequence: 1) == "18:04\nporch")
    }

    @Test func theOverlayChangesPixelsOnlyInsideItsBox() throws {
        let bars = barsImage(FrameSize(width: 640, height: 480))
        let pipeline = ImagePipeline()
        let geometry = Geometry()
        let plain = try pipeline.render(bars, geometry: geometry, overlay: nil)
        for corner in TextOverlay.Corner.allCases {
            let overlay = TextOverlay(text: "2026-11-22 06:07:20\ncam0 #17", corner: corner)
            let stamped = try pipeline.render(bars, geometry: geometry, overlay: overlay)
            let box = overlay.box(in: plain.size)
            #expect(box.width > 100 && box.height > 20)
            var changedInside = 0, changedOutside = 0
            for plane in 0..<3 {
                let (fx, fy) = plane == 0 ? (1, 1) : (2, 1)
                for y in 0..<plain.planeHeight(plane) {
                    for x in 0..<plain.stride(plane) where plain.sample(plane: plane, x: x, y: y) != stamped.sample(plane: plane, x: x, y: y) {
                        if box.contains(x: x * fx, y: y * fy) { changedInside += 1 } else { changedOutside += 1 }
                    }
                }
            }
            #expect(changedInside > 1000 && changedOutside == 0, "\(corner): \(changedOutside) samples changed outside \(box)")
            switch corner {
            case .topLeft: #expect(box.x < 10 && box.y < 10)
            case .bottomRight: #expect(box.x + box.width > 630 && box.y + box.height > 470)
            default: break
            }

            // After JPEG the change spreads at most to the 16x8 blocks the box touches, and one
            // chroma sample (2 pixels) beyond them through the decoder's smooth chroma upsampling.
            let a = try Decoded(pipeline.encode(plain, quality: 90)), b = try Decoded(pipeline.encode(stamped, quality: 90))
            let blocks = Geometry.Rect(x: box.x / 16 * 16 - 2, y: box.y / 8 * 8,
                                       width: (box.x + box.width + 15) / 16 * 16 - box.x / 16 * 16 + 4,
                                       height: (box.y + box.height + 7) / 8 * 8 - box.y / 8 * 8)
            var spread = 0
            for y in 0..<480 { for x in 0..<640 where !blocks.contains(x: x, y: y) && a.at(x, y) != b.at(x, y) { spread += 1 } }
            #expect(spread == 0)
        }
    }

    @Test func textIsWhiteOnBlackAndScalesWithTheFrame() throws {
        #expect(TextOverlay.scale(for: FrameSize(width: 1920, height: 1080)) == 4)
        #expect(TextOverlay.scale(for: FrameSize(width: 320, height: 240)) == 1)
        var image = YUVImage(size: FrameSize(width: 320, height: 240), subsampling: .s422)
        image.fill(Geometry.Color(red: 255, green: 255, blue: 0))
        let box = TextOverlay(text: "8", corner: .topLeft, scale: 3).draw(into: &image)
        // "8" has ink on its top row, columns 1-3: font pixel (2, 0) at scale 3.
        let inkX = box.x + TextOverlay.padding * 3 + 2 * 3, inkY = box.y + TextOverlay.padding * 3
        #expect(image.sample(plane: 0, x: inkX, y: inkY) == 255)
        #expect(image.sample(plane: 0, x: box.x + 1, y: box.y + 1) == 0)
        #expect(image.sample(plane: 1, x: (box.x + 2) / 2, y: box.y + 2) == 128, "neutral chroma in the box")
    }

    @Test func theFontHasEveryPrintableCharacter() {
        #expect(TextOverlay.glyphArt.count == 95)
        #expect(TextOverlay.glyphs.count == 95 * 7)
        let digits = (0..<10).map { Array(TextOverlay.glyphs[(16 + $0) * 7..<(17 + $0) * 7]) }
        #expect(Set(digits.map { $0.description }).count == 10, "every digit looks different")
        // Upper and lower case letters all have ink and differ from each other.
        let letters = (33..<59).map { Array(TextOverlay.glyphs[$0 * 7..<($0 + 1) * 7]) } + (65..<91).map { Array(TextOverlay.glyphs[$0 * 7..<($0 + 1) * 7]) }
        #expect(letters.allSatisfy { $0.contains { $0 != 0 } })
        #expect(Set(letters.map { $0.description }).count == 52)
    }
}

@Suite struct ScaledDecodeTests {
    func bigJPEG() throws -> [UInt8] {
        try JPEGEncoder().compress(barsImage(FrameSize(width: 1920, height: 1080)), quality: 90)
    }

    @Test func theDecoderPicksTheSmallestScaleThatStillCovers() throws {
        #expect(JPEGDecoder.scales.map(\.description) == ["1/1", "1/2", "1/4", "1/8"])
        let full = FrameSize(width: 1920, height: 1080)
        #expect(JPEGDecoder.scale(for: full, covering: FrameSize(width: 240, height: 135)).description == "1/8")
        #expect(JPEGDecoder.scale(for: full, covering: FrameSize(width: 241, height: 100)).description == "1/4")
        #expect(JPEGDecoder.scale(for: full, covering: FrameSize(width: 960, height: 540)).description == "1/2")
        #expect(JPEGDecoder.scale(for: full, covering: FrameSize(width: 1000, height: 10)).description == "1/1")

        var image = YUVImage()
        let result = try JPEGDecoder().decode(bigJPEG(), covering: FrameSize(width: 240, height: 135), into: &image)
        #expect(result.size == FrameSize(width: 240, height: 135) && image.size == result.size)
        #expect(image.subsampling == .s422)
    }

    /// TurboJPEG writes a 4:2:0 luma plane with an even number of rows: a 1080p JPEG decoded
    /// at 1/8 is 240x135, and the row past its luma used to land on the first chroma rows,
    /// already decoded, so a thumbnail's top rows took luma for colour. The bars are upright:
    /// every chroma row is the same, the top ones too.
    @Test func anOddHeightDecodedTo420KeepsItsTopChromaRows() throws {
        let jpeg = try JPEGEncoder().compress(barsImage(FrameSize(width: 1920, height: 1080)), quality: 90, chroma: .halved)
        var image = YUVImage()
        let result = try JPEGDecoder().decode(jpeg, covering: FrameSize(width: 240, height: 135), into: &image)
        #expect(result.size == FrameSize(width: 240, height: 135) && image.subsampling == .s420)
        for plane in 1...2 {
            let middle = (0..<120).map { image.sample(plane: plane, x: $0, y: 34) }
            for row in [0, 1, 67] {
                let samples = (0..<120).map { image.sample(plane: plane, x: $0, y: row) }
                #expect(zip(samples, middle).allSatisfy { abs(Int($0) - Int($1)) <= 3 }, "plane \(plane), row \(row): \(samples) against \(middle)")
            }
        }
    }

    @Test func aThumbnailOfABigJPEGUsesTheDCTScale() throws {
        let jpeg = try bigJPEG()
        let pipeline = ImagePipeline()
        let thumbnail = try pipeline.render(jpeg: jpeg, geometry: Geometry(longestSide: 240), overlay: nil)
        #expect(pipeline.lastDecode?.scale.description == "1/8")
        #expect(pipeline.lastDecode?.size == FrameSize(width: 240, height: 135), "decoded at 1/8 before resampling")
        #expect(thumbnail.size == FrameSize(width: 240, height: 135))
        let decoded = try Decoded(pipeline.encode(thumbnail, quality: 90))
        #expect((0..<8).map { decoded.bar(15 + 30 * $0, 67) } == Array(0..<8))

        let bigger = try pipeline.render(jpeg: jpeg, geometry: Geometry(longestSide: 320), overlay: nil)
        #expect(pipeline.lastDecode?.size == FrameSize(width: 480, height: 270), "1/4, then resampled")
        #expect(bigger.size == FrameSize(width: 320, height: 180))

        // A crop needs more of the source's resolution: a 480-wide crop to 240 wide decodes at 1/2.
        let cropped = try pipeline.render(jpeg: jpeg, geometry: Geometry(width: 240, crop: Geometry.Rect(x: 0, y: 0, width: 480, height: 270)), overlay: nil)
        #expect(pipeline.lastDecode?.scale.description == "1/2")
        #expect(cropped.size == FrameSize(width: 240, height: 135))
        #expect(failingParameter { _ = try pipeline.render(jpeg: jpeg, geometry: Geometry(crop: Geometry.Rect(x: 1900, y: 0, width: 40, height: 10)), overlay: nil) } == "crop")
    }

    @Test func greyJPEGsStayGrey() throws {
        var grey = YUVImage(size: FrameSize(width: 800, height: 600), subsampling: .gray)
        grey.fillPlane(0, x: 0, y: 0, width: 800, height: 600, value: 90)
        let jpeg = try JPEGEncoder().compress(grey, quality: 90)
        let pipeline = ImagePipeline()
        let thumbnail = try pipeline.render(jpeg: jpeg, geometry: Geometry(longestSide: 100, rotate: .clockwise90), overlay: nil)
        #expect(thumbnail.subsampling == .gray && thumbnail.size == FrameSize(width: 75, height: 100))
        #expect(pipeline.lastDecode?.size == FrameSize(width: 100, height: 75), "1/8 is exactly enough")
        #expect(abs(Int(thumbnail.sample(plane: 0, x: 30, y: 50)) - 90) <= 2)
    }

    /// 4:4:0 (full chroma across, half down) is not a `ChromaSubsampling`: decoded through RGB into 4:4:4.
    @Test func otherChromaLayoutsGoThroughRGB() throws {
        let size = FrameSize(width: 64, height: 48)
        var rgb = [UInt8]()
        for _ in 0..<size.area { rgb += [200, 40, 10] }
        let handle = tjInitCompress()!
        defer { tjDestroy(handle) }
        var buffer: UnsafeMutablePointer<UInt8>? = nil
        var length: UInt = 0
        let status = tjCompress2(handle, rgb, 64, 0, 48, Int32(TJPF_RGB.rawValue), &buffer, &length,
                                 Int32(TJSAMP_440.rawValue), 95, 0)
        #expect(status == 0)
        let jpeg = Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
        tjFree(buffer)
        #expect(try JPEGDecoder().header(jpeg).subsampling == nil)
        let pipeline = ImagePipeline()
        let image = try pipeline.render(jpeg: jpeg, geometry: Geometry(width: 32), overlay: nil)
        #expect(image.subsampling == .s444 && image.size == FrameSize(width: 32, height: 24))
        let decoded = try Decoded(pipeline.encode(image, quality: 95))
        #expect(near(decoded.at(16, 12), (200, 40, 10), 8))
    }

    @Test func brokenJPEGsAreReportedNotCrashed() {
        do {
            _ = try ImagePipeline().render(jpeg: [0xFF, 0xD8, 1, 2, 3], geometry: Geometry(longestSide: 100), overlay: nil)
            Issue.record("decoded garbage")
        } catch {
            guard case .unreadableImage = error else { Issue.record("wrong error \(error)"); return }
        }
    }
}

@Suite struct ContactSheetTests {
    func solid(_ color: Geometry.Color, _ size: FrameSize = FrameSize(width: 320, height: 240)) throws -> [UInt8] {
        var image = YUVImage(size: size, subsampling: .s420)
        image.fill(color)
        return try JPEGEncoder().compress(image, quality: 90)
    }

    @Test func theSheetHasTheAskedCellsInColumnsAndRows() throws {
        let colours: [(Int, Int, Int)] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 255, 255), (255, 0, 255), (255, 255, 255)]
        let photos = try colours.enumerated().map { index, c in
            ContactSheet.Photo(jpeg: try solid(Geometry.Color(red: UInt8(c.0), green: UInt8(c.1), blue: UInt8(c.2))), label: "12:00:0\(index)")
        }
        let sheet = try ContactSheet.parse(query: ["cols": "3", "cell": "96"])
        let layout = try sheet.layout(count: photos.count)
        #expect(layout.columns == 3 && layout.rows == 3)
        let pipeline = ImagePipeline()
        let decoded = try Decoded(sheet.jpeg(photos, with: pipeline, quality: 90))
        #expect(decoded.size == layout.size)
        #expect(layout.size.width == 3 * 96 + 4 * layout.gap)
        for (index, colour) in colours.enumerated() {
            let cell = layout.cellRect(index)
            #expect(near(decoded.at(cell.x + cell.width / 2, cell.y + cell.height / 2), colour, 8), "cell \(index)")
            #expect(near(decoded.at(cell.x + 3, cell.y + 3), colour, 10), "cell \(index) is filled to its corner")
        }
        // Cells 7 and 8 of the 3x3 grid are empty background.
        let empty = layout.cellRect(8)
        let background = decoded.at(empty.x + empty.width / 2, empty.y + empty.height / 2)
        #expect(near(background, (32, 32, 32), 6))
        // Each label strip has light text on it.
        let strip = layout.labelRect(0)
        let brightest = (strip.y..<(strip.y + strip.height)).flatMap { y in (strip.x..<(strip.x + strip.width)).map { decoded.at($0, y).0 } }.max()!
        #expect(brightest > 150)
    }

    @Test func coverThumbnailsAndUnreadablePhotos() throws {
        let bars = try JPEGEncoder().compress(barsImage(FrameSize(width: 1280, height: 720)), quality: 90)
        let sheet = ContactSheet(columns: 2, cell: 120)
        let layout = try sheet.layout(count: 2)
        let image = try sheet.render(count: 2, with: ImagePipeline(), label: { "#\($0)" }, jpeg: { $0 == 0 ? bars : [1, 2, 3] })
        let decoded = try Decoded(ImagePipeline().encode(image, quality: 90))
        let cell = layout.cellRect(0)
        #expect(decoded.bar(cell.x + 55, cell.y + 60) == 3 && decoded.bar(cell.x + 65, cell.y + 60) == 4, "square cover keeps the centre")
        let broken = layout.cellRect(1)
        #expect(near(decoded.at(broken.x + 5, broken.y + 5), (16, 16, 16), 6), "a dark placeholder, not a failed sheet")
    }

    @Test func limitsAreEnforcedWithReasons() {
        let sheet = ContactSheet(columns: 10, cell: 64)
        #expect(throws: ImageError.tooManyPhotos(count: 401, limit: 400)) { try sheet.layout(count: 401) }
        #expect(throws: ImageError.noPhotos) { try sheet.layout(count: 0) }
        #expect(failingParameter { _ = try ContactSheet.parse(query: ["cols": "0"]) } == "cols")
        #expect(failingParameter { _ = try ContactSheet.parse(query: ["cell": "5000"]) } == "cell")
        #expect(failingParameter { _ = try ContactSheet(columns: 40, cell: 1024).layout(count: 40) } == "cols")
        #expect(ContactSheet.maximumCells == 400)
    }
}

@Suite struct EXIFOrientationAndGPSTests {
    /// Every entry of IFD0, the Exif IFD and the GPS IFD of our own APP1, by tag: (type, count, value bytes).
    func entries(in jpeg: [UInt8]) -> [UInt16: (type: Int, count: Int, bytes: [UInt8])] {
        EXIFReadBack.entries(in: jpeg)
    }

    func rationals(_ bytes: [UInt8]) -> [Double] {
        stride(from: 0, to: bytes.count, by: 8).map { at in
            func u32(_ i: Int) -> Double { Double(UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24) }
            return u32(at) / u32(at + 4)
        }
    }

    @Test func orientationAndPositionReadBack() throws {
        let geometry = try Geometry.parse(query: ["rotate": "exif"], defaults: Geometry(rotate: .clockwise90))
        var exif = EXIF(captureTime: 1_795_241_240.25, make: "vivid", model: "vivid")
        exif.orientation = geometry.exifOrientation
        exif.gps = try EXIF.GPSPosition(latitude: 51.500729, longitude: -0.124625, altitude: 12.5)
        let tagged = exif.inserted(into: try sampleJPEG())
        let found = entries(in: tagged)

        #expect(found[0x0112]?.type == 3 && found[0x0112]?.bytes.prefix(2) == [6, 0], "orientation 6: turn 90° clockwise")
        #expect(found[0x0000]?.bytes == [2, 3, 0, 0])
        #expect(found[0x0001]?.bytes == Array("N".utf8) + [0])
        #expect(found[0x0003]?.bytes == Array("W".utf8) + [0])
        let lat = rationals(found[0x0002]!.bytes), lon = rationals(found[0x0004]!.bytes)
        #expect(abs(lat[0] + lat[1] / 60 + lat[2] / 3600 - 51.500729) < 1e-6)
        #expect(abs(lon[0] + lon[1] / 60 + lon[2] / 3600 - 0.124625) < 1e-6)
        #expect(found[0x0005]?.bytes == [0])
        #expect(rationals(found[0x0006]!.bytes) == [12.5])
        // What was there before is still there, and the JPEG still decodes.
        #expect(EXIFTests().asciiTag(0x9291, in: tagged) == "250000")
        #expect(EXIFTests().asciiTag(0x010F, in: tagged) == "vivid")
        #expect(try JPEGDecoder().decodeRGB(tagged).size == FrameSize(width: 64, height: 48))
    }

    @Test func withoutOrientationOrGPSTheSegmentIsAsBefore() throws {
        let exif = EXIF(captureTime: 1_795_241_240, make: "vivid", model: "vivid")
        let found = entries(in: exif.inserted(into: try sampleJPEG()))
        #expect(found[0x0112] == nil && found[0x8825] == nil && found[0x8769] != nil)
        #expect(found[0x9003] != nil)
    }

    /// EXIF's ASCII fields hold 7-bit bytes: a card name's other characters are left out.
    @Test func asciiFieldsKeepSevenBitBytesAndEndInNUL() throws {
        let exif = EXIF(captureTime: 0, make: "Caméra Ünö", model: "cam")
        let found = entries(in: exif.inserted(into: try sampleJPEG()))
        #expect(found[0x010F]?.bytes == Array("Camra n".utf8) + [0])
        #expect(found[0x010F]?.count == 8)
        #expect(found[0x0110]?.bytes == Array("cam".utf8) + [0])
    }

    @Test func southAndBelowSeaLevel() throws {
        var exif = EXIF(captureTime: 0)
        exif.gps = try EXIF.GPSPosition(latitude: -33.8688, longitude: 151.2093, altitude: -3)
        let found = entries(in: exif.inserted(into: try sampleJPEG()))
        #expect(found[0x0001]?.bytes.first == UInt8(ascii: "S") && found[0x0003]?.bytes.first == UInt8(ascii: "E"))
        #expect(found[0x0005]?.bytes == [1])
        #expect(failingParameter { _ = try EXIF.GPSPosition(latitude: 91, longitude: 0) } == "latitude")
        #expect(failingParameter { _ = try EXIF.GPSPosition(latitude: 0, longitude: -181) } == "longitude")
    }
}
