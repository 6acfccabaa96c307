@testable import JPEG
import Testing
import VideoCore

/// A real JPEG from TurboJPEG, for tests that cut and mend it.
func sampleJPEG() throws -> [UInt8] {
    let size = FrameSize(width: 64, height: 48)
    let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: 128, range: .limited)
    return try yuyvBars(size).withUnsafeBytes { try FrameEncoder().encode($0, layout: layout) }
}

/// The byte ranges of each marker segment before the scan.
func segments(_ jpeg: [UInt8]) -> [(marker: UInt8, range: Range<Int>)] {
    var result: [(UInt8, Range<Int>)] = []
    var offset = 2
    while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF {
        let marker = jpeg[offset + 1], length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
        result.append((marker, offset..<(offset + 2 + length)))
        if marker == 0xDA { break }
        offset += 2 + length
    }
    return result
}

@Suite struct JPEGValidationTests {
    @Test func aWholeJPEGPassesUnchanged() throws {
        let jpeg = try sampleJPEG()
        #expect(try JPEGValidation.validate(jpeg).get() == jpeg)
    }

    @Test func truncatedFramesAreRejected() throws {
        let jpeg = try sampleJPEG()
        let cut = Array(jpeg.prefix(jpeg.count * 2 / 3))
        #expect(throws: JPEGValidation.Problem.noEndOfImage) { try JPEGValidation.validate(cut).get() }
        #expect(throws: JPEGValidation.Problem.tooShort(10)) { try JPEGValidation.validate(Array(jpeg.prefix(10))).get() }
        var noSOI = jpeg
        noSOI[1] = 0x00
        #expect(throws: JPEGValidation.Problem.noStartOfImage) { try JPEGValidation.validate(noSOI).get() }
        let headerOnly = Array(jpeg.prefix(segments(jpeg).last!.range.lowerBound)) + [0xFF, 0xD9]
        #expect(throws: (any Error).self) { try JPEGValidation.validate(headerOnly + [UInt8](repeating: 0, count: 200)).get() }
    }

    @Test func paddingAfterTheEndIsTrimmed() throws {
        let jpeg = try sampleJPEG()
        let padded = jpeg + [UInt8](repeating: 0, count: 300)
        #expect(try JPEGValidation.validate(padded).get() == jpeg)
    }

    /// TurboJPEG writes the standard tables by default, so its DHT bytes must equal ours.
    @Test func standardTablesAreTheOnesLibjpegWrites() throws {
        let jpeg = try sampleJPEG()
        let tables = segments(jpeg).filter { $0.marker == 0xC4 }.flatMap { Array(jpeg[$0.range].dropFirst(4)) }
        #expect(tables == Array(JPEGValidation.standardHuffmanTables.dropFirst(4)))
    }

    /// UVC cameras send MJPEG without DHT; after insertion any decoder reads the same image.
    @Test func missingHuffmanTablesAreInserted() throws {
        let jpeg = try sampleJPEG()
        var stripped = [UInt8](jpeg.prefix(2))
        var tail = 2
        for segment in segments(jpeg) {
            if segment.marker != 0xC4 { stripped += jpeg[segment.range] }
            tail = segment.range.upperBound
        }
        stripped += jpeg[tail...]
        #expect(!segments(stripped).contains { $0.marker == 0xC4 })

        let mended = try JPEGValidation.validate(stripped).get()
        #expect(segments(mended).contains { $0.marker == 0xC4 })
        let same = try JPEGDecoder().decodeRGB(mended).pixels == JPEGDecoder().decodeRGB(jpeg).pixels
        #expect(same, "the mended frame decodes to what TurboJPEG wrote before the tables were cut")
    }

    @Test func aScanHeaderRunningPastTheEndMarkerIsRefused() throws {
        var jpeg = try sampleJPEG()
        let sos = try #require((0..<(jpeg.count - 1)).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDA })
        // Padding after the end marker, and a scan header length that reaches into it.
        let claimed = jpeg.count - sos + 100
        jpeg += [UInt8](repeating: 0, count: 200)
        jpeg[sos + 2] = UInt8(claimed >> 8)
        jpeg[sos + 3] = UInt8(claimed & 0xFF)
        #expect(JPEGValidation.validate(jpeg) == .failure(.malformedSegment(offset: sos)))
    }

    @Test func paddingDoesNotMakeATinyFrameBigEnough() {
        // SOI, a frame header, a scan header, one byte of scan, EOI: 28 bytes, then 150 of padding.
        let tiny: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x0B, 8, 0, 1, 0, 1, 1, 1, 0x11, 0,
                             0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 0x3F, 0, 0x00, 0xFF, 0xD9]
        #expect(JPEGValidation.validate(tiny + [UInt8](repeating: 0, count: 150)) == .failure(.tooShort(28)))
    }

    @Test func fuzzedFramesNeverCrashTheValidator() throws {
        let jpeg = try sampleJPEG()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var mutated = jpeg
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            mutated = Array(mutated.prefix(Int.random(in: 0...mutated.count, using: &generator)))
            if case .success(let output) = JPEGValidation.validate(mutated) {
                #expect(output.first == 0xFF && output.last == 0xD9)
            }
        }
    }
}

@Suite struct EXIFTests {
    /// Finds an ASCII tag's value by walking our own TIFF structure.
    func asciiTag(_ tag: UInt16, in jpeg: [UInt8]) -> String? {
        guard let app1 = segments(jpeg).first(where: { $0.marker == 0xE1 }) else { return nil }
        let tiff = Array(jpeg[(app1.range.lowerBound + 10)..<app1.range.upperBound])
        func u16(_ at: Int) -> Int { Int(tiff[at]) | Int(tiff[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        var ifds = [u32(4)]
        while let ifd = ifds.popLast() {
            for index in 0..<u16(ifd) {
                let entry = ifd + 2 + index * 12
                if u16(entry) == 0x8769 { ifds.append(u32(entry + 8)) }
                if u16(entry) == Int(tag) {
                    let count = u32(entry + 4)
                    let start = count <= 4 ? entry + 8 : u32(entry + 8)
                    return String(decoding: tiff[start..<(start + count - 1)], as: UTF8.self)
                }
            }
        }
        return nil
    }

    @Test func captureTimeAndCameraAreWritten() throws {
        let jpeg = try sampleJPEG()
        // 2026-11-22 06:07:20.123456 UTC
        let exif = EXIF(captureTime: 1_795_241_240.123456, make: "vivid", model: "vivid")
        let tagged = exif.inserted(into: jpeg)
        #expect(asciiTag(0x010F, in: tagged) == "vivid")
        #expect(asciiTag(0x9003, in: tagged) == exif.timestamps.dateTime)
        #expect(asciiTag(0x9291, in: tagged) == "123456")
        #expect(asciiTag(0x9011, in: tagged) == exif.timestamps.offset)
        #expect(exif.timestamps.dateTime.count == 19)
        // Still a JPEG any decoder opens, with the same pixels.
        let same = try JPEGDecoder().decodeRGB(tagged).pixels == JPEGDecoder().decodeRGB(jpeg).pixels
        #expect(same)
        #expect(segments(tagged)[0].marker == 0xE0, "JFIF stays first")
    }
}
