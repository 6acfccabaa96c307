import JPEG
import Testing
import VideoCore

/// The one JPEG segment reader: what it finds, and where it stops on broken input.
@Suite struct JPEGSegmentsTests {
    /// FFD8, then segments given as (marker, payload).
    static func jpeg(_ segments: [(UInt8, [UInt8])], then tail: [UInt8] = []) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        for (marker, payload) in segments {
            let length = payload.count + 2
            bytes += [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        }
        return bytes + tail
    }

    static let sof: [UInt8] = [8, 0x01, 0xE0, 0x02, 0x80, 3]  // precision 8, 480 high, 640 wide, 3 components

    @Test func walksToTheScanAndNoFurther() {
        let bytes = Self.jpeg([(0xE0, Array("JFIF\0".utf8)), (0xDB, [0, 1, 2]), (0xC0, Self.sof), (0xDA, [1, 2, 3])],
                              then: [0xFF, 0xC4, 0x00, 0x02, 0xFF, 0xD9])
        var segments = JPEGSegments(bytes)
        let markers = Array(AnyIterator { segments.next() }).map(\.marker)
        #expect(markers == [0xE0, 0xDB, 0xC0, 0xDA], "entropy-coded data after SOS is not segments")
        #expect(segments.stop == nil)
        #expect(JPEGSegments.dimensions(in: bytes) == .success(FrameSize(width: 640, height: 480)))
    }

    @Test func fillBytesAndStandaloneMarkersAreSkipped() {
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xFF, 0xFF]  // fill bytes before a marker
        bytes += [0xE1, 0x00, 0x04, 0xAA, 0xBB]
        bytes += [0xFF, 0xD0, 0xFF, 0x01]  // RST0 and TEM have no length
        bytes += [0xFF, 0xC2, 0x00, 0x08] + Self.sof
        var segments = JPEGSegments(bytes)
        let found = Array(AnyIterator { segments.next() })
        #expect(found.map(\.marker) == [0xE1, 0xC2])
        #expect(found[0].payload == 8..<10, "the marker at 4, after three fill bytes")
        #expect(found[1].isFrameHeader)
    }

    @Test func stopsWithAReasonOnBrokenInput() {
        func stop(_ bytes: [UInt8]) -> JPEGSegmentStop? {
            var segments = JPEGSegments(bytes)
            while segments.next() != nil {}
            return segments.stop
        }
        #expect(stop([0x89, 0x50, 0x4E, 0x47]) == .notJPEG)
        #expect(stop([]) == .notJPEG)
        #expect(stop([0xFF, 0xD8, 0x12, 0x34]) == .malformed(offset: 2), "no marker where a segment starts")
        #expect(stop([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01]) == .malformed(offset: 2), "a length below 2")
        #expect(stop([0xFF, 0xD8, 0xFF, 0xE0, 0x01, 0x00, 0x00]) == .truncated(offset: 2), "a segment past the end")
        #expect(stop([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x02]) == .truncated(offset: 6), "ends between segments")
        #expect(stop([0xFF, 0xD8, 0xFF, 0xD9]) == .endOfImage(offset: 2))
        #expect(JPEGSegments.dimensions(in: Self.jpeg([(0xDA, [1])])) == .failure(.noFrameHeader))
        #expect(JPEGSegments.dimensions(in: Self.jpeg([(0xC0, [8, 0, 0, 0, 0])])) == .failure(.malformed(offset: 2)),
                "a zero size is no size")
    }

    @Test func findsTheEXIFSegmentOnly() {
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]
        let withEXIF = Self.jpeg([(0xE1, Array("http://ns.adobe.com/xap/1.0/\0".utf8)), (0xE1, Array("Exif\0\0".utf8) + tiff),
                                  (0xC0, Self.sof), (0xDA, [1])])
        let range = JPEGSegments.exifTIFF(in: withEXIF)
        #expect(range.map { Array(withEXIF[$0]) } == tiff, "the XMP APP1 before it is not EXIF")
        #expect(JPEGSegments.exifTIFF(in: Self.jpeg([(0xC0, Self.sof), (0xDA, [1])])) == nil)
        // Past the scan nothing counts, not even bytes that look like EXIF.
        let afterScan = Self.jpeg([(0xDA, [1])], then: [0xFF, 0xE1, 0x00, 0x12] + Array("Exif\0\0".utf8) + tiff)
        #expect(JPEGSegments.exifTIFF(in: afterScan) == nil)
    }
}
