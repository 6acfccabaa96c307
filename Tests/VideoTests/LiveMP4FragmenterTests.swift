import CamdTestSupport
import Foundation
import Testing
import VideoCore
@testable import Video

/// The live stream's fragments as players read them: an init segment and one fragment per
/// frame, decoded by ffmpeg from the start or from any keyframe, on one timeline across
/// encoder restarts, each fragment stamped with its frame's capture time.
@Suite struct LiveMP4FragmenterTests {
    static let size = FrameSize(width: 160, height: 120)

    struct Fragment {
        var bytes: [UInt8]
        var isKeyframe: Bool
    }

    /// Encodes `count` frames with a new encoder (its timestamps start again at
    /// `firstTime`), asking for keyframes at `keyframes`, and cuts each packet.
    static func encode(_ count: Int, firstTime: Double, keyframes: Set<Int> = [], skipping skipped: Set<Int> = [],
                       into fragmenter: inout LiveMP4Fragmenter?, fps: Double = 30) throws -> [Fragment] {
        let encoder = try H264Encoder(settings: VideoEncoderSettings(encoder: .libx264), size: size, frameRate: fps, range: .limited)
        let picture = try VideoPicture(size: size)
        var out: [Fragment] = []
        for index in 0..<count where !skipped.contains(index) {
            let frame = VideoRoundTripTests.yuyvBars(size, sequence: UInt32(index), at: firstTime + Double(index) / fps)
            if keyframes.contains(index) { encoder.requestKeyframe() }
            try picture.fill(from: frame)
            for packet in try encoder.encode(picture, monotonicTime: frame.monotonicTime, captureTime: frame.captureTime) {
                if fragmenter == nil { fragmenter = try LiveMP4Fragmenter(format: encoder.format) }
                out.append(Fragment(bytes: fragmenter!.fragment(packet), isKeyframe: packet.isKeyframe))
            }
        }
        return out
    }

    static func write(_ initSegment: [UInt8], _ fragments: some Sequence<Fragment>) throws -> String {
        let path = NSTemporaryDirectory() + "camd-live-\(UUID().uuidString).mp4"
        var bytes = initSegment
        for fragment in fragments { bytes += fragment.bytes }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aLiveStreamDecodesCleanFrameByFrameFromAKeyframe() async throws {
        var fragmenter: LiveMP4Fragmenter?
        let fragments = try Self.encode(60, firstTime: 100, into: &fragmenter)
        let live = try #require(fragmenter)
        #expect(fragments.count == 60, "zerolatency gives a packet for every frame, at once")
        #expect(live.contentType.hasPrefix("video/mp4; codecs=\"avc1."))
        let path = try Self.write(live.initSegment, fragments)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try await Players.decodeErrors(path) == "")
        let frames = try await Players.frames(path)
        #expect(frames.count == 60)
        #expect(frames.first?.isKeyframe == true)
        let steps = zip(frames, frames.dropFirst()).map { $1.time - $0.time }
        #expect(steps.allSatisfy { abs($0 - 1.0 / 30) < 0.002 }, "\(steps.prefix(5))")
    }

    @Test func aClientJoiningAtAKeyframeAskedForDecodesCleanFromThere() async throws {
        var fragmenter: LiveMP4Fragmenter?
        let fragments = try Self.encode(50, firstTime: 0, keyframes: [25], into: &fragmenter)
        #expect(fragments[25].isKeyframe)
        #expect(fragments[1..<25].allSatisfy { !$0.isKeyframe }, "no keyframe but the first and the one asked for")
        let path = try Self.write(try #require(fragmenter).initSegment, fragments[25...])
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try await Players.decodeErrors(path) == "")
        let frames = try await Players.frames(path)
        #expect(frames.count == 25)
        #expect(frames.first?.isKeyframe == true)
    }

