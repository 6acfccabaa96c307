import Foundation

/// The dedicated threads camd's workers run on (a camera's capture thread, its
/// encoders): named, so `top -H`, `ps -L` and a debugger show which camera each
/// serves, and at the priority their work deserves.
enum WorkerThread {
    /// Starts `body` on a new thread called `name` (the kernel keeps 15 bytes) that runs
    /// `niceness` steps nicer than the rest of camd.
    static func start(name: String, niceness: Int32 = 0, _ body: @escaping @Sendable () -> Void) {
        Thread {
            nameCurrent(name)
            // On Linux a nice value belongs to a thread: `who` 0 is this thread alone.
            // Lowering one's own priority needs no privilege.
            if niceness != 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
            body()
        }.start()
    }

    /// Foundation's `Thread.name` does not reach the kernel on Linux, and Swift cannot
    /// call `pthread_setname_np`; writing the thread's own `comm` file does the same.
    private static func nameCurrent(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
