// camd-bench video: what camd's H.264 stage costs next to the `ffmpeg` command line, and
// what its stream weighs next to camd's MJPEG at the same quality of picture.
//
//   .build/release/camd-bench video .build/bench [SECONDS]
//
// The clips (PanningClip.swift): the photograph's 3840x2160 frame (scripts/bench-frames.py),
// a window of 90% of it panning slowly to 1920x1080 and 1280x720, limited-range YUYV as a
// webcam sends it, 30 fps, SECONDS long (default 6: three whole keyframe intervals). Each
// size also once with sensor-like noise on the luma.
//
// CPU: camd's stage (VideoPicture.fill + H264Encoder.encode, libx264) measured with
// getrusage(RUSAGE_SELF) around it, so x264's threads count; `ffmpeg` encoding the same raw
// frames with the same settings measured with wait4's rusage of the child. Both alternate
// in rounds. Per frame = (a run of the clip - a run of its first frame) / (frames - 1), so
// neither side's fixed cost (ffmpeg's process start, x264's opening) is spread over the frames;
// the whole-run figure is beside it. x264's settings SEI and each packet (framemd5) of the
// two streams are compared, so a like-for-like run shows itself.
//
// Bytes and quality: the stream camd made (as fragmented MP4, FragmentedMP4Writer) and an
// MJPEG file of camd's JPEG encoder at quality 85 on the same frames, each compared with the
// raw frames by ffmpeg's ssim filter in the camera's own 4:2:2 limited range.
import Foundation
import JPEG
import Video
import VideoCore

/// CPU time of this whole process, every thread (x264's too), in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return seconds(usage)
}

func seconds(_ usage: rusage) -> Double {
    Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// A failure of the video benchmark, said as a sentence (a missing input, ffmpeg's own complaint).
struct VideoBenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs a program with stdin on /dev/null and stdout and stderr in `log`, waits for it and
/// returns the CPU time it used, all its threads (wait4's rusage: this child's alone).
@discardableResult
func runChild(_ arguments: [String], log: String) throws -> Double {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
    guard spawned == 0 else {
        throw VideoBenchmarkFailure(description: "\(arguments[0]) could not be started: \(String(cString: strerror(spawned)))"
                                  + (spawned == ENOENT ? "; install it (Debian: apt-get install ffmpeg)" : ""))
    }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
        guard errno == EINTR else { throw VideoBenchmarkFailure(description: "wait4: \(String(cString: strerror(errno)))") }
    }
    // WIFEXITED and WEXITSTATUS are macros Swift cannot import.
    guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
        let tail = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").suffix(5).joined(separator: "\n") ?? ""
        throw VideoBenchmarkFailure(description: "\(arguments.joined(separator: " ")) failed (wait status \(status)):\n\(tail)")
    }
    return seconds(usage)
}

/// What ffmpeg's ssim filter said of one file against the raw frames.
struct SSIMResult {
    var all: Double
    var luma: Double
    /// The lowest frame's All.
    var worstFrame: Double
    var frames: Int
}

/// What x264 writes into the stream it makes (an SEI: "x264 - core N ... options: ..."):
/// the proof that two encodes ran the same encoder with the same options, threads included.
struct X264Settings {
    var version: String
    var options: [String]

    /// The first such SEI in `bytes` (a packet, a whole MP4 file).
    init?(in bytes: [UInt8]) {
        let marker = Array("x264 - core ".utf8)
        guard bytes.count > marker.count,
              let start = (0...(bytes.count - marker.count)).first(where: { bytes[$0..<$0 + marker.count].elementsEqual(marker) })
        else { return nil }
        let end = bytes[start...].firstIndex(where: { $0 < 0x20 || $0 > 0x7E }) ?? bytes.count
        let parts = String(decoding: bytes[start..<end], as: UTF8.self).components(separatedBy: " options: ")
        version = parts[0].split(separator: " ").prefix(4).joined(separator: " ")
        options = parts.count > 1 ? parts[1].split(separator: " ").map(String.init) : []
    }
}

