import CaptureSession
import Foundation
import JPEG
import VideoCore

/// strips: how long a snapshot's encode takes from a YUYV frame, encoded whole on the
/// calling thread as before, and in strips at once on a `StripPool` of 2, 3, 4 threads
/// (as an encoder thread does); wall time per JPEG and the process's CPU time per JPEG
/// (what the strips cost beyond the whole encode: the hand-off and the joining copy).
/// Whole and strips alternate in rounds, so both see the same machine.
func stripBenchmark(folder: String, quality: Int, budget: Double) throws {
    let sizes = [FrameSize(width: 640, height: 480), FrameSize(width: 1280, height: 720), FrameSize(width: 1920, height: 1080)]
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let pools = (2...4).filter { $0 <= max(cores, 2) }.map { StripPool(threads: $0) }
    print("camd-bench strips: quality \(quality), a YUYV photograph (scripts/bench-frames.py), \(cores) cpus; load average \(loadAverage())")
    print("whole = FrameEncoder without a pool; N threads = a StripPool of N; medians of rounds of 0.2 s, \(budget) s per row")
    func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
    print(pad("size", 11) + pad("threads", 9) + pad("strips", 8) + pad("wall ms/JPEG", 14) + pad("wall ratio", 12)
          + pad("CPU ms/JPEG", 13) + pad("CPU ratio", 11) + "JPEG bytes")
    for size in sizes {
        let frame = try photograph(folder, size)
        let layout = FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited)
        let whole = try FrameEncoder(quality: quality)
        for pool in pools {
            let striped = try FrameEncoder(quality: quality, stripRunner: pool)
            var bytes = 0, wholeBytes = 0
            /// Wall and CPU seconds per JPEG over one round.
            func round(_ encoder: FrameEncoder) throws -> (wall: Double, cpu: Double) {
                let isWhole = encoder === whole
                let clock = ContinuousClock(), start = clock.now, cpu = processCPUSeconds()
                var count = 0
                repeat {
                    let length = try frame.withUnsafeBytes { try encoder.encode($0, layout: layout) }.count
                    if isWhole { wholeBytes = length } else { bytes = length }
                    count += 1
                } while clock.now - start < .milliseconds(200)
                return ((clock.now - start).inSeconds / Double(count), (processCPUSeconds() - cpu) / Double(count))
            }
            for _ in 0..<3 { _ = try round(whole); _ = try round(striped) }
            var (a, b): ([(wall: Double, cpu: Double)], [(wall: Double, cpu: Double)]) = ([], [])
            let clock = ContinuousClock(), started = clock.now
            while a.count < 5 || clock.now - started < .milliseconds(Int64(budget * 1000)) {
                a.append(try round(whole))
                b.append(try round(striped))
            }
            let strips = JPEGStrips.rows(for: size, subsampling: .s422, threads: pool.threads).count
            let wholeWall = median(a.map(\.wall)), wholeCPU = median(a.map(\.cpu))
            let stripWall = median(b.map(\.wall)), stripCPU = median(b.map(\.cpu))
            if pool === pools.first {
                print(pad("\(size)", 11) + pad("1", 9) + pad("1", 8) + pad(String(format: "%.2f", wholeWall * 1000), 14) + pad("1.00", 12)
                      + pad(String(format: "%.2f", wholeCPU * 1000), 13) + pad("1.00", 11) + "\(wholeBytes)")
            }
            print(pad("\(size)", 11) + pad("\(pool.threads)", 9) + pad("\(strips)", 8)
                  + pad(String(format: "%.2f", stripWall * 1000), 14) + pad(String(format: "%.2f", stripWall / wholeWall), 12)
                  + pad(String(format: "%.2f", stripCPU * 1000), 13) + pad(String(format: "%.2f", stripCPU / wholeCPU), 11) + "\(bytes)")
        }
    }
}

/// The first three fields of /proc/loadavg.
func loadAverage() -> String {
    ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
}
