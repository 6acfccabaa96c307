@testable import CaptureSession
@testable import Daemon
import Foundation
import Logging
import Synchronization
import Testing
import VideoCore
import CamdTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Hooks: programs run on a camera's events without a shell, with the event in their
/// environment, stopped at their timeout, never in capture's way.
@Suite struct HookTests {
    /// A folder with an executable script `name` holding `body`.
    static func withScript(_ name: String, _ body: String, _ test: (String, String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camd-hooks-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let script = folder + "/" + name
        try write("#!/bin/sh\n" + body + "\n", to: script, mode: 0o755)
        try await test(script, folder)
    }

    /// Written close-on-exec: a child another test spawns meanwhile must not inherit the
    /// descriptor, or running the script fails with ETXTBSY while that child lives.
    static func write(_ text: String, to path: String, mode: mode_t) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    static func photoEvent(camera: String = "front", name: String = "front-1.jpg") -> DaemonEvent {
        DaemonEvent(id: 42, time: 1_700_000_000, payload: .photoSaved(.init(camera: camera, name: name, bytes: 1234, width: 640, height: 480)))
    }

    @Test func aHookRunsWithTheEventInItsEnvironmentAndWithoutAShell() async throws {
        try await Self.withScript("env.sh", #"env > "$1"; echo "args:$#:$2""#) { script, folder in
            var settings = CameraSettings(id: "front", device: FrameSources.syntheticName)
            // "a;b" would be two commands to a shell; here it is one argument.
            settings.hooks.onPhoto = "\(script) \(folder)/env.txt a;b"
            let job = try #require(HookJob.job(for: Self.photoEvent(), settings: settings, photoRoot: "/srv/photos"))
            let outcome = try await onOwnThread {
                HookRunner.run(job.argv, environment: job.environment, timeout: 10, name: job.name, logger: Logger(label: "test"))
            }
            #expect(outcome == .exited(0))
            let env = try String(contentsOfFile: folder + "/env.txt", encoding: .utf8).split(separator: "\n").map(String.init)
            for line in ["CAMD_EVENT=photo_saved", "CAMD_EVENT_ID=42", "CAMD_CAMERA=front", "CAMD_PHOTO_NAME=front-1.jpg",
                         "CAMD_PHOTO_PATH=/srv/photos/front/front-1.jpg", "CAMD_PHOTO_BYTES=1234", "CAMD_PHOTO_WIDTH=640", "CAMD_PHOTO_HEIGHT=480"] {
                #expect(env.contains(line), "\(line) missing from the hook's environment")
            }
        }
    }

    /// A hook holds none of camd's descriptors: NIO opens its sockets without close-on-exec, and
    /// one a hook inherited stayed open after camd closed it, while the hook ran.
    @Test func aHookInheritsNoneOfCamdsDescriptors() async throws {
        try await Self.withScript("fds.sh", #"readlink "/proc/$$/fd/$2" > "$1" || echo closed > "$1""#) { script, folder in
            let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)  // as NIO opens one: not close-on-exec
            try #require(socket >= 0 && fcntl(socket, F_GETFD) & FD_CLOEXEC == 0)
            defer { close(socket) }
            let outcome = try await onOwnThread {
                HookRunner.run([script, folder + "/fd.txt", String(socket)], environment: [:], timeout: 10, name: "on_photo of test",
                               logger: Logger(label: "test"))
            }
            #expect(outcome == .exited(0))
            let seen = try String(contentsOfFile: folder + "/fd.txt", encoding: .utf8)
            #expect(!seen.hasPrefix("socket:"), "the hook holds camd's socket (fd \(socket)): \(seen)")
        }
    }

    @Test func aHangingHookIsKilledAtItsTimeout() async throws {
        // It ignores SIGTERM, so SIGKILL must follow.
        try await Self.withScript("hang.sh", "trap '' TERM\nwhile :; do sleep 1; done") { script, _ in
            let pid = Mutex<pid_t>(0)
            let outcome = try await onOwnThread {
                HookRunner.run([script], environment: [:], timeout: 1, name: "on_photo of test", logger: Logger(label: "test")) { child in
                    pid.withLock { $0 = child }
                }
            }
            #expect(outcome == .timedOut)
            let child = pid.withLock { $0 }
            #expect(child > 0)
            #expect(kill(child, 0) == -1 && errno == ESRCH, "the hook's process is gone")
        }
    }