/// The figures of one clip.
struct VideoClipFigures {
    var label: String
    var size: FrameSize
    var frames: Int
    // Per round, seconds of CPU.
    var camdClip: [Double] = [], camdFirstFrame: [Double] = [], camdFill: [Double] = []
    var ffmpegClip: [Double] = [], ffmpegFirstFrame: [Double] = [], ffmpegConvert: [Double] = [], ffmpegConvertFirst: [Double] = []
    var h264PacketBytes = 0, mp4Bytes = 0, ffmpegMP4Bytes = 0
    /// Packets of camd's stream byte for byte the same as ffmpeg's, by position.
    var identicalPackets = 0, ffmpegPackets = 0
    var jpegBytes = 0, jpegCPU = 0.0
    var h264Quality: SSIMResult?, jpegQuality: SSIMResult?
    var camdX264: X264Settings?, ffmpegX264: X264Settings?

    func perFrame(_ clip: Double, _ first: Double) -> Double { (clip - first) / Double(frames - 1) }
    var camdPerFrame: [Double] { zip(camdClip, camdFirstFrame).map { perFrame($0, $1) } }
    var ffmpegPerFrame: [Double] { zip(ffmpegClip, ffmpegFirstFrame).map { perFrame($0, $1) } }
    var ratios: [Double] { zip(camdPerFrame, ffmpegPerFrame).map { $0 / $1 } }
    var wholeRunRatios: [Double] { zip(camdClip, ffmpegClip).map { $0 / $1 } }
    var seconds: Double { Double(frames) / PanningClip.frameRate }
}

func videoBenchmark(folder: String, seconds: Double, rounds: Int = 5) throws {
    let source = FrameSize(width: 3840, height: 2160)
    let sourcePath = "\(folder)/motorcycle-\(source).yuyv"
    guard let data = FileManager.default.contents(atPath: sourcePath) else {
        throw VideoBenchmarkFailure(description: "\(sourcePath) is missing: make it with `scripts/bench-frames.py \(folder)`")
    }
    let sourceFrame = [UInt8](data)
    let count = max(2, Int((seconds * PanningClip.frameRate).rounded()))
    let work = "\(folder)/video"
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)

    try runChild(["ffmpeg", "-version"], log: "\(work)/ffmpeg-version.txt")
    let ffmpegVersion = (try? String(contentsOfFile: "\(work)/ffmpeg-version.txt", encoding: .utf8))?
        .split(separator: " ").prefix(3).joined(separator: " ") ?? "ffmpeg"
    let cpuModel = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.split(separator: "\n")
        .first { $0.hasPrefix("model name") }?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "?"
    print("camd-bench video: \(count) frames (\(seconds) s at 30 fps) per clip, limited-range YUYV panning over a photograph")
    print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cpus, \(cpuModel); \(ffmpegVersion); load average \(loadAverage())")
    print("camd: VideoPicture.fill + H264Encoder.encode (libx264, preset veryfast, tune zerolatency, crf 23, gop 60), RUSAGE_SELF")
    print("ffmpeg: ffmpeg -f rawvideo -pix_fmt yuyv422 -s WxH -r 30 -i RAW -c:v libx264 -preset veryfast -tune zerolatency")
    print("        -crf 23 -g 60 -pix_fmt yuv420p -f mp4 OUT, its CPU from wait4's rusage of the child (all its threads);")
    print("        read+convert = the same without x264: ffmpeg ... -i RAW -pix_fmt yuv420p -f null -")
    print("\(rounds) rounds alternating which goes first; ms/frame = (clip run - first-frame run) / (frames - 1), median over rounds;")
    print("ratio = camd ms / ffmpeg ms per round, median and range; whole runs = the same of the clip runs' CPU, fixed costs in")

    var results: [VideoClipFigures] = []
    let clips: [(String, FrameSize, Double)] = [
        ("pan", FrameSize(width: 1920, height: 1080), 0), ("pan", FrameSize(width: 1280, height: 720), 0),
        ("pan+noise", FrameSize(width: 1920, height: 1080), 2), ("pan+noise", FrameSize(width: 1280, height: 720), 2),
    ]
    for (label, size, noise) in clips {
        let clip = PanningClip(source: sourceFrame, sourceSize: source, size: size, count: count, noise: noise)
        results.append(try measureClip(clip, label: label, rounds: rounds, work: work))
        FileHandle.standardError.write(Data("camd-bench video: \(label) \(size) done\n".utf8))
    }
    printVideoFigures(results)
    print("load average after: \(loadAverage())")
}

