import Foundation
import JPEG
import Testing
import VideoCore
@testable import Video

/// Encodes frames as a camera sends them, writes fragmented MP4, and reads it back with
/// FFmpeg's demuxer and decoder: size, length, colours, rotation, a file cut short.
@Suite struct VideoRoundTripTests {
    /// 100% colour bars in BT.601 limited range (Y, Cb, Cr): white, yellow, cyan, green,
    /// magenta, red, blue, black.
    static let bars: [(UInt8, UInt8, UInt8)] = [(235, 128, 128), (210, 16, 146), (170, 166, 16), (145, 54, 34),
                                                  (106, 202, 222), (81, 90, 240), (41, 240, 110), (16, 128, 128)]

    static func yuyvBars(_ size: FrameSize, sequence: UInt32, at time: Double) -> Frame {
        var bytes = [UInt8](repeating: 0, count: size.width * size.height * 2)
        for y in 0..<size.height {
            for pair in 0..<size.width / 2 {
                let bar = Self.bars[pair * 2 * Self.bars.count / size.width]
                let p = (y * size.width + pair * 2) * 2
                bytes[p] = bar.0; bytes[p + 1] = bar.1; bytes[p + 2] = bar.0; bytes[p + 3] = bar.2
            }
        }
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited)
        return Frame(layout: layout, bytes: bytes, sequence: sequence, monotonicTime: time, captureTime: 1_700_000_000 + time)
    }

    /// Encodes `count` frames at `fps` into an MP4 file and returns its path.
    static func record(_ frames: (Int) -> Frame, count: Int, fps: Double, size: FrameSize,
                       transform: FragmentedMP4Writer.DisplayTransform = .upright, finish: Bool = true,
                       purpose: H264Encoder.Purpose = .live) throws -> String {
        let path = NSTemporaryDirectory() + "camd-video-\(UUID().uuidString).mp4"
        let file = try #require(FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)  // checked by the open after it
            return FileHandle(forWritingAtPath: path)
        }())
        let first = frames(0)
        let encoder = try H264Encoder(settings: VideoEncoderSettings(encoder: .libx264), size: size, frameRate: fps,
                                      range: first.layout.format == .mjpeg ? .full : first.layout.range, purpose: purpose)
        let picture = try VideoPicture(size: size)
        var writer: FragmentedMP4Writer?
        func write(_ packets: [VideoPacket]) throws {
            for packet in packets {
                if writer == nil {
                    writer = try FragmentedMP4Writer(format: encoder.format, transform: transform) { bytes in
                        file.write(Data(bytes))
                        return 0
                    }
                }
                try writer?.write(packet)
            }
        }
        for index in 0..<count {
            let frame = index == 0 ? first : frames(index)
            try picture.fill(from: frame)
            try write(try encoder.encode(picture, monotonicTime: frame.monotonicTime, captureTime: frame.captureTime))
        }
        if finish {
            try write(try encoder.flush())
            try writer?.finish()
        }
        try file.close()
        return path
    }

    @Test func aRecordingOfColourBarsReadsBackWithItsSizeLengthAndColours() throws {
        let size = FrameSize(width: 320, height: 240)
        let path = try Self.record({ Self.yuyvBars(size, sequence: UInt32($0), at: 100 + Double($0) / 30) },
                                   count: 60, fps: 30, size: size)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let video = try VideoFile(path: path)
        #expect(video.info.size == size)
        #expect(video.info.codec == "h264")
        #expect(abs(video.info.duration - 2.0) < 0.1, "duration \(video.info.duration)")
        #expect(video.info.rotate == 0)
        let image = try video.frame(at: 1.0)
        #expect(image.size == size)
        for (index, bar) in Self.bars.enumerated() {
            let x = (2 * index + 1) * size.width / (2 * Self.bars.count)
            let y = Int(image.sample(plane: 0, x: x, y: size.height / 2))
            let expected = Int(PlaneConversion.expandLuma[Int(bar.0)])
            #expect(abs(y - expected) <= 8, "bar \(index): luma \(y), expected \(expected)")
            let cb = Int(image.sample(plane: 1, x: x / 2, y: size.height / 4))
            let expectedCb = Int(PlaneConversion.expandChroma[Int(bar.1)])
            #expect(abs(cb - expectedCb) <= 8, "bar \(index): Cb \(cb), expected \(expectedCb)")
        }
    }

    @Test func theCameraRotationIsTheTracksDisplayMatrixNotThePixels() throws {
        let size = FrameSize(width: 320, height: 240)
        let path = try Self.record({ Self.yuyvBars(size, sequence: UInt32($0), at: Double($0) / 30) }, count: 10, fps: 30,
                                   size: size, transform: .init(rotate: 90))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let video = try VideoFile(path: path)
        #expect(video.info.size == size)
        #expect(video.info.rotate == 90)
        #expect(video.info.displaySize == FrameSize(width: 240, height: 320))
    }

    @Test func aTimePastTheEndIsRefusedNamingIt() throws {
        let size = FrameSize(width: 160, height: 120)
        let path = try Self.record({ Self.yuyvBars(size, sequence: UInt32($0), at: Double($0) / 10) }, count: 10, fps: 10, size: size)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let video = try VideoFile(path: path)
        #expect(throws: VideoError.self) { try video.frame(at: 5) }
        do {
            _ = try video.frame(at: 5)
        } catch {
            #expect(error.kind == .outOfRange)
            #expect(error.description.contains("at=5"))
        }
        #expect(try video.frame(at: 0.95).size == size)
    }

    @Test func aFileCutShortPlaysUpToItsLastWholeFragment() throws {
        let size = FrameSize(width: 160, height: 120)
        // 5 s at 10 fps with a keyframe every 2 s: fragments of at most 1 s; never finished.
        let path = try Self.record({ Self.yuyvBars(size, sequence: UInt32($0), at: Double($0) / 10) }, count: 50, fps: 10,
                                   size: size, finish: false)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Cut in the middle of whatever fragment was last, as a power loss would.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count - 100).write(to: URL(fileURLWithPath: path))
        let video = try VideoFile(path: path)
        #expect(video.info.size == size)
        #expect(try video.frame(at: 0).size == size)
        #expect(try video.frame(at: 2.5).size == size)
    }

    /// A movie made `forFile` has B-frames, so its keyframes are shown after they are decoded:
    /// every time still gives the frame on screen then.
    @Test func everyTimeOfAMovieWithBFramesGivesTheFrameShownThen() throws {
        let size = FrameSize(width: 64, height: 48)
        func frame(_ index: Int) -> Frame {
            let level = UInt8(20 + index * 6)
            let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: 128, range: .limited)
            return Frame(layout: layout, bytes: (0..<128 * 48).map { $0 % 2 == 0 ? level : 128 }, sequence: UInt32(index),
                         monotonicTime: Double(index) / 10, captureTime: Double(index))
        }
        let path = try Self.record(frame, count: 30, fps: 10, size: size, purpose: .file)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let video = try VideoFile(path: path)
        #expect(abs(video.info.duration - 3) < 0.05)
        for index in [0, 3, 7, 12, 17, 18, 19, 20, 29] {  // 18 and 19: after the keyframe at 20 is decoded, before it is shown
            let still = try video.frame(at: Double(index) / 10 + 0.05)
            let expected = Int(PlaneConversion.expandLuma[20 + index * 6])
            #expect(abs(Int(still.sample(plane: 0, x: 32, y: 24)) - expected) <= 4, "frame \(index)")
        }
    }

    /// An MJPEG camera's frame: 160x120 of one orange, and the picture it encodes.
    static func orangeMJPEG() throws -> (image: YUVImage, jpeg: [UInt8], layout: FrameLayout) {
        let size = FrameSize(width: 160, height: 120)
        var image = YUVImage(size: size, subsampling: .s422)
        image.fill(Geometry.Color(red: 230, green: 120, blue: 40))
        return (image, try JPEGEncoder().compress(image, quality: 95), FrameLayout(format: .mjpeg, size: size, bytesPerLine: 0, range: .full))
    }

    @Test func anMJPEGCameraIsDecodedAndTaggedFullRange() throws {
        let (image, jpeg, layout) = try Self.orangeMJPEG()
        let size = layout.size
        let path = try Self.record({ Frame(layout: layout, bytes: jpeg, sequence: UInt32($0), monotonicTime: Double($0) / 10,
                                           captureTime: Double($0)) }, count: 5, fps: 10, size: size)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let decoded = try VideoFile(path: path).frame(at: 0)
        #expect(abs(Int(decoded.sample(plane: 0, x: 80, y: 60)) - Int(image.sample(plane: 0, x: 80, y: 60))) <= 4)
        #expect(abs(Int(decoded.sample(plane: 2, x: 40, y: 30)) - Int(image.sample(plane: 2, x: 40, y: 60))) <= 4)
    }

    /// A camera's truncated frame is refused, not decoded with its missing half grey (which
    /// libjpeg-turbo does with only a warning) and encoded; the picture keeps the last good frame.
    @Test func aTruncatedMJPEGFrameIsRefusedNotEncodedGrey() throws {
        let (_, jpeg, layout) = try Self.orangeMJPEG()
        let picture = try VideoPicture(size: layout.size)
        try picture.fill(from: Frame(layout: layout, bytes: jpeg, sequence: 0, monotonicTime: 0, captureTime: 0))
        let luma = picture.frame.pointee.data.0![100 * Int(picture.frame.pointee.linesize.0) + 80]
        // Cut a few bytes into the scan: the header is whole, the picture is not.
        let scan = try #require(jpeg.indices.dropLast().first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDA })
        let truncated = Array(jpeg.prefix(scan + 24))
        #expect(throws: VideoError.self) {
            try picture.fill(from: Frame(layout: layout, bytes: truncated, sequence: 1, monotonicTime: 0.1, captureTime: 0.1))
        }
        #expect(picture.frame.pointee.data.0![100 * Int(picture.frame.pointee.linesize.0) + 80] == luma)
    }

    @Test func automaticChoiceSaysWhyEachHardwareEncoderWasNotUsed() throws {
        let encoder = try H264Encoder(settings: VideoEncoderSettings(), size: FrameSize(width: 160, height: 120),
                                      frameRate: 30, range: .limited)
        // No GPU or Pi on a build machine: libx264, and one line for each encoder tried before it.
        if encoder.name == "libx264" {
            #expect(encoder.notUsed.count == 2)
            #expect(encoder.notUsed.first?.hasPrefix("h264_v4l2m2m: ") == true)
            #expect(encoder.notUsed.last?.hasPrefix("h264_vaapi: ") == true)
        }
        #expect(encoder.format.codecString.hasPrefix("avc1."))
    }

    @Test func aSinkFullFromTheFirstByteIsAWriteErrorNotACrash() throws {
        let size = FrameSize(width: 160, height: 120)
        let encoder = try H264Encoder(settings: VideoEncoderSettings(encoder: .libx264), size: size, frameRate: 10, range: .limited)
        let picture = try VideoPicture(size: size)
        try picture.fill(from: Self.yuyvBars(size, sequence: 0, at: 0))
        _ = try encoder.encode(picture, monotonicTime: 0, captureTime: 0)
        // The header is the first write: the writer must fail cleanly, and free what it made once.
        for _ in 0..<3 {
            #expect { _ = try FragmentedMP4Writer(format: encoder.format) { _ in ENOSPC } } throws: { error in
                (error as? VideoError)?.kind == .write(errno: ENOSPC)
            }
        }
    }

    @Test func anOddSizeIsRefusedWithTheReason() {
        #expect(throws: VideoError.self) {
            _ = try H264Encoder(settings: VideoEncoderSettings(encoder: .libx264), size: FrameSize(width: 161, height: 120),
                                frameRate: 30, range: .limited)
        }
    }
}