    @Test func whileHooksHangTheCameraKeepsCapturing() async throws {
        // The hooks end at their timeout, after the test. The timeout is long enough for a loaded
        // machine's capture to show its frames while they hang: at 5 s, a CI replica's host once
        // reached it first, and the hooks had ended by the check.
        try await Self.withScript("hang.sh", "exec sleep 30") { script, _ in
            let log = EventLog()
            var settings = CameraSettings(id: "front", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240), fps: 30)
            settings.hooks.onPhoto = script
            settings.hooks.timeoutSeconds = 20
            let session = CaptureSession(settings: settings, events: log)
            let hooks = HookService(events: log, cameras: Cameras([session]), photoRoot: "/tmp", logger: Logger(label: "test"),
                                    concurrency: 2, queueCapacity: 2)
            let service = Task { try await hooks.run() }
            await session.start()
            // Six photos: two hooks run (and hang), two wait, two are dropped.
            for n in 1...6 { log.publish(Self.photoEvent(name: "front-\(n).jpg").payload) }
            // Waits for the service to have taken them all (a loaded machine may start the
            // hooks' processes late), for at most the hooks' timeout.
            try await waitUntil(limit: .seconds(settings.hooks.timeoutSeconds), every: .milliseconds(10)) {
                hooks.counts.dropped >= 2 && hooks.counts.running >= 2
            }
            #expect(hooks.counts.dropped == 2 && hooks.counts.running == 2 && hooks.counts.waiting == 2)
            // Capture goes on: the counters move while the hooks hang.
            let before = await session.status().framesCaptured
            var after = before
            try await waitUntil(every: .milliseconds(20)) {
                after = await session.status().framesCaptured
                return after >= before + 10
            }
            #expect(after >= before + 10, "capture stopped while the hooks hang: \(after - before) frames in 30 s")
            #expect(hooks.counts.running == 2, "the hooks still hang")
            await session.stop()
            service.cancel()
        }
    }

    @Test func aMissingOrNotExecutableProgramIsRefusedWithItsLine() throws {
        let text = """
            [[camera]]
            id = "front"
            device = "testsrc"
            on_photo = "/nonexistent/upload --fast"
            """
        #expect {
            _ = try DaemonConfiguration.parse(text, source: "camd.toml")
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.line == 4 && error.description.hasPrefix("camd.toml:4:") && error.description.contains("on_photo")
                && error.description.contains("/nonexistent/upload")
        }
        let notExecutable = FileManager.default.temporaryDirectory.appendingPathComponent("camd-hook-\(UUID().uuidString.prefix(8)).txt").path
        try Self.write("not a program\n", to: notExecutable, mode: 0o644)
        defer { unlink(notExecutable) }
        #expect(throws: ConfigurationError.self) {
            _ = try DaemonConfiguration.parse("[[camera]]\nid = \"front\"\non_camera_lost = \"\(notExecutable)\"\n", source: "camd.toml")
        }
        #expect(throws: ConfigurationError.self) {
            _ = try DaemonConfiguration.parse("[[camera]]\nid = \"front\"\non_recording = \"rclone copy\"\n", source: "camd.toml")
        }
        let fine = try DaemonConfiguration.parse("[[camera]]\nid = \"front\"\non_photo = \"/bin/true x\"\nhook_timeout = \"5s\"\n", source: "camd.toml")
        #expect(fine.cameras.first?.hooks.onPhoto == "/bin/true x")
        #expect(fine.cameras.first?.hooks.timeoutSeconds == 5)
    }

    @Test func lostAndBackRunTheirHooks() throws {
        var settings = CameraSettings(id: "front", device: FrameSources.syntheticName)
        settings.hooks.onCameraLost = "/bin/true lost"
        settings.hooks.onCameraBack = "/bin/true back"
        func job(_ state: SessionState, from previous: SessionState) -> HookJob? {
            HookJob.job(for: DaemonEvent(id: 1, time: 0, payload: .cameraState(.init(camera: "front", state: state, previous: previous, reason: "gone"))),
                        settings: settings, photoRoot: "/p")
        }
        #expect(job(.waitingForDevice, from: .running)?.argv == ["/bin/true", "lost"])
        #expect(job(.waitingForDevice, from: .running)?.environment["CAMD_REASON"] == "gone")
        #expect(job(.running, from: .waitingForDevice)?.argv == ["/bin/true", "back"])
        #expect(job(.running, from: .starting) == nil)
        #expect(job(.failed, from: .waitingForDevice) == nil, "lost once, not again")
    }
}