/// Runs both encoders over one clip in alternating rounds, then writes the MP4 and the
/// MJPEG file and has ffmpeg compare each with the raw frames.
func measureClip(_ clip: PanningClip, label: String, rounds: Int, work: String) throws -> VideoClipFigures {
    let size = clip.size
    let name = "\(work)/\(label)-\(size)"
    let raw = "\(name).yuv", ffmpegOutput = "\(name)-ffmpeg.mp4", log = "\(name)-ffmpeg.log"
    let rawFile = try createFile(raw)
    for frame in clip.frames { try rawFile.write(contentsOf: frame.bytes) }
    try rawFile.close()
    defer { try? FileManager.default.removeItem(atPath: raw) }

    var figures = VideoClipFigures(label: label, size: size, frames: clip.frames.count)
    let input = ["ffmpeg", "-hide_banner", "-nostdin", "-nostats", "-y",
                 "-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", "\(size)", "-r", "30", "-i", raw]
    let encode = ["-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-crf", "23", "-g", "60",
                  "-pix_fmt", "yuv420p", "-f", "mp4"]
    // ffmpeg's own part without x264: reading the frames and its pixel-format pass.
    let convert = ["-pix_fmt", "yuv420p", "-f", "null", "-"]
    var packets: [VideoPacket] = [], format: VideoStreamFormat?
    for round in 0..<rounds {
        func camd() throws {
            let start = processCPUSeconds()
            (packets, format) = try encodeWithCamd(clip.frames)
            figures.camdClip.append(processCPUSeconds() - start)
            let first = processCPUSeconds()
            _ = try encodeWithCamd(Array(clip.frames.prefix(1)))
            figures.camdFirstFrame.append(processCPUSeconds() - first)
            let picture = try VideoPicture(size: size)
            let fill = processCPUSeconds()
            for frame in clip.frames { try picture.fill(from: frame) }
            figures.camdFill.append((processCPUSeconds() - fill) / Double(clip.frames.count))
        }
        func ffmpeg() throws {
            figures.ffmpegClip.append(try runChild(input + encode + [ffmpegOutput], log: log))
            figures.ffmpegFirstFrame.append(try runChild(input + ["-frames:v", "1"] + encode + ["\(name)-ffmpeg-first.mp4"],
                                                         log: log + ".first"))
            figures.ffmpegConvert.append(try runChild(input + convert, log: log + ".convert"))
            figures.ffmpegConvertFirst.append(try runChild(input + ["-frames:v", "1"] + convert, log: log + ".convert"))
        }
        if round % 2 == 0 { try camd(); try ffmpeg() } else { try ffmpeg(); try camd() }
    }

    // The stream of the last round, as the daemon stores and sends it.
    guard let format else { throw VideoBenchmarkFailure(description: "camd's encoder made no stream") }
    figures.h264PacketBytes = packets.reduce(0) { $0 + $1.data.count }
    figures.camdX264 = X264Settings(in: packets.first?.data ?? [])
    let mp4 = "\(name)-camd.mp4"
    let mp4File = try createFile(mp4)
    let writer = try FragmentedMP4Writer(format: format) { bytes in
        mp4File.write(Data(bytes))
        return 0
    }
    for packet in packets { try writer.write(packet) }
    try writer.finish()
    try mp4File.close()
    figures.mp4Bytes = try fileSize(mp4)
    let ffmpegBytes = [UInt8](FileManager.default.contents(atPath: ffmpegOutput) ?? Data())
    figures.ffmpegMP4Bytes = ffmpegBytes.count
    figures.ffmpegX264 = X264Settings(in: ffmpegBytes)
    let (camdHashes, ffmpegHashes) = (try packetHashes(mp4, log: "\(name)-camd.framemd5"),
                                      try packetHashes(ffmpegOutput, log: "\(name)-ffmpeg.framemd5"))
    figures.identicalPackets = zip(camdHashes, ffmpegHashes).filter { $0 == $1 }.count
    figures.ffmpegPackets = ffmpegHashes.count

    // MJPEG as camd's stream makes it: one JPEG per frame from the same encoder, quality 85.
    let encoder = try FrameEncoder(quality: 85)
    var mjpeg = Data()
    let jpegStart = processCPUSeconds()
    for frame in clip.frames { mjpeg.append(contentsOf: try encoder.encode(frame)) }
    figures.jpegCPU = (processCPUSeconds() - jpegStart) / Double(clip.frames.count)
    figures.jpegBytes = mjpeg.count
    let mjpegPath = "\(name)-camd.mjpeg"
    try mjpeg.write(to: URL(fileURLWithPath: mjpegPath))

    figures.h264Quality = try ssim(["-i", mp4], raw: raw, size: size, name: "\(name)-h264")
    figures.jpegQuality = try ssim(["-f", "mjpeg", "-framerate", "30", "-i", mjpegPath], raw: raw, size: size, name: "\(name)-mjpeg")
    for result in [figures.h264Quality, figures.jpegQuality] where result?.frames != clip.frames.count {
        throw VideoBenchmarkFailure(description: "ssim compared \(result?.frames ?? 0) frames of \(clip.frames.count) for \(name)")
    }
    return figures
}