    @Test func anEncoderOpenedAgainContinuesTheTimeline() async throws {
        var fragmenter: LiveMP4Fragmenter?
        var fragments = try Self.encode(30, firstTime: 500, into: &fragmenter)
        let firstFormat = try #require(fragmenter).format
        // The device came back: a new encoder whose timestamps start again from zero.
        fragmenter?.continueTimeline()
        var again: LiveMP4Fragmenter? = fragmenter
        let encoder = try H264Encoder(settings: VideoEncoderSettings(encoder: .libx264), size: Self.size, frameRate: 30, range: .limited)
        #expect(encoder.format == firstFormat, "the same settings give the same stream header, so clients stay")
        fragments += try Self.encode(30, firstTime: 7, into: &again)
        let path = try Self.write(try #require(fragmenter).initSegment, fragments)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try await Players.decodeErrors(path) == "")
        let frames = try await Players.frames(path)
        #expect(frames.count == 60)
        let steps = zip(frames, frames.dropFirst()).map { $1.time - $0.time }
        #expect(steps.allSatisfy { $0 > 0 && $0 < 0.05 }, "time never goes back and has no gap: \(steps[28...31])")
    }

    @Test func framesTheCameraSkippedLeaveAHoleOfAtMostOneFrame() async throws {
        // One frame skipped, then four: a browser's Media Source takes a hole of more than two
        // frame times for a break and drops every frame up to the next keyframe.
        var fragmenter: LiveMP4Fragmenter?
        let fragments = try Self.encode(40, firstTime: 0, skipping: [10, 20, 21, 22, 23], into: &fragmenter)
        let path = try Self.write(try #require(fragmenter).initSegment, fragments)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let frames = try await Players.frames(path)
        #expect(frames.count == 35)
        let steps = zip(frames, frames.dropFirst()).map { $1.time - $0.time }
        #expect(steps.allSatisfy { $0 > 0 && $0 <= 2.0 / 30 + 0.001 }, "\(steps)")
        #expect(steps.filter { $0 > 1.5 / 30 }.count == 2, "the single skip keeps its real timing, the long one is cut to one frame")
    }

    @Test func eachFragmentSaysWhenItsFrameWasCaptured() throws {
        var fragmenter: LiveMP4Fragmenter?
        let fragments = try Self.encode(3, firstTime: 10, into: &fragmenter)
        for (index, fragment) in fragments.enumerated() {
            let bytes = fragment.bytes
            #expect(String(decoding: bytes[4..<8], as: UTF8.self) == "prft")
            #expect(bytes[8] == 1 && bytes[11] == 8, "version 1, flags 8: the time the frame was captured")
            let ntp = bytes[16..<24].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let unix = Double(ntp >> 32) - 2_208_988_800 + Double(ntp & 0xFFFF_FFFF) / 4_294_967_296
            #expect(abs(unix - (1_700_000_010 + Double(index) / 30)) < 1e-6)
            let prftSize = Int(bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            #expect(String(decoding: bytes[prftSize + 4..<prftSize + 8], as: UTF8.self) == "moof")
        }
    }
}

@Suite struct AnnexBTests {
    @Test func unitsAfterThreeAndFourByteStartCodes() {
        let stream: [UInt8] = [0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 1, 0x09, 0xF0, 0, 0, 1, 0x65, 4, 5, 0]
        let units = AnnexB.nalUnits(in: stream)
        #expect(units.map { AnnexB.unitType(stream, $0) } == [7, 8, 9, 5])
        #expect(units.map { Array(stream[$0]) } == [[0x67, 1, 2], [0x68, 3], [0x09, 0xF0], [0x65, 4, 5, 0]])
        #expect(AnnexB.lengthPrefixed(stream) == [0, 0, 0, 3, 0x67, 1, 2, 0, 0, 0, 2, 0x68, 3, 0, 0, 0, 4, 0x65, 4, 5, 0],
                "an access unit delimiter has no place in an MP4 sample")
    }
}
