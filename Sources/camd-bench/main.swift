// camd-bench: what camd's JPEG and H.264 paths cost, on a photograph.
//
//   swift build -c release --product camd-bench
//   scripts/bench-frames.py .build/bench        # the input frames (a photograph)
//   .build/release/camd-bench encoder .build/bench [QUALITY] [SECONDS]
//   .build/release/camd-bench thumbnail .build/bench [QUALITY] [SECONDS]
//   .build/release/camd-bench strips .build/bench [QUALITY] [SECONDS]     (StripBenchmark.swift)
//   .build/release/camd-bench video .build/bench [SECONDS]     (VideoBenchmark.swift; needs ffmpeg)
//
// encoder: for each size, camd's full path from a limited-range YUYV frame
// (deinterleave, range expansion, tjCompressFromYUVPlanes) vs the floor,
// tjCompressFromYUVPlanes on the same frame already planar and full range;
// same quality and 4:2:2. Then YUYV halved to 4:2:0 (`image.chroma`'s default: the
// conversion, the chroma averaged down, a 4:2:0 encode) against the same picture already
// planar in 4:2:0; limited-range NV12 (converted) and full-range YU12 (encoded in place,
// so the ratio shows the copy it saves), 4:2:0.
//
// thumbnail: for each size, what a 1/4 or 1/8 thumbnail costs next to a
// full-size snapshot: from a raw YUYV frame (box-reduced convert, resample,
// encode; and, for contrast, a full-size convert), from
// a JPEG decoded at a DCT scale (MJPEG cameras, saved photos), and from a JPEG
// decoded at full size, to show what DCT scaling saves.
import Foundation
import JPEG
import VideoCore

struct Measurement {
    var frames = 0
    var seconds = 0.0
    var bytes = 0
    func megapixelsPerSecond(_ size: FrameSize) -> Double { Double(frames * size.area) / seconds / 1e6 }
}

/// The photograph's frame of `size` (limited-range YUYV) that scripts/bench-frames.py wrote to `folder`.
func photograph(_ folder: String, _ size: FrameSize) throws -> [UInt8] {
    let path = "\(folder)/motorcycle-\(size).yuyv"
    guard let data = FileManager.default.contents(atPath: path) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
    }
    return [UInt8](data)
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
        result.seconds = (clock.now - start).inSeconds
        if result.seconds >= budget && result.frames >= 5 { break }
    }
    return result
}