/// camd's plane conversion for the encoder: the vector path for packed 4:2:2 gives exactly
/// what the plain definition gives (luma as is, chroma rows averaged, rounding up).
@Suite struct VideoPictureTests {
    @Test(arguments: [FrameSize(width: 64, height: 48), FrameSize(width: 70, height: 34), FrameSize(width: 1920, height: 1080)])
    func packedFramesGiveTheDefinedPlanes(size: FrameSize) throws {
        var generator = SystemRandomNumberGenerator()
        let stride = size.width * 2 + 8
        let bytes = (0..<stride * size.height).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: stride, range: .limited)
        let picture = try VideoPicture(size: size)
        try picture.fill(from: Frame(layout: layout, bytes: bytes, sequence: 0, monotonicTime: 0, captureTime: 0))
        let frame = picture.frame.pointee
        let chroma = FrameSize(width: (size.width + 1) / 2, height: (size.height + 1) / 2)
        var wrong = 0
        for y in 0..<size.height {
            for x in 0..<size.width where frame.data.0![y * Int(frame.linesize.0) + x] != bytes[y * stride + x * 2] { wrong += 1 }
        }
        for (plane, offset, stridePlane) in [(frame.data.1!, 1, Int(frame.linesize.1)), (frame.data.2!, 3, Int(frame.linesize.2))] {
            for y in 0..<chroma.height {
                let below = min(2 * y + 1, size.height - 1)
                for x in 0..<chroma.width {
                    let a = Int(bytes[2 * y * stride + x * 4 + offset]), b = Int(bytes[below * stride + x * 4 + offset])
                    if Int(plane[y * stridePlane + x]) != (a + b + 1) >> 1 { wrong += 1 }
                }
            }
        }
        #expect(wrong == 0, "\(wrong) samples differ at \(size)")
    }
}