/// camd's H.264 stage over `frames`, from opening the encoder to its last packet, as the
/// daemon's video stage runs it; the encoder is closed (x264's threads joined) before it returns.
func encodeWithCamd(_ frames: [Frame]) throws -> ([VideoPacket], VideoStreamFormat) {
    let size = frames[0].layout.size
    let encoder = try H264Encoder(settings: VideoEncoderSettings(encoder: .libx264), size: size,
                                  frameRate: PanningClip.frameRate, range: .limited)
    let picture = try VideoPicture(size: size)
    var packets: [VideoPacket] = []
    for frame in frames {
        try picture.fill(from: frame)
        packets += try encoder.encode(picture, monotonicTime: frame.monotonicTime, captureTime: frame.captureTime)
    }
    packets += try encoder.flush()
    return (packets, encoder.format)
}

/// An empty file at `path`, open for writing.
func createFile(_ path: String) throws -> FileHandle {
    guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
        throw VideoBenchmarkFailure(description: "\(path) cannot be written: check the folder's permissions and free space")
    }
    return file
}

/// The MD5 of each packet of an MP4 file's video, in order (ffmpeg's framemd5 muxer).
func packetHashes(_ path: String, log: String) throws -> [String] {
    try runChild(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "framemd5", "-"],
                 log: log)
    return try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        .filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
}

func fileSize(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
}

/// ffmpeg's ssim filter on `input` against the raw frames, both as planar 4:2:2 in limited
/// range (the camera's own format: the H.264 stream's 4:2:0 chroma is scaled up to it, the
/// JPEGs' full range brought down to it).
func ssim(_ input: [String], raw: String, size: FrameSize, name: String) throws -> SSIMResult {
    let stats = "\(name)-ssim.txt", log = "\(name)-ssim.log"
    try runChild(["ffmpeg", "-hide_banner", "-nostdin", "-nostats"] + input
                 + ["-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", "\(size)", "-r", "30", "-i", raw,
                    "-lavfi", "[0:v]format=yuv422p[coded];[1:v]format=yuv422p[raw];[coded][raw]ssim=stats_file=\(stats)",
                    "-f", "null", "-"], log: log)
    // The summary: "SSIM Y:0.987654 (19.08) U:... V:... All:0.983210 (17.74)".
    let summary = (try String(contentsOfFile: log, encoding: .utf8)).split(separator: "\n").last { $0.contains("SSIM Y:") } ?? ""
    func value(_ key: String, in line: Substring) -> Double? {
        guard let range = line.range(of: key) else { return nil }
        return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }
    let lines = (try String(contentsOfFile: stats, encoding: .utf8)).split(separator: "\n")
    guard let all = value("All:", in: summary), let luma = value(" Y:", in: summary) else {
        throw VideoBenchmarkFailure(description: "no SSIM summary in \(log)")
    }
    return SSIMResult(all: all, luma: luma, worstFrame: lines.compactMap { value("All:", in: $0) }.min() ?? 0, frames: lines.count)
}

