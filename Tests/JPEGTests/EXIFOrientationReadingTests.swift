@testable import JPEG
import Testing
import VideoCore

/// Reading the Orientation tag back from a JPEG: what keeps a saved photo's `rotate=exif`
/// through thumbnails and contact sheets.
@Suite struct EXIFOrientationReadingTests {
    @Test func readsEveryOrientationCamdWrites() throws {
        let plain = try sampleJPEG()
        #expect(EXIF.Orientation(readingFrom: plain) == nil, "no EXIF, no orientation")
        #expect(EXIF.Orientation(readingFrom: EXIF(captureTime: 1).inserted(into: plain)) == nil, "EXIF without the tag")
        for orientation in EXIF.Orientation.allCases {
            var exif = EXIF(captureTime: 1_795_241_240, make: "vivid", model: "vivid")
            exif.orientation = orientation
            exif.gps = try EXIF.GPSPosition(latitude: 1, longitude: 2)
            #expect(EXIF.Orientation(readingFrom: exif.inserted(into: plain)) == orientation)
        }
    }

    /// Cameras and phones write big-endian ("MM") TIFF as often as little-endian.
    @Test func readsBigEndianEXIF() throws {
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8,   // "MM", 42, IFD0 at 8
                             0, 1,                                // one entry
                             0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 8, 0, 0,  // Orientation SHORT 8
                             0, 0, 0, 0]
        let app1: [UInt8] = [0xFF, 0xE1] + EXIF.be16(2 + 6 + tiff.count) + Array("Exif".utf8) + [0, 0] + tiff
        let plain = try sampleJPEG()
        let jpeg = Array(plain[0..<2]) + app1 + Array(plain[2...])
        #expect(EXIF.Orientation(readingFrom: jpeg) == .left)
    }

    @Test func brokenSegmentsGiveNilNotATrap() throws {
        var exif = EXIF(captureTime: 1)
        exif.orientation = .right
        let tagged = exif.inserted(into: try sampleJPEG())
        // Every truncation, and every single-byte corruption of the EXIF segment, reads safely.
        for length in 0..<min(tagged.count, 200) { _ = EXIF.Orientation(readingFrom: Array(tagged[0..<length])) }
        for index in 2..<min(tagged.count, 160) {
            for value: UInt8 in [0x00, 0xFF, 0x7F] {
                var broken = tagged
                broken[index] = value
                _ = EXIF.Orientation(readingFrom: broken)
            }
        }
        #expect(EXIF.Orientation(readingFrom: [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF]) == nil, "a length past the end")
        #expect(EXIF.Orientation(readingFrom: [1, 2, 3]) == nil)
    }

    @Test func theTurnForEachOrientationIsThatOrientation() {
        for orientation in EXIF.Orientation.allCases {
            let (rotate, flip) = Geometry.turn(for: orientation)
            #expect(EXIF.Orientation(rotation: rotate, flip: flip) == orientation)
        }
    }

    /// A photo saved with `rotate=exif` appears on the contact sheet as a viewer shows it:
    /// left half light and right half dark, tagged "turn 90° clockwise", shows light on top.
    @Test func contactSheetCellsAreTurnedAsTheTagSays() throws {
        var image = YUVImage(size: FrameSize(width: 320, height: 240), subsampling: .s420)
        image.fill(Geometry.Color(red: 10, green: 10, blue: 10))
        image.fill(luma: 235, cb: 128, cr: 128, in: Geometry.Rect(x: 0, y: 0, width: 160, height: 240))
        let plain = try JPEGEncoder().compress(image, quality: 90)
        var exif = EXIF(captureTime: 1)
        exif.orientation = .right
        let tagged = exif.inserted(into: plain)

        let sheet = ContactSheet(columns: 2, cell: 96)
        let layout = try sheet.layout(count: 2)
        let rendered = try sheet.render(count: 2, with: ImagePipeline(), label: { "#\($0)" }, jpeg: { $0 == 0 ? plain : tagged })
        let decoded = try Decoded(ImagePipeline().encode(rendered, quality: 90))
        let (untagged, turned) = (layout.cellRect(0), layout.cellRect(1))
        #expect(decoded.at(untagged.x + 20, untagged.y + 48).0 > 200 && decoded.at(untagged.x + 76, untagged.y + 48).0 < 60,
                "untagged: light on the left, dark on the right")
        #expect(decoded.at(turned.x + 48, turned.y + 20).0 > 200 && decoded.at(turned.x + 48, turned.y + 76).0 < 60,
                "tagged 6: light on top, dark below")
    }
}
