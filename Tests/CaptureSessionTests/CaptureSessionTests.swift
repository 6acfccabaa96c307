@testable import CaptureSession
import CamdTestSupport
import Foundation
import JPEG
import Testing
import V4L2
import VideoCore

@Suite struct AtomicFileTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camd-atomic-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path

    func leftovers() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix(AtomicFile.temporaryPrefix) }
    }

    @Test func writesWholeFilesAndReplaces() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/a.jpg"
        try AtomicFile.write([1, 2, 3], to: path)
        try AtomicFile.write([4, 5], to: path)
        #expect(FileManager.default.contents(atPath: path) == Data([4, 5]))
        #expect(leftovers().isEmpty)
    }

    @Test func aMissingFolderIsNamed() {
        do {
            try AtomicFile.write([1], to: folder + "/missing/a.jpg")
            Issue.record("wrote into a missing folder")
        } catch {
            #expect(error.kind == .missingFolder)
            #expect(error.description.contains("/missing/a.jpg"))
        }
    }

    @Test func aFailedRenameLeavesNothing() throws {
        try FileManager.default.createDirectory(atPath: folder + "/taken", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The target is a non-empty folder: the rename fails after the data was written.
        _ = FileManager.default.createFile(atPath: folder + "/taken/x", contents: Data())
        #expect(throws: OutputError.self) { try AtomicFile.write([1, 2, 3], to: folder + "/taken") }
        #expect(leftovers().isEmpty)
    }
}

@Suite struct SyntheticSnapshotTests {
    @Test func theSyntheticSourceIsLabelledAndGivesCorrectBars() throws {
        var options = Snapshot.Options(device: FrameSources.syntheticName)
        options.request = CaptureRequest(size: FrameSize(width: 640, height: 480), fps: 120)
        options.skip = 2
        let result = try Snapshot.take(options)
        #expect(result.source.contains("synthetic"))
        #expect(result.skipped == 2)
        let (size, rgb) = try JPEGDecoder().decodeRGB(result.jpeg)
        #expect(size == FrameSize(width: 640, height: 480))
        let y = size.height / 2
        let black = (y * size.width + size.width * 15 / 16) * 3
        let white = (y * size.width + size.width / 16) * 3
        #expect(rgb[black] <= 2 && rgb[black + 1] <= 2)
        #expect(abs(Int(rgb[white]) - 191) <= 3)
    }

    /// `camctl snapshot --no-daemon --max 160 --rotate 90`: the frame's planes are scaled and
    /// turned before the one encode, not encoded, decoded and encoded again.
    @Test func imageOptionsAreAppliedToTheRawFrameBeforeTheOneEncode() throws {
        var options = Snapshot.Options(device: FrameSources.syntheticName)
        options.request = CaptureRequest(size: FrameSize(width: 640, height: 480), fps: 120)
        options.skip = 0
        options.image = ImageSettings(geometry: try Geometry.parse(query: ["max": "160", "rotate": "90"]))
        let result = try Snapshot.take(options)
        #expect(result.renderedFromRawFrame)
        #expect(result.size == FrameSize(width: 120, height: 160))
        let (size, rgb) = try JPEGDecoder().decodeRGB(result.jpeg)
        #expect(size == result.size)
        // Turned clockwise: the bars run across, white (left in the frame) at the top, black at the bottom.
        let x = size.width / 2
        let top = (size.height / 32 * size.width + x) * 3, bottom = ((size.height - size.height / 32) * size.width + x) * 3
        #expect(abs(Int(rgb[top]) - 191) <= 6, "top \(rgb[top])")
        #expect(rgb[bottom] <= 6, "bottom \(rgb[bottom])")
        let exif = EXIFReadBack.entries(in: result.jpeg)
        #expect(exif[0xA002]?.bytes.first.map(Int.init) == 120)  // PixelXDimension of the output, not the frame
    }

    @Test func anImageOptionThatDoesNotFitTheFrameNamesItsParameter() throws {
        var options = Snapshot.Options(device: FrameSources.syntheticName)
        options.request = CaptureRequest(size: FrameSize(width: 640, height: 480), fps: 120)
        options.skip = 0
        options.image = ImageSettings(geometry: try Geometry.parse(query: ["crop": "600,0,100,100"]))
        do {
            _ = try Snapshot.take(options)
            Issue.record("a crop outside the 640x480 frame was accepted")
        } catch {
            guard case .image(let imageError) = error else { Issue.record("wrong failure: \(error)"); return }
            #expect(imageError.parameter == "crop")
        }
    }

    @Test func theSyntheticSourceRefusesOtherFormats() {
        var options = Snapshot.Options(device: FrameSources.syntheticName)
        options.request = CaptureRequest(format: .nv12)
        do { _ = try Snapshot.take(options); Issue.record("accepted NV12") } catch {
            guard case .device(let error) = error else { Issue.record("wrong failure"); return }
            #expect(error.kind == .unsupported)
        }
    }
}

/// The synthetic source fills the same few frame buffers again rather than allocating one per frame.
@Suite struct FrameReuseTests {
    @Test func framesNobodyHoldsAreReused() throws {
        let source = try SyntheticSource(request: CaptureRequest(format: nil, size: FrameSize(width: 160, height: 120), fps: 120))
        var boxes = Set<ObjectIdentifier>()
        var previous: [UInt8]?
        for _ in 0..<30 {
            let frame = try source.nextFrame(timeout: .seconds(1))
            boxes.insert(ObjectIdentifier(frame.storage))
            #expect(frame.bytes != previous, "the moving square did not move: a stale buffer was served")
            previous = frame.bytes
        }
        #expect(boxes.count <= 2, "\(boxes.count) buffers for 30 frames")
        // Frames held meanwhile keep their pixels.
        let held = try source.nextFrame(timeout: .seconds(1))
        let pixels = held.bytes
        for _ in 0..<5 { _ = try source.nextFrame(timeout: .seconds(1)) }
        #expect(held.bytes == pixels)
    }
}
