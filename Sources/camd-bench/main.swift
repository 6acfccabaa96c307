// camd-bench: the frame→JPEG path against TurboJPEG's own floor.
//
//   swift build -c release --product camd-bench
//   scripts/bench-frames.py .build/bench        # the input frames (a photograph)
//   .build/release/camd-bench encoder .build/bench
//
// For each size: camd's full path from a limited-range YUYV frame (deinterleave,
// range expansion, tjCompressFromYUVPlanes) vs the floor, tjCompressFromYUVPlanes
// on the same frame already planar and full range; same quality and 4:2:2.
import Foundation
import JPEG
import VideoCore

struct Measurement {
    var frames = 0
    var seconds = 0.0
    var bytes = 0
    func megapixelsPerSecond(_ size: FrameSize) -> Double { Double(frames * size.area) / seconds / 1e6 }
}

/// Runs `body` repeatedly for about `budget` seconds after a warm-up, and times it.
func measure(budget: Double, _ body: () throws -> Int) rethrows -> Measurement {
    for _ in 0..<3 { _ = try body() }
    var result = Measurement()
    let clock = ContinuousClock()
    let start = clock.now
    while true {
        result.bytes = try body()
        result.frames += 1
        let elapsed = clock.now - start
        result.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if result.seconds >= budget && result.frames >= 5 { break }
    }
    return result
}

func encoderBenchmark(folder: String, quality: Int, budget: Double) throws {
    let sizes = [FrameSize(width: 640, height: 480), FrameSize(width: 1280, height: 720),
                 FrameSize(width: 1920, height: 1080), FrameSize(width: 3840, height: 2160)]
    print("camd-bench encoder: quality \(quality), 4:2:2, \(budget) s per figure, input: a photograph (scripts/bench-frames.py)")
    print("size        camd path MP/s   floor MP/s   ratio   camd ms/frame   floor ms/frame   JPEG bytes")
    for size in sizes {
        let path = "\(folder)/motorcycle-\(size).yuyv"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        let frame = [UInt8](data)
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited)
        let encoder = try FrameEncoder(quality: quality)
        let camd = try frame.withUnsafeBytes { bytes in
            try measure(budget: budget) { try encoder.encode(bytes, layout: layout).count }
        }
        var planes = YUVImage()
        _ = frame.withUnsafeBytes { PlaneConversion.convert($0, layout: layout, into: &planes) }
        let floorEncoder = try JPEGEncoder()
        let floor = try measure(budget: budget) { try floorEncoder.compress(planes, quality: quality).count }
        let a = camd.megapixelsPerSecond(size), b = floor.megapixelsPerSecond(size)
        func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        print(pad("\(size)", 12) + pad(String(format: "%.1f", a), 17) + pad(String(format: "%.1f", b), 13)
              + pad(String(format: "%.3f", a / b), 8) + pad(String(format: "%.2f", camd.seconds / Double(camd.frames) * 1000), 16)
              + pad(String(format: "%.2f", floor.seconds / Double(floor.frames) * 1000), 17) + "\(camd.bytes)")
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3, arguments[1] == "encoder" else {
    FileHandle.standardError.write(Data("usage: camd-bench encoder FRAMES_DIR [QUALITY] [SECONDS]\n".utf8))
    exit(64)
}
do {
    try encoderBenchmark(folder: arguments[2], quality: arguments.count > 3 ? Int(arguments[3]) ?? 85 : 85,
                         budget: arguments.count > 4 ? Double(arguments[4]) ?? 2 : 2)
} catch {
    FileHandle.standardError.write(Data("camd-bench: \(error)\n".utf8))
    exit(1)
}