/// CPU time of the calling thread, in seconds: time the thread was descheduled (another
/// process, a hypervisor's steal) does not count, so a shared machine's noise mostly drops out.
func threadCPUSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Times two bodies in alternating rounds of about `round` seconds each, so both see the
/// same machine (the same load, clock and cache weather) instead of one after the other.
/// Returns each round's seconds per call for both.
func alternate(budget: Double, round: Double = 0.1, _ a: () throws -> Int, _ b: () throws -> Int) rethrows -> ([Double], [Double]) {
    for _ in 0..<3 { _ = try a(); _ = try b() }
    func timed(_ body: () throws -> Int) rethrows -> Double {
        let start = threadCPUSeconds()
        var calls = 0
        while true {
            _ = try body()
            calls += 1
            let elapsed = threadCPUSeconds() - start
            if elapsed >= round { return elapsed / Double(calls) }
        }
    }
    var (first, second): ([Double], [Double]) = ([], [])
    let clock = ContinuousClock(), started = clock.now
    while first.count < 5 || clock.now - started < .milliseconds(Int64(budget * 1000)) {
        first.append(try timed(a))
        second.append(try timed(b))
    }
    return (first, second)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// The photograph's YUYV frame (limited range) in another camera layout, for the encoder table:
/// `.yuyv` as it is; `.nv12` (limited range, chroma interleaved: converted by camd) and
/// `.yuv420` (full range, three planes: a Raspberry Pi camera's, encoded in place), both
/// with each pair of rows' chroma averaged.
func cameraFrame(fromYUYV yuyv: [UInt8], size: FrameSize, as format: PixelFormat) -> (bytes: [UInt8], layout: FrameLayout) {
    guard format != .yuyv else {
        return (yuyv, FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited))
    }
    if format == .bgr24 {  // libcamera's RGB888 (B, G, R bytes), from the limited-range YUYV by BT.601
        var bytes = [UInt8](repeating: 0, count: size.area * 3)
        func clamp(_ value: Double) -> UInt8 { UInt8(max(0, min(255, value.rounded()))) }
        for i in 0..<size.area {
            let y = 1.164 * (Double(yuyv[2 * i]) - 16)
            let pair = (i / 2) * 4
            let cb = Double(yuyv[pair + 1]) - 128, cr = Double(yuyv[pair + 3]) - 128
            bytes[3 * i] = clamp(y + 2.018 * cb)
            bytes[3 * i + 1] = clamp(y - 0.391 * cb - 0.813 * cr)
            bytes[3 * i + 2] = clamp(y + 1.596 * cr)
        }
        return (bytes, FrameLayout(format: .bgr24, size: size, bytesPerLine: size.width * 3, range: .full))
    }
    let full = format == .yuv420
    func luma(_ value: UInt8) -> UInt8 { full ? PlaneConversion.expandLuma[Int(value)] : value }
    func chroma(_ a: UInt8, _ b: UInt8) -> UInt8 {
        let mean = UInt8((Int(a) + Int(b) + 1) / 2)
        return full ? PlaneConversion.expandChroma[Int(mean)] : mean
    }
    let (w, h) = (size.width, size.height)
    var bytes = [UInt8](repeating: 0, count: w * h + 2 * (w / 2) * (h / 2))
    for i in 0..<(w * h) { bytes[i] = luma(yuyv[2 * i]) }
    for y in 0..<(h / 2) {
        for x in 0..<(w / 2) {
            let top = (2 * y * w + 2 * x) * 2, bottom = top + w * 2
            let cb = chroma(yuyv[top + 1], yuyv[bottom + 1]), cr = chroma(yuyv[top + 3], yuyv[bottom + 3])
            if full {
                bytes[w * h + y * (w / 2) + x] = cb
                bytes[w * h + (w / 2) * (h / 2) + y * (w / 2) + x] = cr
            } else {
                bytes[w * h + y * w + 2 * x] = cb
                bytes[w * h + y * w + 2 * x + 1] = cr
            }
        }
    }
    return (bytes, FrameLayout(format: format, size: size, bytesPerLine: w, range: full ? .full : .limited))
}

func encoderBenchmark(folder: String, quality: Int, budget: Double) throws {
    let sizes = [FrameSize(width: 640, height: 480), FrameSize(width: 1280, height: 720),
                 FrameSize(width: 1920, height: 1080), FrameSize(width: 3840, height: 2160)]
    // YUYV twice: kept 4:2:2 (`image.chroma = "camera"`) and halved to 4:2:0 (the default), whose
    // floor is the same picture already planar in 4:2:0 (YU12, full range), as RGB's.
    let formats: [(PixelFormat, String, JPEGChroma)] = [(.yuyv, "YUYV limited 4:2:2", .camera),
                                                        (.yuyv, "YUYV limited →4:2:0", .halved),
                                                        (.nv12, "NV12 limited 4:2:0", .camera),
                                                        (.yuv420, "YU12 full 4:2:0", .camera), (.bgr24, "RGB888 (BGR) 4:2:0", .halved)]
    print("camd-bench encoder: quality \(quality), input: a photograph (scripts/bench-frames.py) in four camera layouts")
    print("(YUYV twice: kept 4:2:2, image.chroma = \"camera\", and halved to 4:2:0, the default):")
    print("YUYV and NV12 in limited range are converted to full-range planes; YU12 in full range is encoded in place;")
    print("RGB888 (libcamera's, B G R bytes) goes to TurboJPEG as RGB (tjCompress2), its floor the same picture as YU12")
    print("camd path (FrameEncoder.encode on the camera's frame) and floor (tjCompressFromYUVPlanes on the same picture")
    print("already planar and full range, same subsampling) alternate in rounds of 0.1 s of thread CPU time for \(budget) s")
    print("per row; figures are medians over the rounds, ratio = median of the rounds' ratios (min-max beside it)")
    print("format               size        camd path MP/s   floor MP/s   ratio   ratio range    rounds   camd ms/frame   floor ms/frame   JPEG bytes")
    for (format, label, chroma) in formats {
        for size in sizes {
            let data = try photograph(folder, size)
            let (frame, layout) = cameraFrame(fromYUYV: data, size: size, as: format)
            let encoder = try FrameEncoder(quality: quality, chroma: chroma)
            var planes = YUVImage()
            // The floor of RGB and of halved YUYV: the same picture already planar in 4:2:0 (YU12).
            let planar = format == .bgr24 || chroma == .halved
                ? cameraFrame(fromYUYV: data, size: size, as: .yuv420) : (bytes: frame, layout: layout)
            _ = planar.bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: planar.layout, into: &planes) }
            let floorEncoder = try JPEGEncoder()
            var jpegBytes = 0
            let (camd, floor) = try frame.withUnsafeBytes { bytes in
                try alternate(budget: budget, { jpegBytes = try encoder.encode(bytes, layout: layout).count; return jpegBytes },
                              { try floorEncoder.compress(planes, quality: quality).count })
            }
            let ratios = zip(camd, floor).map { $1 / $0 }
            let camdSeconds = median(camd), floorSeconds = median(floor)
            let megapixels = Double(size.area) / 1e6
            func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
            print(pad(label, 21) + pad("\(size)", 12) + pad(String(format: "%.1f", megapixels / camdSeconds), 17)
                  + pad(String(format: "%.1f", megapixels / floorSeconds), 13) + pad(String(format: "%.3f", median(ratios)), 8)
                  + pad(String(format: "%.3f-%.3f", ratios.min()!, ratios.max()!), 15) + pad("\(ratios.count)", 9)
                  + pad(String(format: "%.2f", camdSeconds * 1000), 16) + pad(String(format: "%.2f", floorSeconds * 1000), 17) + "\(jpegBytes)")
        }
    }
}

