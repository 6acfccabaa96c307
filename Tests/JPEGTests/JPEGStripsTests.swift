import CamdTestSupport
import Dispatch
import Foundation
@testable import JPEG
import Testing
import VideoCore

/// Runs each strip on a thread of its own, the first on the caller's, as a `StripPool`
/// does: not on Dispatch's shared threads, which the tests running beside these need.
private struct ThreadRunner: StripRunner {
    let threads: Int
    func run(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let done = DispatchSemaphore(value: 0)
        for index in 1..<max(count, 1) {
            Thread {
                body(index)
                done.signal()
            }.start()
        }
        if count > 0 { body(0) }
        for _ in 1..<max(count, 1) { done.wait() }
    }
}

/// A frame whose every 8x8 block differs from its neighbours (a gradient with noise), so
/// that a strip's DC prediction matters: each byte from a seeded generator.
private func texturedFrame(_ layout: FrameLayout, seed: UInt64) -> [UInt8] {
    var state = seed
    let count = PlaneConversion.requiredBytes(layout)!
    return (0..<count).map { index in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return UInt8(truncatingIfNeeded: (index / 7) % 200 + Int(state >> 60))
    }
}

/// Where the restart markers (RST0-7) lie in the entropy-coded data after the scan header.
private func restartMarkers(_ jpeg: [UInt8]) -> [UInt8] {
    var segments = JPEGSegments(jpeg)
    var scanEnd = 0
    while let segment = segments.next() { if segment.marker == 0xDA { scanEnd = segment.end } }
    return zip(jpeg[scanEnd...], jpeg[(scanEnd + 1)...]).compactMap { $0 == 0xFF && (0xD0...0xD7).contains($1) ? $1 : nil }
}

@Suite struct JPEGStripsTests {
    @Test(arguments: ChromaSubsampling.allCases)
    func stripsAreWholeMCURowsAllAlikeButTheLast(_ subsampling: ChromaSubsampling) {
        let mcuHeight = subsampling.mcuSize.height
        for height in [480, 479, 1080, 722, 17, 8, 1] {
            for count in 1...5 {
                let rows = JPEGStrips.rows(height: height, subsampling: subsampling, count: count)
                #expect(rows.first?.lowerBound == 0 && rows.last?.upperBound == height, "\(height) rows in \(count)")
                #expect(zip(rows, rows.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
                #expect(rows.count <= count && rows.count >= 1)
                #expect(rows.dropLast().allSatisfy { $0.count == rows[0].count && $0.count % mcuHeight == 0 })
                #expect(rows.last!.count <= rows[0].count)
            }
        }
        #expect(JPEGStrips.rows(height: 480, subsampling: subsampling, count: 2).count == 2)
    }

    @Test func aFrameIsCutOnlyWhereEachStripIsLargeEnoughAndCanBeJoined() {
        func strips(_ width: Int, _ height: Int, _ subsampling: ChromaSubsampling = .s422, threads: Int) -> Int {
            JPEGStrips.rows(for: FrameSize(width: width, height: height), subsampling: subsampling, threads: threads).count
        }
        #expect(strips(640, 480, threads: 2) == 2)
        #expect(strips(640, 480, threads: 4) == 3)
        #expect(strips(1920, 1080, .s420, threads: 4) == 4)
        #expect(strips(320, 240, threads: 4) == 1)
        #expect(strips(1920, 1080, threads: 1) == 1)
        // An odd width is cut as an even one: each strip's encoder pads its own luma rows.
        #expect(strips(1281, 722, .s420, threads: 3) == 3)
        #expect(strips(1281, 722, .s422, threads: 3) == 3)
        #expect(strips(1281, 722, .gray, threads: 3) == 3)
        // 512 MCUs a row in gray: two strips of 135 MCU rows would need a restart interval of 69,120.
        let wide = JPEGStrips.rows(for: FrameSize(width: 4096, height: 2160), subsampling: .gray, threads: 2)
        #expect(wide.count == 3)
        #expect(JPEGStrips.restartInterval(wide, width: 4096, subsampling: .gray) <= 0xFFFF)
    }

