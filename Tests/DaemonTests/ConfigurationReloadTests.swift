import CaptureSession
@testable import Daemon
import Foundation
import Testing
import VideoCore

/// SIGHUP's reload of camd.toml, on cameras that use the synthetic test source.
@Suite struct ConfigurationReloadTests {
    static func file(quality: Int, size: String = "640x480", extra: String = "") -> String {
        """
        [daemon]
        shutdown_timeout = 5

        [[camera]]
        id = "bench"
        device = "testsrc"
        size = "\(size)"
        quality = \(quality)
        autostart = false
        \(extra)
        """
    }

    /// A scratch camd.toml and the cameras it describes.
    struct Setup {
        let path: String
        let cameras: Cameras
        let reload: ConfigurationReload
        let events = EventLog()

        init(_ text: String) throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camd-reload-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            path = folder.appendingPathComponent("camd.toml").path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let configuration = try DaemonConfiguration.load(path: path)
            cameras = Cameras(configuration.cameras.map { CaptureSession(settings: $0) })
            reload = ConfigurationReload(path: path, defaultsIfMissing: false, running: configuration, cameras: cameras,
                                         camerasFromCommandLine: false, events: events)
        }

        func write(_ text: String) throws { try text.write(toFile: path, atomically: true, encoding: .utf8) }
    }

    @Test func changedCameraSettingsApply() async throws {
        let setup = try Setup(Self.file(quality: 80))
        try setup.write(Self.file(quality: 60, size: "1280x720"))
        let report = try await setup.reload.reload()
        #expect(report.reconfigured == ["bench"])
        #expect(report.needsRestart.isEmpty)
        let settings = await setup.cameras["bench"]!.settings
        #expect(settings.quality == 60)
        #expect(settings.size == FrameSize(width: 1280, height: 720))
    }

    @Test func aFileWithAMistakeChangesNothing() async throws {
        let setup = try Setup(Self.file(quality: 80))
        try setup.write(Self.file(quality: 60).replacingOccurrences(of: "quality = 60", with: "qualty = 60"))
        await #expect(throws: ConfigurationError.self) { try await setup.reload.reload() }
        #expect(await setup.cameras["bench"]!.settings.quality == 80)
        // The next good file is compared with what runs, not with the bad one.
        try setup.write(Self.file(quality: 70))
        #expect(try await setup.reload.reload().reconfigured == ["bench"])
        #expect(await setup.cameras["bench"]!.settings.quality == 70)
    }

    /// Scripts on /v1/events learn of each reload that took, with what it did; a file
    /// with a mistake changed nothing and says so in the journal and to systemctl, not here.
    @Test func eachReloadThatTookIsAnEvent() async throws {
        let setup = try Setup(Self.file(quality: 80))
        try setup.write(Self.file(quality: 60).replacingOccurrences(of: "quality = 60", with: "qualty = 60"))
        await #expect(throws: ConfigurationError.self) { try await setup.reload.reload() }
        #expect(setup.events.lastID == 0)
        try setup.write(Self.file(quality: 60).replacingOccurrences(of: "shutdown_timeout = 5", with: "shutdown_timeout = 7"))
        _ = try await setup.reload.reload()
        let subscription = setup.events.subscribe(after: 0)
        defer { subscription.cancel() }
        guard case .event(let event) = await subscription.next(), case .configReloaded(let reloaded) = event.payload else {
            Issue.record("the first event is not config_reloaded")
            return
        }
        #expect(event.id == 1 && event.camera == nil)
        #expect(reloaded.changed == ["bench"])
        #expect(reloaded.refused.isEmpty)
        #expect(reloaded.needsRestart.contains { $0.contains("shutdown_timeout") })
    }

    @Test func anUnchangedFileReconfiguresNothing() async throws {
        let setup = try Setup(Self.file(quality: 80))
        #expect(try await setup.reload.reload() == ReloadReport())
    }

    @Test func whatOnlyARestartAppliesIsReported() async throws {
        let setup = try Setup(Self.file(quality: 80))
        let added = "[[camera]]\nid = \"door\"\ndevice = \"testsrc\"\n"
        try setup.write(Self.file(quality: 80).replacingOccurrences(of: "shutdown_timeout = 5", with: "shutdown_timeout = 9")
                        + "\n" + added)
        let report = try await setup.reload.reload()
        #expect(report.reconfigured.isEmpty)
        #expect(report.needsRestart.contains("daemon.shutdown_timeout changed"))
        #expect(report.needsRestart.contains("camera door added"))
        #expect(setup.cameras.ids == ["bench"])
    }

    @Test func camerasFromTheCommandLineAreLeftAlone() async throws {
        let setup = try Setup(Self.file(quality: 80))
        let reload = ConfigurationReload(path: setup.path, defaultsIfMissing: false,
                                         running: try DaemonConfiguration.load(path: setup.path),
                                         cameras: setup.cameras, camerasFromCommandLine: true)
        try setup.write(Self.file(quality: 50))
        #expect(try await reload.reload().reconfigured.isEmpty)
        #expect(await setup.cameras["bench"]!.settings.quality == 80)
    }
}