/// One row of the thumbnail table: a path, its cost, and what it made.
struct ThumbnailRow {
    var path: String
    var measurement: Measurement
    var output: [UInt8]
    var note = ""
    var milliseconds: Double { measurement.seconds / Double(measurement.frames) * 1000 }
}

func thumbnailBenchmark(folder: String, quality: Int, budget: Double) throws {
    let sizes = [FrameSize(width: 1280, height: 720), FrameSize(width: 1920, height: 1080), FrameSize(width: 3840, height: 2160)]
    print("camd-bench thumbnail: quality \(quality), area interpolation, \(budget) s per figure, input: a photograph (scripts/bench-frames.py)")
    func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
    print(pad("size", 11) + pad("path", 28) + pad("ms/image", 10) + pad("ratio", 7) + pad("output", 11)
          + pad("Y bytes/row", 13) + pad("JPEG bytes", 12) + "decode scale / note")
    let checker = try JPEGDecoder()
    for size in sizes {
        let frame = try photograph(folder, size)
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited)
        let encoder = try FrameEncoder(quality: quality)
        let pipeline = ImagePipeline()
        let quarter = Geometry(longestSide: size.width / 4), eighth = Geometry(longestSide: size.width / 8)
        var rows: [ThumbnailRow] = []

        // 1. The baseline: a full-size snapshot of the raw frame.
        let snapshot = try frame.withUnsafeBytes { try encoder.encode($0, layout: layout) }
        let full = try frame.withUnsafeBytes { bytes in
            try measure(budget: budget) { try encoder.encode(bytes, layout: layout).count }
        }
        rows.append(ThumbnailRow(path: "full snapshot", measurement: full, output: snapshot))

        // 2, 3. Raw frame to thumbnail, camd's path: converted at a box reduction (1/2, 1/4,
        // 1/8) that still holds the pixels needed, then resampled and encoded.
        for (name, geometry) in [("raw -> 1/4", quarter), ("raw -> 1/8", eighth)] {
            var output: [UInt8] = []
            let cost = try frame.withUnsafeBytes { bytes in
                try measure(budget: budget) {
                    output = try pipeline.jpeg(frame: bytes, layout: layout, geometry: geometry, overlay: nil, quality: quality)
                    return output.count
                }
            }
            rows.append(ThumbnailRow(path: name, measurement: cost, output: output,
                                     note: "box 1/\(pipeline.lastReduction ?? 1) before resampling"))
        }

        // For contrast: the whole frame converted, then resampled (no box reduction).
        // The conversion alone is timed too: it runs over the whole frame whatever the thumbnail's size.
        var planes = YUVImage()
        let conversion = frame.withUnsafeBytes { bytes in
            measure(budget: budget / 2) { PlaneConversion.convert(bytes, layout: layout, into: &planes) ? 1 : 0 }
        }
        var unreduced: [UInt8] = []
        let fullConvert = try frame.withUnsafeBytes { bytes in
            try measure(budget: budget) {
                _ = PlaneConversion.convert(bytes, layout: layout, into: &planes)
                unreduced = try pipeline.jpeg(planes, geometry: quarter, overlay: nil, quality: quality)
                return unreduced.count
            }
        }
        rows.append(ThumbnailRow(path: "raw -> 1/4, full convert", measurement: fullConvert, output: unreduced,
                                 note: String(format: "of which convert %.2f ms", conversion.seconds / Double(conversion.frames) * 1000)))

        // 4. JPEG to thumbnail, decoded at the smallest sufficient DCT scale.
        var scaled: [UInt8] = []
        let dct = try measure(budget: budget) {
            scaled = try pipeline.jpeg(jpeg: snapshot, geometry: quarter, overlay: nil, quality: quality)
            return scaled.count
        }
        let decode = pipeline.lastDecode.map { "\($0.scale) (\($0.size))" } ?? "none"
        rows.append(ThumbnailRow(path: "JPEG -> 1/4, DCT scaled", measurement: dct, output: scaled, note: decode))

        // 5. For contrast: the same JPEG decoded at full size, then resampled.
        let decoder = try JPEGDecoder()
        var decoded = YUVImage()
        var resized: [UInt8] = []
        let fullDecode = try measure(budget: budget) {
            _ = try decoder.decode(snapshot, into: &decoded)
            resized = try pipeline.jpeg(decoded, geometry: quarter, overlay: nil, quality: quality)
            return resized.count
        }
        rows.append(ThumbnailRow(path: "JPEG -> 1/4, full decode", measurement: fullDecode, output: resized,
                                 note: "1/1 (\(decoded.size))"))

        // Check each result by decoding it: the size must be what the geometry promises.
        let expected = [size, try quarter.outputSize(for: size), try eighth.outputSize(for: size),
                        try quarter.outputSize(for: size), try quarter.outputSize(for: size), try quarter.outputSize(for: size)]
        var check = YUVImage()
        for (row, want) in zip(rows, expected) {
            _ = try checker.decode(row.output, into: &check)
            guard check.size == want else {
                throw CocoaError(.coderInvalidValue, userInfo: [NSDebugDescriptionErrorKey:
                    "\(row.path) at \(size) made a \(check.size) JPEG; expected \(want)"])
            }
            print(pad("\(size)", 11) + pad(row.path, 28) + pad(String(format: "%.2f", row.milliseconds), 10)
                  + pad(String(format: "%.3f", row.milliseconds / rows[0].milliseconds), 7) + pad("\(check.size)", 11)
                  + pad("\(check.stride(0))", 13) + pad("\(row.output.count)", 12) + row.note)
        }
    }
}