func printVideoFigures(_ results: [VideoClipFigures]) {
    func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
    func ms(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1000) }
    print("")
    print("1. CPU per frame of the H.264 stage: camd vs the ffmpeg command line on the same raw frames")
    print(pad("clip", 11) + pad("size", 11) + pad("camd ms", 9) + pad("of which fill", 15) + pad("ffmpeg ms", 11)
          + pad("of which read+convert", 23) + pad("ratio", 7) + pad("range", 13) + pad("whole runs", 12)
          + pad("first frame camd/ffmpeg ms", 28) + "camd % of a core at 30 fps")
    for r in results {
        let convert = zip(r.ffmpegConvert, r.ffmpegConvertFirst).map { r.perFrame($0, $1) }
        print(pad(r.label, 11) + pad("\(r.size)", 11) + pad(ms(median(r.camdPerFrame)), 9) + pad(ms(median(r.camdFill)), 15)
              + pad(ms(median(r.ffmpegPerFrame)), 11) + pad(ms(median(convert)), 23)
              + pad(String(format: "%.3f", median(r.ratios)), 7)
              + pad(String(format: "%.3f-%.3f", r.ratios.min()!, r.ratios.max()!), 13)
              + pad(String(format: "%.3f", median(r.wholeRunRatios)), 12)
              + pad(ms(median(r.camdFirstFrame)) + " / " + ms(median(r.ffmpegFirstFrame)), 28)
              + String(format: "%.0f", median(r.camdPerFrame) * PanningClip.frameRate * 100))
    }
    print("")
    print("x264 as each ran it (from the settings x264 writes into the stream):")
    for r in results.prefix(1) {
        let camd = r.camdX264, ffmpeg = r.ffmpegX264
        print("  camd:   \(camd?.version ?? "no x264 SEI found"): " + (camd?.options.filter { $0.contains("threads") }.joined(separator: " ") ?? ""))
        print("  ffmpeg: \(ffmpeg?.version ?? "no x264 SEI found"): " + (ffmpeg?.options.filter { $0.contains("threads") }.joined(separator: " ") ?? ""))
    }
    for r in results {
        let camd = Set(r.camdX264?.options ?? []), ffmpeg = Set(r.ffmpegX264?.options ?? [])
        let same = camd == ffmpeg && !camd.isEmpty
        print("  \(r.label) \(r.size): options " + (same ? "identical (\(camd.count) of them)"
              : "differ: camd \(camd.subtracting(ffmpeg).sorted()), ffmpeg \(ffmpeg.subtracting(camd).sorted())")
              + "; packets byte for byte the same as ffmpeg's: \(r.identicalPackets) of \(r.ffmpegPackets)"
              + " (camd's packets \(r.h264PacketBytes) bytes, ffmpeg's MP4 file \(r.ffmpegMP4Bytes))")
    }
    print("")
    print("2. Bytes per second and quality: camd's H.264 (fragmented MP4) vs camd's MJPEG at quality 85, same frames")
    print("   SSIM against the raw frames (ffmpeg ssim filter, both as yuv422p limited range): mean All (Y), worst frame's All")
    print(pad("clip", 11) + pad("size", 11) + pad("H.264 kB/s", 12) + pad("MJPEG kB/s", 12) + pad("H.264/MJPEG", 17)
          + pad("SSIM H.264", 18) + pad("worst", 8) + pad("SSIM MJPEG", 18) + pad("worst", 8) + "JPEG ms/frame (1 thread)")
    for r in results {
        guard let h264 = r.h264Quality, let jpeg = r.jpegQuality else { continue }
        let h264Rate = Double(r.mp4Bytes) / r.seconds / 1000, jpegRate = Double(r.jpegBytes) / r.seconds / 1000
        print(pad(r.label, 11) + pad("\(r.size)", 11) + pad(String(format: "%.1f", h264Rate), 12)
              + pad(String(format: "%.1f", jpegRate), 12) + pad(String(format: "%.4f (1/%.1f)", h264Rate / jpegRate, jpegRate / h264Rate), 17)
              + pad(String(format: "%.4f (%.4f)", h264.all, h264.luma), 18) + pad(String(format: "%.4f", h264.worstFrame), 8)
              + pad(String(format: "%.4f (%.4f)", jpeg.all, jpeg.luma), 18) + pad(String(format: "%.4f", jpeg.worstFrame), 8)
              + ms(r.jpegCPU))
    }
}
