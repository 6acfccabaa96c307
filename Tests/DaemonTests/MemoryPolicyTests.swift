@testable import Daemon
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The allocator policy camd applies at start (`MemoryPolicy`): frame-sized buffers
/// stay mapped on their own, and so go back to the kernel, even after a larger block
/// was freed, which is what made glibc move them into its arenas for good.
@Suite struct MemoryPolicyTests {
    /// glibc's chunk header: the size word before the pointer, whose bit 1 is IS_MMAPPED.
    static func isMapped(_ pointer: UnsafeMutableRawPointer) -> Bool {
        UnsafeRawPointer(pointer).load(fromByteOffset: -MemoryLayout<Int>.size, as: UInt.self) & 0x2 != 0
    }

    @Test func frameSizedBuffersStayMappedAfterALargerBlockIsFreed() throws {
        // The environment variable is glibc's own override, which camd leaves alone.
        try #require(getenv("MALLOC_MMAP_THRESHOLD_") == nil)
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
}
