import CMalloc
#if canImport(Glibc)
import Glibc
#endif

/// How camd asks glibc's allocator to treat its large buffers, set once at start.
///
/// camd allocates frame-sized buffers at the frame rate (a 1280x720 YUYV frame is
/// 1.8 MB; JPEGs and scratch planes follow) on its capture, encoder and render threads.
/// glibc starts by serving blocks of 128 KiB and more with mmap, so they go back to the
/// kernel when freed, but the first time such a block is freed it raises that threshold
/// to the block's size (and the trim threshold to twice that): from then on every frame
/// comes from the allocating thread's arena, and each arena keeps its freed frames
/// instead of returning them. Every camera restart starts new capture and encoder
/// threads, which bring frames into more arenas (up to 8 per core), so a long-running
/// daemon's resident memory climbed by tens of MiB (the 30-minute soak: +18.7 MiB,
/// glibc's own figures: 35 MB held for 6.7 MB in use). Pinning the threshold turns the
/// dynamic adjustment off: large buffers are mapped and unmapped, arenas keep only small
/// blocks, and memory stays flat (docs/performance.md, "Memory over a long run").
public enum MemoryPolicy {
    /// Blocks from this size up are mapped on their own and returned to the kernel when
    /// freed. Above a small frame or JPEG's size, so small allocations stay in the arenas.
    public static let mmapThreshold: Int32 = 256 * 1024

    /// Applies the policy, unless the user tuned glibc by its own environment variable
    /// (`MALLOC_MMAP_THRESHOLD_`), which then wins. Returns whether it was applied.
    /// Transparent huge pages are turned off either way (`disableHugePages`).
    @discardableResult
    public static func apply() -> Bool {
        disableHugePages()
        guard getenv("MALLOC_MMAP_THRESHOLD_") == nil else { return false }
        return mallopt(M_MMAP_THRESHOLD, mmapThreshold) == 1
    }

    /// Turns transparent huge pages off for camd (`prctl(PR_SET_THP_DISABLE)`), so its
    /// memory is in 4 KiB pages from the next page fault on: camd's `main` calls this
    /// before any thread but the main one has touched its stack. Debian's kernel backs anonymous memory with 2 MiB pages
    /// wherever an aligned 2 MiB fits (`always`): a thread whose 8 MiB stack holds such a
    /// range had the whole 2 MiB resident for the few KiB it uses. In the vivid VM one or two
    /// of camd's nine threads did, 2-4 MiB of its 8-10 MiB of anonymous memory. camd gains
    /// nothing from huge pages: its largest buffers are a few frames, copied once each.
    @discardableResult
    public static func disableHugePages() -> Bool {
        CMalloc_setTransparentHugePagesDisabled(1) == 0
    }
}
