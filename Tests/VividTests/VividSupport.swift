import CaptureSession
import Foundation
import JPEG
import Testing
import V4L2
import VideoCore

/// These tests need vivid, the kernel's virtual V4L2 driver, loaded with
/// `modprobe vivid n_devs=1` (so /dev/video0 is its capture node): scripts/test-vivid
/// runs them in a VM with CAMD_TEST_VIVID=1. Without it they are skipped, and the
/// VM script fails if they did not run.
let vividEnabled = ProcessInfo.processInfo.environment["CAMD_TEST_VIVID"] == "1"

enum Vivid {
    static let capture = "/dev/video0"
    static let output = "/dev/video1"

    /// vivid's 75% colour bars as full-range RGB: white, yellow, cyan, green, magenta, red, blue, black.
    static let bars = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0), (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0)]
    static let barNames = ["white", "yellow", "cyan", "green", "magenta", "red", "blue", "black"]

    static func snapshot(format: PixelFormat? = nil, size: FrameSize? = nil, fps: Double? = 25, skip: Int = 2,
                         controls: [(name: String, value: String)] = []) throws -> Snapshot.Result {
        var options = Snapshot.Options(device: capture)
        options.request = CaptureRequest(format: format, size: size, fps: fps)
        options.skip = skip
        options.frameTimeout = .seconds(30)  // vivid in an emulated VM is slow at large sizes
        options.controls = controls
        return try Snapshot.take(options)
    }

    /// The average colour of a 9x9 patch at the centre of each bar, on a row below vivid's text overlay.
    static func barColours(_ jpeg: [UInt8]) throws -> (size: FrameSize, colours: [(Int, Int, Int)]) {
        let (size, rgb) = try JPEGDecoder().decodeRGB(jpeg)
        let row = size.height * 3 / 5
        let colours = (0..<8).map { bar -> (Int, Int, Int) in
            let cx = (2 * bar + 1) * size.width / 16
            var sum = (0, 0, 0)
            for y in (row - 4)...(row + 4) {
                for x in (cx - 4)...(cx + 4) {
                    let p = (y * size.width + x) * 3
                    sum.0 += Int(rgb[p]); sum.1 += Int(rgb[p + 1]); sum.2 += Int(rgb[p + 2])
                }
            }
            return (sum.0 / 81, sum.1 / 81, sum.2 / 81)
        }
        return (size, colours)
    }

    /// Mean luma over the whole image, for brightness checks.
    static func meanLevel(_ jpeg: [UInt8]) throws -> Double {
        let (_, rgb) = try JPEGDecoder().decodeRGB(jpeg)
        return Double(rgb.reduce(0) { $0 + Int($1) }) / Double(rgb.count)
    }

    static func expectBars(_ colours: [(Int, Int, Int)], tolerance: Int = 8, sourceLocation: SourceLocation = #_sourceLocation) {
        for (index, (got, expected)) in zip(colours, bars).enumerated() {
            let ok = abs(got.0 - expected.0) <= tolerance && abs(got.1 - expected.1) <= tolerance && abs(got.2 - expected.2) <= tolerance
            #expect(ok, "\(barNames[index]) bar is \(got), expected about \(expected)", sourceLocation: sourceLocation)
        }
    }

    /// Presses or sets one of vivid's controls from a separate file descriptor, as another program would.
    static func setControl(_ name: String, _ value: String = "1") throws {
        let device = try VideoDevice(path: capture)
        try device.setControls([(name, value)])
    }

    /// Waits until /dev/video0 opens again (vivid reconnects once every descriptor is closed).
    static func waitUntilBack(timeout: Duration = .seconds(30)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? VideoDevice(path: capture)) != nil { return true }
            usleep(200_000)
        }
        return false
    }
}