let arguments = CommandLine.arguments
func number(_ index: Int, or fallback: Double) -> Double {
    arguments.count > index ? Double(arguments[index]) ?? fallback : fallback
}
let benchmarks: [String: (String) throws -> Void] = [
    "encoder": { try encoderBenchmark(folder: $0, quality: Int(number(3, or: 85)), budget: number(4, or: 2)) },
    "thumbnail": { try thumbnailBenchmark(folder: $0, quality: Int(number(3, or: 85)), budget: number(4, or: 2)) },
    "strips": { try stripBenchmark(folder: $0, quality: Int(number(3, or: 80)), budget: number(4, or: 2)) },
    "video": { try videoBenchmark(folder: $0, seconds: number(3, or: 6)) },
]
guard arguments.count >= 3, let benchmark = benchmarks[arguments[1]] else {
    FileHandle.standardError.write(Data("""
        usage: camd-bench encoder FRAMES_DIR [QUALITY] [SECONDS]     camd's frame->JPEG paths (YUYV, NV12, YU12) vs TurboJPEG's floor
               camd-bench thumbnail FRAMES_DIR [QUALITY] [SECONDS]   1/4 and 1/8 thumbnails vs a full snapshot
               camd-bench strips FRAMES_DIR [QUALITY] [SECONDS]      a YUYV frame's encode whole vs in strips on 2-4 threads: wall and CPU
               camd-bench video FRAMES_DIR [SECONDS]                 H.264 stage vs the ffmpeg command line; H.264 vs MJPEG bytes and SSIM
        FRAMES_DIR holds motorcycle-WxH.yuyv from scripts/bench-frames.py; QUALITY defaults to 85, SECONDS to 2
        (video: SECONDS is each clip's length, default 6; it writes its files to FRAMES_DIR/video)

        """.utf8))
    exit(64)
}
do {
    try benchmark(arguments[2])
} catch {
    FileHandle.standardError.write(Data("camd-bench: \(error)\n".utf8))
    exit(1)
}
