import Foundation

/// The dedicated threads camd's workers run on (a camera's capture thread, its
/// encoders): named, so `top -H`, `ps -L` and a debugger show which camera each
/// serves, and at the priority their work deserves.
enum WorkerThread {
    /// Starts `body` on a new thread called `name` (the kernel keeps 15 bytes) that runs
    /// `niceness` steps nicer than the rest of camd. A nicer thread is a CPU worker (an
    /// encoder, a strip, a render): it also runs under `SCHED_BATCH` (`ThreadScheduling`).
    static func start(name: String, niceness: Int32 = 0, _ body: @escaping @Sendable () -> Void) {
        Thread {
            nameCurrent(name)
            // On Linux a nice value belongs to a thread: `who` 0 is this thread alone.
            // Lowering one's own priority needs no privilege.
            if niceness != 0 {
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
                _ = ThreadScheduling.batchCurrentThread()
            }
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

/// Linux's `SCHED_BATCH` for the threads whose wake-ups would come in another's way. Such a
/// thread keeps its share of the CPU (its nice value still sets it), but its wake-up does not
/// preempt the thread running on the core it is woken on: it runs at once on an idle core, or
/// when that thread blocks or has had its slice. camd puts under it:
/// - its CPU workers (encoders, strips, renders, H.264), woken by frames;
/// - the listeners' event loop (`HTTPListener`). A poll on the Unix socket from a client on the
///   same machine wakes it twice: when the client connects and when it closes. Woken at once,
///   the loop took the client's core before the client had sent its request, and again before
///   the client's `close` returned; each time a switch between the two and back. Under
///   `SCHED_BATCH` the client sends its request and blocks, and the loop then accepts and reads
///   it in one turn. (docs/performance.md, "The listeners' loop and the encoders under
///   SCHED_BATCH".)
/// The capture thread stays under the default policy: its wake-up is a frame that must be
/// taken before the driver needs the buffer again. The cost: with every core busy, a request
/// waits for the running thread to block or end its slice (milliseconds), not preempting it.
public enum ThreadScheduling {
    /// `SCHED_BATCH` in <sched.h>, which glibc declares only with `_GNU_SOURCE`.
    public static let batchPolicy: Int32 = 3

    /// Puts the calling thread under `SCHED_BATCH`. An unprivileged thread may (sched(7));
    /// camd.service's `SystemCallFilter=` lets `sched_setscheduler` through. Returns 0, or the
    /// errno that refused it.
    public static func batchCurrentThread() -> Int32 {
        var parameters = sched_param(sched_priority: 0)
        // On Linux, pid 0 is the calling thread, not the whole process.
        return sched_setscheduler(0, batchPolicy, &parameters) == 0 ? 0 : errno
    }

    /// The calling thread's scheduling policy (`SCHED_OTHER` 0, `SCHED_BATCH` 3).
    public static func currentPolicy() -> Int32 {
        sched_getscheduler(0)
    }
}