    static let layouts: [FrameLayout] = [
        FrameLayout(format: .yuyv, size: FrameSize(width: 640, height: 480), bytesPerLine: 1280, range: .limited),
        FrameLayout(format: .yuyv, size: FrameSize(width: 1282, height: 722), bytesPerLine: 2564, range: .limited),
        FrameLayout(format: .yuv420, size: FrameSize(width: 1280, height: 720), bytesPerLine: 1280, range: .full),  // in place
        FrameLayout(format: .yuv422p, size: FrameSize(width: 800, height: 600), bytesPerLine: 800, range: .full),  // in place
        FrameLayout(format: .nv12, size: FrameSize(width: 1280, height: 720), bytesPerLine: 1280, range: .limited),
        // Converted strip by strip, and an odd number of chroma rows: the last strip takes the extra one.
        FrameLayout(format: .yuv420, size: FrameSize(width: 1280, height: 722), bytesPerLine: 1280, range: .limited),
        // An odd width, read in place and converted strip by strip: each strip pads its own luma rows.
        FrameLayout(format: .yuv420, size: FrameSize(width: 1281, height: 722), bytesPerLine: 1282, range: .full),
        FrameLayout(format: .yuv420, size: FrameSize(width: 1281, height: 723), bytesPerLine: 1282, range: .limited),
        FrameLayout(format: .grey, size: FrameSize(width: 1024, height: 768), bytesPerLine: 1024, range: .full),
        FrameLayout(format: .grey, size: FrameSize(width: 1001, height: 769), bytesPerLine: 1001, range: .limited),  // odd, converted
        // More strips than threads: in one strip, 512 MCUs a row would overflow the restart interval.
        FrameLayout(format: .grey, size: FrameSize(width: 4096, height: 2160), bytesPerLine: 4096, range: .full),
    ]

    /// 4:2:2 layouts halved to 4:2:0 (`image.chroma`'s default): YUYV halved as each strip
    /// converts its rows, an odd height's last strip with a row of its own; 4:2:2 planes read
    /// in place, halved by each strip's encoder.
    static let halvedLayouts: [FrameLayout] = [
        FrameLayout(format: .yuyv, size: FrameSize(width: 640, height: 480), bytesPerLine: 1280, range: .limited),
        FrameLayout(format: .yuyv, size: FrameSize(width: 1280, height: 723), bytesPerLine: 2560, range: .limited),
        FrameLayout(format: .yuv422p, size: FrameSize(width: 800, height: 600), bytesPerLine: 800, range: .full),  // in place
    ]

