@testable import Daemon
import CMalloc
import CamdTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The allocator policy camd applies at start (`MemoryPolicy`): frame-sized buffers
/// stay mapped on their own, and so go back to the kernel, even after a larger block
/// was freed, which is what made glibc move them into its arenas for good.
///
/// The probe needs a process whose heap is as camd's is at start: in the test run's
/// shared process, earlier tests leave large free chunks in glibc's bins, and malloc
/// serves from those before it ever maps. So `policyKeepsFramesMapped` runs the probe
/// alone in a new process of this same test bundle.
@Suite struct MemoryPolicyTests {
    static let probeVariable = "CAMD_MEMORY_POLICY_PROBE"

    @Test func policyKeepsFramesMapped() async throws {
        // Waited for on a thread of its own: a test bundle's run of seconds would hold one of
        // the two threads of Swift's tasks that every test beside it needs.
        let (status, text) = try await onOwnThread(Self.runProbe)
        #expect(status == 0, "the probe failed:\n\(text.suffix(2000))")
        #expect(text.contains("frameSizedBuffersStayMappedAfterALargerBlockIsFreed") && text.contains("passed"),
                "the probe did not run:\n\(text.suffix(2000))")
    }

    /// Runs the probe in a new process of this test bundle: its exit status and output.
    private static func runProbe() throws -> (Int32, String) {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        child.arguments = ["--testing-library", "swift-testing", "--filter", "MemoryPolicyProbe"]
        var environment = ProcessInfo.processInfo.environment
        environment[probeVariable] = "1"
        environment["MALLOC_MMAP_THRESHOLD_"] = nil
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = output
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readAll(), as: UTF8.self)
        child.waitUntilExit()
        return (child.terminationStatus, text)
    }
}

extension MemoryPolicyTests {
    /// The real camd runs with transparent huge pages off: its `main` applies the policy.
    @Test func theDaemonRunsWithoutTransparentHugePages() async throws {
        let daemon = try RunningDaemon(tcp: false)
        defer { daemon.cleanUp() }
        try await daemon.waitUntilServing()
        let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("THP_enabled:") }
        try #require(line != nil, "this kernel's /proc/PID/status has no THP_enabled line")
        #expect(line?.split(separator: "\t").last == "0", "\(line ?? "")")
    }
}

/// Runs only in the child process `MemoryPolicyTests` starts.
/// Serialized: both tests apply the policy, and the huge-page switch is the whole process's.
@Suite(.serialized, .enabled(if: getenv(MemoryPolicyTests.probeVariable) != nil, "runs in a process of its own, started by MemoryPolicyTests"))
struct MemoryPolicyProbe {
    /// glibc's chunk header: the size word before the pointer, whose bit 1 is IS_MMAPPED.
    static func isMapped(_ pointer: UnsafeMutableRawPointer) -> Bool {
        UnsafeRawPointer(pointer).load(fromByteOffset: -MemoryLayout<Int>.size, as: UInt.self) & 0x2 != 0
    }

    @Test func frameSizedBuffersStayMappedAfterALargerBlockIsFreed() throws {
        #expect(MemoryPolicy.apply())
        // Freeing a mapped 4 MiB block is what raises glibc's dynamic threshold to 4 MiB.
        let large = try #require(malloc(4 << 20))
        #expect(Self.isMapped(large))
        free(large)
        // A 1280x720 YUYV frame.
        let frame = try #require(malloc(1280 * 720 * 2))
        defer { free(frame) }
        #expect(Self.isMapped(frame), "a frame-sized buffer came from an arena: the threshold moved")
        // Small blocks still come from the arenas.
        let small = try #require(malloc(64 * 1024))
        defer { free(small) }
        #expect(!Self.isMapped(small))
    }

    /// camd's memory is in 4 KiB pages: a thread stack never holds a 2 MiB page for a few KiB.
    @Test func transparentHugePagesAreOff() {
        // As a process starts where nothing turned them off before it (the flag is inherited).
        #expect(CMalloc_setTransparentHugePagesDisabled(0) == 0)
        #expect(CMalloc_transparentHugePagesDisabled() == 0)
        MemoryPolicy.apply()
        #expect(CMalloc_transparentHugePagesDisabled() == 1)
    }
}
