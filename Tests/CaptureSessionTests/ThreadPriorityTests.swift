@testable import CaptureSession
import Foundation
import Testing
import VideoCore

/// Encoder threads yield to the capture thread and the control API when the CPU is
/// saturated: they run at a higher nice value than the rest of camd.
@Suite struct ThreadPriorityTests {
    /// Nice values of this process's threads whose name starts with `prefix`
    /// (field 19 of /proc/self/task/TID/stat; the name is truncated to 15 bytes).
    static func niceValues(prefix: String) -> [Int] {
        statFields(prefix: prefix, field: 19)
    }

    /// Scheduling policies of those threads (field 41: `SCHED_OTHER` 0, `SCHED_BATCH` 3).
    static func policies(prefix: String) -> [Int] {
        statFields(prefix: prefix, field: 41)
    }

    private static func statFields(prefix: String, field: Int) -> [Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { tid in
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
                  stat[stat.index(after: open)..<close].hasPrefix(prefix) else { return nil }
            // After the name: state is field 3, so field 19 is the 17th word.
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            return fields.count > field - 3 ? Int(fields[field - 3]) : nil
        }
    }

    /// Runs `body` while a synthetic camera with two encoder threads runs, after its first
    /// snapshot (so both encoders have started).
    private func whileEncoding(id: String, _ body: () -> Void) async throws {
        let session = CaptureSession(settings: CameraSettings(id: id, device: FrameSources.syntheticName,
                                                              size: FrameSize(width: 320, height: 240), fps: 30,
                                                              encoderThreads: 2))
        await session.start()
        _ = try await session.snapshot(maxAge: 1)
        body()
        await session.stop()
    }

    @Test func encoderThreadsRunNicerThanTheCaptureThread() async throws {
        try await whileEncoding(id: "nice") {
            let encoders = Self.niceValues(prefix: "camd-enc")
            let capture = Self.niceValues(prefix: "camd-cap-")
            // Other tests' sessions may run beside this one: their threads obey the same rule.
            #expect(encoders.count >= 2, "expected this camera's two encoder threads, found \(encoders.count)")
            #expect(capture.count >= 1, "expected this camera's capture thread, found none")
            let base = Int(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
            #expect(encoders.allSatisfy { $0 == min(19, base + Int(EncoderWorker.niceness)) }, "encoder nice values \(encoders)")
            #expect(capture.allSatisfy { $0 == base }, "capture nice values \(capture)")
        }
    }

    /// Encoder threads run under SCHED_BATCH: woken by a frame, they do not preempt the thread
    /// running (the capture thread, the event loop, a client); the capture thread is woken by
    /// frames the driver needs back, and keeps the default policy.
    @Test func encoderThreadsRunUnderBatchSchedulingAndTheCaptureThreadDoesNot() async throws {
        try await whileEncoding(id: "batch") {
            let encoders = Self.policies(prefix: "camd-enc")
            let capture = Self.policies(prefix: "camd-cap-")
            #expect(encoders.count >= 2, "expected this camera's two encoder threads, found \(encoders.count)")
            #expect(capture.count >= 1, "expected this camera's capture thread, found none")
            #expect(encoders.allSatisfy { $0 == Int(ThreadScheduling.batchPolicy) }, "encoder policies \(encoders)")
            #expect(capture.allSatisfy { $0 == 0 }, "capture policies \(capture)")
        }
    }
}
