import Foundation
import CamdTestSupport
import CaptureSession
import JPEG
import Testing
import V4L2
import VideoCore

/// Capture against vivid, the kernel's virtual camera: one device, so one test at a time.
@Suite("vivid", .serialized, .enabled(if: vividEnabled, "needs vivid: run scripts/test-vivid"))
struct VividCaptureTests {
    @Test func discoveryListsTheCaptureNodeOnly() throws {
        let cameras = DeviceDiscovery.cameras()
        #expect(cameras.contains { $0.path == Vivid.capture })
        #expect(!cameras.contains { $0.path == Vivid.output }, "video1 is vivid's output device, not a camera")
        let vivid = try #require(cameras.first { $0.path == Vivid.capture })
        #expect(vivid.info?.driver == "vivid")
        #expect(vivid.access?.allowed == true)
        #expect(try DeviceDiscovery.resolve(nil) == Vivid.capture)
        #expect(try DeviceDiscovery.resolve("vivid") == Vivid.capture)
        #expect(try DeviceDiscovery.resolve("video0") == Vivid.capture)
        #expect(try DeviceDiscovery.resolve("0") == Vivid.capture)
    }

    @Test func theOutputNodeIsRefusedByName() {
        do {
            _ = try VideoDevice(path: Vivid.output)
            Issue.record("opened vivid's output node as a camera")
        } catch {
            #expect(error.kind == .notACamera)
            #expect(error.message.contains("/dev/video1"))
            #expect(error.message.contains("is a video output device, not a camera"))
        }
    }

    @Test func formatsAndSizesAreEnumerated() throws {
        let device = try VideoDevice(path: Vivid.capture)
        let formats = try device.formats()
        for wanted: PixelFormat in [.yuyv, .nv12, .rgb24, .grey] {
            #expect(formats.contains { $0.format == wanted }, "vivid offers \(wanted)")
        }
        #expect(!formats.contains { $0.format.isJPEG }, "vivid has no MJPEG")
        let yuyv = try #require(formats.first { $0.format == .yuyv })
        #expect(yuyv.sizes.largest == FrameSize(width: 3840, height: 2160))
    }

    @Test(arguments: [FrameSize(width: 640, height: 480), FrameSize(width: 1280, height: 720), FrameSize(width: 1920, height: 1080)])
    func yuyvSnapshotsHaveTheRightSizeAndColours(size: FrameSize) throws {
        let result = try Vivid.snapshot(format: .yuyv, size: size, fps: nil, skip: 1)
        #expect(result.configuration.layout.format == .yuyv)
        #expect(result.configuration.layout.range == .limited, "vivid's YUYV is limited range")
        let (decoded, colours) = try Vivid.barColours(result.jpeg)
        #expect(decoded == size)
        Vivid.expectBars(colours)
        #expect(colours[7].0 <= 4, "black decodes to about 0, not 16")
        #expect(abs(colours[0].0 - 191) <= 4, "the 75% bar decodes to about 191, not 180")
    }

    @Test(arguments: [PixelFormat.nv12, .yuv420, .uyvy, .rgb24, .bgr24])
    func otherFormatsGiveTheSameColours(format: PixelFormat) throws {
        let result = try Vivid.snapshot(format: format, size: FrameSize(width: 640, height: 480))
        #expect(result.configuration.layout.format == format)
        let (size, colours) = try Vivid.barColours(result.jpeg)
        #expect(size == FrameSize(width: 640, height: 480))
        Vivid.expectBars(colours)
    }

    /// vivid told by its quantization control to send full-range Y'CbCr, as a Raspberry Pi
    /// camera's YU12 is: the frame's planes go to TurboJPEG where they lie (no conversion),
    /// and the bars still come out right, black 0 and white 191.
    @Test func fullRangeYU12IsEncodedInPlace() throws {
        defer { _ = try? VideoDevice(path: Vivid.capture).setControls([("quantization", "Default")]) }
        let result = try Vivid.snapshot(format: .yuv420, size: FrameSize(width: 640, height: 480),
                                        controls: [("quantization", "Full Range")])
        #expect(result.configuration.layout.range == .full)
        #expect(PlaneConversion.inPlacePlanes(result.configuration.layout) != nil)
        let (size, colours) = try Vivid.barColours(result.jpeg)
        #expect(size == FrameSize(width: 640, height: 480))
        Vivid.expectBars(colours)
    }

    @Test func greyIsEncodedAsLuma() throws {
        let result = try Vivid.snapshot(format: .grey, size: FrameSize(width: 640, height: 480))
        let header = try JPEGDecoder().header(result.jpeg)
        #expect(header.subsampling == .gray)
        #expect(result.configuration.layout.range == .full, "vivid's GREY is full range, like RGB")
        let (_, colours) = try Vivid.barColours(result.jpeg)
        // vivid's luma weights for coloured bars are its own; what must hold is
        // grey samples, full range (white 191, black 0) and the bars in luma order.
        #expect(colours.allSatisfy { $0.0 == $0.1 && $0.1 == $0.2 }, "\(colours)")
        #expect(abs(colours[0].0 - 191) <= 4, "white bar \(colours[0])")
        #expect(colours[7].0 <= 4, "black bar \(colours[7])")
        let levels = colours.map(\.0)
        #expect(levels == levels.sorted(by: >), "bars in decreasing luma: \(levels)")
    }

