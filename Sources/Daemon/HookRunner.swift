import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Runs one hook program: posix_spawn, never a shell; its stdout and stderr to the log line by
/// line; stopped with SIGTERM at its timeout and SIGKILL `killGrace` later (its whole process
/// group, so what it started goes too). Blocking: call it on a thread of its own.
enum HookRunner {
    enum Outcome: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)
        /// Still running at its timeout, so it was killed.
        case timedOut
        case spawnFailed(String)
    }

    static let killGrace = 5.0
    private static let spawnLock = NSLock()

    /// - Parameters:
    ///   - name: how the log names it ("on_photo of front").
    ///   - started: called with the child's pid once it runs (tests watch it).
    static func run(_ argv: [String], environment: [String: String], timeout: Double, name: String, logger: Logger,
                    started: (pid_t) -> Void = { _ in }) -> Outcome {
        guard let program = argv.first else { return .spawnFailed("no program") }
        // Glibc's module has no pipe2: pipes are made and marked close-on-exec under one lock
        // with the spawn, so no other hook's child inherits them and holds them open.
        spawnLock.lock()
        var out: [Int32] = [0, 0], err: [Int32] = [0, 0]
        guard pipe(&out) == 0 else {
            spawnLock.unlock()
            return .spawnFailed(String(cString: strerror(errno)))
        }
        guard pipe(&err) == 0 else {
            close(out[0]); close(out[1])
            spawnLock.unlock()
            return .spawnFailed(String(cString: strerror(errno)))
        }
        for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        // Nothing else of camd's: NIO opens its sockets without close-on-exec, and a hook that
        // held a client's connection or a listener kept it open after camd closed it, for as
        // long as the hook ran (a client waiting for the end of its answer, a stopped daemon's
        // socket still accepting).
        _ = spawnClosingFrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, so the timeout kills what it started as well; default signals.
        var defaults = sigset_t()
        sigfillset(&defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArgs { free(pointer) }
            for pointer in cEnv { free(pointer) }
        }
        var pid = pid_t()
        var spawned = posix_spawn(&pid, program, &actions, &attributes, cArgs, cEnv)
        // A script being rewritten, or held open for writing by a child of another program
        // at the moment it forked: wait a little for the writer to let go.
        for _ in 0..<20 where spawned == ETXTBSY {
            usleep(50_000)
            spawned = posix_spawn(&pid, program, &actions, &attributes, cArgs, cEnv)
        }
        close(out[1])
        close(err[1])
        spawnLock.unlock()
        guard spawned == 0 else {
            close(out[0]); close(err[0])
            return .spawnFailed("\(program): \(String(cString: strerror(spawned)))")
        }
        started(pid)
        let timedOut = relay(out: out[0], err: err[0], pid: pid, timeout: timeout, name: name, logger: logger)
        close(out[0])
        close(err[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if timedOut { return .timedOut }
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    /// Logs the child's lines until both pipes close; kills it at its timeout. Returns whether it timed out.
    private static func relay(out: Int32, err: Int32, pid: pid_t, timeout: Double, name: String, logger: Logger) -> Bool {
        let start = monotonic()
        var timedOut = false, killed = false
        var open = [out: true, err: true]
        var partial = [out: [UInt8](), err: [UInt8]()]
        var buffer = [UInt8](repeating: 0, count: 4096)
        while open.values.contains(true) {
            let elapsed = monotonic() - start
            if !timedOut, elapsed >= timeout {
                timedOut = true
                logger.warning("hook \(name) still runs after \(timeout) s (hook_timeout): stopping it (SIGTERM)")
                kill(-pid, SIGTERM)
            }
            if timedOut, !killed, elapsed >= timeout + killGrace {
                killed = true
                logger.warning("hook \(name) did not stop on SIGTERM: killing it (SIGKILL)")
                kill(-pid, SIGKILL)
            }
            // A killed hook whose children still hold its pipes (they left its group) is not waited for.
            if killed, elapsed >= timeout + killGrace + 1 { break }
            let deadline = timedOut ? (killed ? timeout + killGrace + 1 : timeout + killGrace) : timeout
            var fds = [pollfd(fd: open[out]! ? out : -1, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: open[err]! ? err : -1, events: Int16(POLLIN), revents: 0)]
            let wait = Int32(max(1, min(1000, (deadline - elapsed) * 1000)))
            guard poll(&fds, 2, wait) > 0 else { continue }
            for entry in fds where entry.fd >= 0 && entry.revents != 0 {
                let count = read(entry.fd, &buffer, buffer.count)
                if count <= 0 {
                    if count < 0 && errno == EINTR { continue }
                    open[entry.fd] = false
                    if let rest = partial[entry.fd], !rest.isEmpty { log(rest, fd: entry.fd, out: out, name: name, logger: logger) }
                    continue
                }
                partial[entry.fd]!.append(contentsOf: buffer[0..<count])
                while let newline = partial[entry.fd]!.firstIndex(of: 10) {
                    log(Array(partial[entry.fd]![..<newline]), fd: entry.fd, out: out, name: name, logger: logger)
                    partial[entry.fd]!.removeSubrange(...newline)
                }
            }
        }
        return timedOut
    }

    private static func log(_ line: [UInt8], fd: Int32, out: Int32, name: String, logger: Logger) {
        let text = String(decoding: line, as: UTF8.self)
        if fd == out {
            logger.info("hook \(name): \(text)")
        } else {
            logger.warning("hook \(name) (stderr): \(text)")
        }
    }

    private static func monotonic() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34; Debian 12 has 2.36): every
/// descriptor from the second argument on is closed in the child. `spawn.h` declares it only
/// under `_GNU_SOURCE`, which Swift's Glibc module is not built with, hence its name bound here.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func spawnClosingFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