    /// The strips joined decode, in TurboJPEG and in FFmpeg's own decoder, to exactly the
    /// pixels of the frame encoded whole: the restart intervals are the strips, and each
    /// strip converted its own rows of a frame that needs converting.
    /// Heavy work (a large frame made, encoded, decoded), run off the cooperative pool.
    @Test(arguments: layouts.map { ($0, JPEGChroma.camera) } + halvedLayouts.map { ($0, JPEGChroma.halved) })
    func stripsDecodeToTheFrameEncodedWhole(_ layout: FrameLayout, _ chroma: JPEGChroma) async throws {
        let threads = 3
        let (whole, striped) = try await onOwnThread {
            let frame = texturedFrame(layout, seed: UInt64(layout.size.area))
            let whole = try frame.withUnsafeBytes { try FrameEncoder(quality: 80, chroma: chroma).encode($0, layout: layout) }
            let striped = try frame.withUnsafeBytes {
                try FrameEncoder(quality: 80, chroma: chroma, stripRunner: ThreadRunner(threads: threads)).encode($0, layout: layout)
            }
            return (whole, striped)
        }
        let subsampling = chroma.encoded(try #require(PlaneConversion.subsampling(for: layout.format)))
        #expect(try JPEGDecoder().header(whole).subsampling == subsampling)
        let strips = JPEGStrips.rows(for: layout.size, subsampling: subsampling, threads: threads).count
        #expect(strips > 1)
        #expect(restartMarkers(striped) == (0..<UInt8(strips - 1)).map { 0xD0 + $0 })
        #expect(restartMarkers(whole).isEmpty)
        #expect(striped != whole)
        // As camd checks an MJPEG camera's frames: a JPEG made here is one it would pass on.
        #expect((try? JPEGValidation.validate(striped).get()) == striped)

        let decoder = try JPEGDecoder()
        #expect(try decoder.header(striped) == decoder.header(whole))
        let (size, same) = try await onOwnThread {
            let decoder = try JPEGDecoder()
            let (size, pixels) = try decoder.decodeRGB(striped)
            return (size, pixels == (try decoder.decodeRGB(whole).pixels))
        }
        #expect(size == layout.size)
        #expect(same, "TurboJPEG decodes the strips to other pixels")

        let folder = try TestPhotos.temporaryFolder("strips")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func ffmpegDecode(_ jpeg: [UInt8], _ name: String) async throws -> Data {
            try Data(jpeg).write(to: URL(fileURLWithPath: "\(folder)/\(name).jpg"))
            let result = try await onOwnThread {
                try Players.run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", "\(folder)/\(name).jpg",
                                                    "-f", "rawvideo", "-y", "\(folder)/\(name).raw"])
            }
            #expect(result.status == 0 && result.errors.isEmpty, "ffmpeg: \(result.errors)")
            return try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name).raw"))
        }
        let byFFmpeg = try await ffmpegDecode(striped, "striped")
        #expect(!byFFmpeg.isEmpty)
        #expect(byFFmpeg == (try await ffmpegDecode(whole, "whole")), "FFmpeg decodes the strips to other pixels")
    }

    @Test func aSmallFrameIsEncodedWhole() throws {
        let layout = FrameLayout(format: .yuyv, size: FrameSize(width: 320, height: 240), bytesPerLine: 640, range: .limited)
        let frame = texturedFrame(layout, seed: 1)
        let jpeg = try frame.withUnsafeBytes {
            try FrameEncoder(quality: 80, stripRunner: ThreadRunner(threads: 4)).encode($0, layout: layout)
        }
        #expect(jpeg == (try frame.withUnsafeBytes { try FrameEncoder(quality: 80).encode($0, layout: layout) }))
    }

    /// Strips coded with other tables cannot share one header: joining them would make a JPEG
    /// that decodes to the wrong picture, so `join` refuses.
    @Test func stripsWithOtherTablesOrTheirOwnRestartMarkersAreNotJoined() throws {
        let size = FrameSize(width: 640, height: 480)
        var image = YUVImage(size: size, subsampling: .s420)
        image.storage = texturedFrame(FrameLayout(format: .yuv420, size: size, bytesPerLine: 640, range: .full), seed: 2)
        let planes = image.planes
        let rows = JPEGStrips.rows(height: 480, subsampling: .s420, count: 2)
        func strip(_ index: Int, quality: Int) throws -> [UInt8] {
            try image.storage.withUnsafeBytes { try JPEGEncoder().compress(planes: $0, planes, size: size, rows: rows[index], quality: quality) }
        }
        let first = try strip(0, quality: 80), second = try strip(1, quality: 80)
        #expect(try JPEGDecoder().header(first).size == FrameSize(width: 640, height: 240))
        func join(_ strips: [[UInt8]]) -> [UInt8]? { JPEGStrips.join(strips, rows: rows, size: size, subsampling: .s420) }
        #expect(join([first, second]) != nil)
        #expect(join([first, try strip(1, quality: 60)]) == nil)
        let joined = try #require(join([first, second]))
        #expect(join([joined, second]) == nil, "a strip with a DRI of its own")
        #expect(JPEGStrips.join([first], rows: [0..<480], size: size, subsampling: .s420) == nil)
        #expect(join([first, Array(second.dropLast(2))]) == nil, "no end of image")
    }
}