    /// What `camctl snapshot` writes, with or without image options: EXIF Make and Model are the
    /// card name the driver reports ("vivid", not the device path), the pixel size tags are the
    /// output's, and `rotate=exif` leaves the pixels as captured and says the turn in Orientation.
    @Test(arguments: [[:], ["width": "320", "height": "320", "fit": "cover"], ["rotate": "90", "max": "320"],
                      ["rotate": "exif", "flip": "h"]])
    func snapshotsNameTheCardAndTheirOwnSizeInEXIF(query: [String: String]) throws {
        var options = Snapshot.Options(device: Vivid.capture)
        options.request = CaptureRequest(format: .yuyv, size: FrameSize(width: 640, height: 480), fps: 25)
        options.skip = 2
        options.image = ImageSettings(geometry: try Geometry.parse(query: query))
        let result = try Snapshot.take(options)
        #expect(result.card == "vivid")
        let exif = EXIFReadBack.entries(in: result.jpeg)
        func ascii(_ tag: UInt16) -> String? { exif[tag].map { String(decoding: $0.bytes.prefix { $0 != 0 }, as: UTF8.self) } }
        func number(_ tag: UInt16) -> Int? {
            exif[tag].map { $0.bytes.prefix($0.type == 3 ? 2 : 4).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) } }
        }
        #expect(ascii(0x010F) == "vivid" && ascii(0x0110) == "vivid", "Make \(ascii(0x010F) ?? "none"), Model \(ascii(0x0110) ?? "none")")
        let size = try JPEGDecoder().header(result.jpeg).size
        #expect(size == result.size)
        #expect(number(0xA002) == size.width && number(0xA003) == size.height, "PixelX/YDimension for a \(size) picture")
        #expect(number(0x0112) == (query["rotate"] == "exif" ? 2 : nil) || (number(0x0112) == 1 && query["rotate"] != "exif"))
    }

    @Test func aSizeVividDoesNotOfferGetsTheNearest() throws {
        let result = try Vivid.snapshot(format: .yuyv, size: FrameSize(width: 1280, height: 700))
        #expect(result.configuration.layout.size == FrameSize(width: 1280, height: 720))
        #expect(try JPEGDecoder().header(result.jpeg).size == FrameSize(width: 1280, height: 720))
    }

    @Test func frameRateIsSetWithSParm() throws {
        let source = try V4L2Source(path: Vivid.capture, request: CaptureRequest(format: .yuyv, size: FrameSize(width: 640, height: 480), fps: 25))
        defer { source.stop() }
        #expect(source.configuration.interval == FrameInterval(numerator: 1, denominator: 25))
        // Measure from the driver's own sequence numbers and timestamps.
        var frames: [Frame] = []
        for _ in 0..<30 { frames.append(try source.nextFrame(timeout: .seconds(10))) }
        let first = frames[5], last = frames[frames.count - 1]  // after start-up
        let measured = Double(last.sequence - first.sequence) / (last.monotonicTime - first.monotonicTime)
        #expect(abs(measured - 25) < 3, "measured \(measured) fps")
    }

    @Test func brightnessChangesTheImage() throws {
        defer { try? Vivid.setControl("brightness", "128") }
        let normal = try Vivid.meanLevel(Vivid.snapshot(size: FrameSize(width: 640, height: 480), controls: [("brightness", "128")]).jpeg)
        let bright = try Vivid.meanLevel(Vivid.snapshot(size: FrameSize(width: 640, height: 480), controls: [("brightness", "220")]).jpeg)
        #expect(bright > normal + 20, "mean level \(normal) → \(bright)")
    }

    @Test func controlsAreListedAndRangeChecked() throws {
        let device = try VideoDevice(path: Vivid.capture)
        let controls = try device.controls()
        let brightness = try #require(controls.first { $0.name == "brightness" })
        #expect(brightness.kind == .integer)
        #expect(brightness.minimum == 0 && brightness.maximum == 255)
        for name in ["disconnect", "inject_vidioc_streamon_error", "inject_fatal_streaming_error"] {
            #expect(controls.contains { $0.name == name }, "vivid has \(name)")
        }
        do {
            try device.setControls([("brightness", "300")])
            Issue.record("brightness=300 accepted")
        } catch {
            #expect(error.kind == .invalidArgument)
            #expect(error.message == "brightness must be between 0 and 255; got 300")
        }
    }

    /// Frames are the driver's buffers, lent without a copy, while the driver keeps two to
    /// fill; frames held past that are copies, so capture goes on; a lent frame never
    /// changes, and stays readable after its buffer is requeued elsewhere or the stream stops.
    @Test func framesAreLentTheDriversBuffersWhileTwoAreLeftToFill() throws {
        let source = try V4L2Source(path: Vivid.capture, request: CaptureRequest(format: .yuyv, size: FrameSize(width: 640, height: 480), fps: 25))
        defer { source.stop() }
        #expect(CaptureStream.defaultBufferCount == 4)
        let held = HeldFrames()
        held.frames = [try source.nextFrame(timeout: .seconds(10)), try source.nextFrame(timeout: .seconds(10))]
        #expect(held.frames.allSatisfy { $0.storage.isLent }, "the first two frames lie in the driver's buffers")
        let firstBytes = held.frames[0].bytes, firstSequence = held.frames[0].sequence
        var copies: [Frame] = []
        for _ in 0..<8 { copies.append(try source.nextFrame(timeout: .seconds(10))) }
        #expect(copies.allSatisfy { !$0.storage.isLent }, "with two lent, frames are copied so the driver keeps two buffers")
        #expect(source.stream.statistics.copied == 8)
        #expect(zip(copies, copies.dropFirst()).allSatisfy { $0.sequence < $1.sequence }, "capture went on")
        #expect(held.frames[0].bytes == firstBytes && held.frames[0].sequence == firstSequence, "a lent frame never changes")
        // Let go on another thread, as an encoder does: the buffers are requeued and lent again.
        let released = Thread { held.frames.removeAll() }
        released.start()
        while !released.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        copies.removeAll()
        let again = try source.nextFrame(timeout: .seconds(10))
        #expect(again.storage.isLent, "buffers whose frames are gone are lent again")
        #expect(source.stream.recycler.keptBoxes > 0, "the boxes of the copies are kept for a while")
        for _ in 1..<CaptureStream.boxesKeptFor { _ = try source.nextFrame(timeout: .seconds(10)) }
        #expect(source.stream.recycler.keptBoxes == 0, "after \(CaptureStream.boxesKeptFor) frames lent in a row, no box is kept")
        #expect(source.stream.statistics.copied == 8)
        let againBytes = again.bytes
        source.stop()
        #expect(again.bytes == againBytes, "a lent frame outlives its stream")
        let jpeg = try FrameEncoder().encode(again)
        let (size, colours) = try Vivid.barColours(jpeg)
        #expect(size == FrameSize(width: 640, height: 480))
        Vivid.expectBars(colours)
    }

    @Test func aStreamOnErrorIsAnErrorNotAHang() throws {
        try Vivid.setControl("inject_vidioc_streamon_error")
        let started = ContinuousClock.now
        do {
            _ = try Vivid.snapshot(size: FrameSize(width: 640, height: 480))
            Issue.record("a snapshot succeeded although STREAMON was made to fail")
        } catch {
            guard case Snapshot.Failure.device(let deviceError)? = error as? Snapshot.Failure else { Issue.record("wrong failure: \(error)"); return }
            #expect(deviceError.message.contains("STREAMON"))
        }
        #expect(ContinuousClock.now - started < .seconds(20))
        // The fault is one-shot: the next snapshot works.
        #expect(try JPEGDecoder().header(Vivid.snapshot(size: FrameSize(width: 640, height: 480)).jpeg).size.width == 640)
    }

    @Test func aFatalStreamingErrorEndsTheStream() throws {
        let source = try V4L2Source(path: Vivid.capture, request: CaptureRequest(format: .yuyv, size: FrameSize(width: 640, height: 480), fps: 25))
        defer { source.stop() }
        _ = try source.nextFrame(timeout: .seconds(10))
        try Vivid.setControl("inject_fatal_streaming_error")
        let started = ContinuousClock.now
        var failure: DeviceError?
        for _ in 0..<50 {
            do { _ = try source.nextFrame(timeout: .seconds(5)) } catch { failure = error; break }
        }
        let error = try #require(failure, "frames kept coming after a fatal streaming error")
        #expect(error.kind == .streamFailed || error.kind == .disconnected, "\(error)")
        #expect(ContinuousClock.now - started < .seconds(15))
    }

    @Test func aDisconnectWhileStreamingIsReportedAndTheCameraComesBack() throws {
        do {
            let source = try V4L2Source(path: Vivid.capture, request: CaptureRequest(format: .yuyv, size: FrameSize(width: 640, height: 480), fps: 25))
            defer { source.stop() }
            _ = try source.nextFrame(timeout: .seconds(10))
            try Vivid.setControl("disconnect")
            let started = ContinuousClock.now
            do {
                for _ in 0..<50 { _ = try source.nextFrame(timeout: .seconds(5)) }
                Issue.record("frames kept coming after a disconnect")
            } catch {
                #expect(error.kind == .disconnected, "\(error)")
                #expect(error.message.contains("disconnected"))
            }
            #expect(ContinuousClock.now - started < .seconds(10))
        }
        // Every descriptor is closed now; vivid brings the node back.
        #expect(Vivid.waitUntilBack(), "/dev/video0 did not come back after the disconnect")
        #expect(try JPEGDecoder().header(Vivid.snapshot(size: FrameSize(width: 640, height: 480)).jpeg).size.width == 640)
    }
}

/// Frames let go of on another thread than the one that took them.
private final class HeldFrames: @unchecked Sendable {  // one thread at a time: the test waits for the other
    var frames: [Frame] = []
}
