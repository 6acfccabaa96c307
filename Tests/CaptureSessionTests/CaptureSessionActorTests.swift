@testable import CaptureSession
import Foundation
import JPEG
import Testing
import V4L2
import VideoCore

/// The session's state machine and frame hand-off, on the synthetic source
/// (the vivid suite runs the same paths against a real driver).
@Suite struct CaptureSessionActorTests {
    func synthetic(_ id: String = "test", size: FrameSize = FrameSize(width: 320, height: 240), fps: Double = 30) -> CameraSettings {
        CameraSettings(id: id, device: FrameSources.syntheticName, size: size, fps: fps, idleStopSeconds: 1)
    }

    @Test func startRunsAndStopReleases() async throws {
        let session = CaptureSession(settings: synthetic())
        #expect(await session.state == .idle)
        let started = await session.start()
        #expect(started.state == .running)
        #expect(started.source?.contains("synthetic") == true)
        #expect(started.size == "320x240")
        let stopped = await session.stop()
        #expect(stopped.state == .idle)
        #expect(stopped.source == nil)
    }

    @Test func snapshotsAreFreshAndDecode() async throws {
        let session = CaptureSession(settings: synthetic())
        await session.start()
        defer { Task { await session.stop() } }
        let requested = CaptureSession.monotonicNow()
        let frame = try await session.snapshot(maxAge: 0)
        #expect(frame.monotonicTime >= requested, "max_age=0 means captured after the request")
        #expect(try JPEGDecoder().header(frame.jpeg).size == FrameSize(width: 320, height: 240))
        let next = try await session.snapshot(maxAge: 0)
        #expect(next.sequence > frame.sequence)
        await session.stop()
    }

    @Test func aSnapshotStartsAnIdleCameraAndItStopsAgain() async throws {
        let session = CaptureSession(settings: synthetic())
        let frame = try await session.snapshot()
        #expect(frame.sequence > UInt32(CaptureSession.warmUpFrames), "warm-up frames are skipped")
        #expect(await session.status().startedOnDemand)
        // idleStopSeconds is 1: the idle watch stops it within a few seconds.
        var state = await session.state
        for _ in 0..<60 where state != .idle {
            try await Task.sleep(for: .milliseconds(100))
            state = await session.state
        }
        #expect(state == .idle)
    }

    @Test func streamClientsGetFramesAndSlowOnesDoNotStallOthers() async throws {
        let session = CaptureSession(settings: synthetic(fps: 60))
        await session.start()
        let fast = try await session.subscribe()
        let slow = try await session.subscribe()  // never read until the end
        var sequences: [UInt32] = []
        for await frame in fast {
            sequences.append(frame.sequence)
            if sequences.count == 20 { break }
        }
        #expect(sequences == sequences.sorted())
        #expect(Set(sequences).count == 20)
        // The slow client kept only the newest frames, not all of them.
        var buffered = 0
        var newest: UInt32 = 0
        for await frame in slow {
            buffered += 1
            newest = frame.sequence
            if buffered == FrameHub.subscriberBuffer { break }
        }
        #expect(newest >= sequences.last! - 2)
        await session.stop()
    }

    @Test func reconfiguringWhileRunningKeepsStreams() async throws {
        let session = CaptureSession(settings: synthetic())
        await session.start()
        let stream = try await session.subscribe()
        var settings = synthetic()
        settings.size = FrameSize(width: 640, height: 480)
        let status = try await session.configure(settings)
        #expect(status.state == .running)
        #expect(status.size == "640x480")
        var sawNewSize = false
        for await frame in stream where frame.size == FrameSize(width: 640, height: 480) {
            sawNewSize = true
            break
        }
        #expect(sawNewSize)
        await session.stop()
    }

    @Test func badSettingsAreRefusedAndKeepTheOldOnes() async throws {
        let session = CaptureSession(settings: synthetic())
        // Values are checked by the settings' declarations, inside the configure's turn.
        await #expect(throws: SettingError.self) {
            try await session.configure { current in
                var next = current
                try next.apply([("quality", .integer(0))])
                return next
            }
        }
        #expect(await session.settings.quality == 85)
        var renamed = synthetic()
        renamed.id = "other"
        await #expect(throws: SessionError.self) { try await session.configure(renamed) }
    }

    @Test func aFormatTheSourceCannotGiveFails() async throws {
        var settings = synthetic()
        settings.format = .nv12
        let session = CaptureSession(settings: settings)
        let status = await session.start()
        #expect(status.state == .failed)
        #expect(status.reason?.contains("only YUYV") == true)
        await #expect(throws: SessionError.self) { try await session.snapshot() }
    }

    @Test func aFormatTheSourceDoesNotOfferIsRefusedAndTheCameraKeepsRunning() async throws {
        let session = CaptureSession(settings: synthetic())
        await session.start()
        var bad = synthetic()
        bad.format = .mjpeg
        do {
            _ = try await session.configure(bad)
            Issue.record("a format the synthetic source does not offer was accepted")
        } catch {
            guard case .invalidSettings(let message) = error else { Issue.record("wrong error \(error)"); return }
            #expect(message.contains("format MJPG"), "\(message)")
            #expect(message.contains("it offers YUYV"), "the message lists what the source offers: \(message)")
        }
        #expect(await session.settings.format == nil)
        let status = await session.status()
        #expect(status.state == .running)
        #expect(status.errors == 0, "the camera was never restarted with the bad format")
        await session.stop()
    }

    /// A regular file, a symbolic link to one and character devices that are not V4L2 (major 1)
    /// are no camera; a device that is not there is far likelier a typo than a camera about to
    /// be plugged in (camd.toml is where a camera waits for its device). Each is refused with
    /// a message that names it and says what to do, and nothing changes.
    @Test func aDeviceThatIsNoCameraOrNotThereIsRefusedAndTheCameraKeepsRunning() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camd-devices-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/video0", link = folder + "/link-to-file"
        try Data("not a camera".utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
        let notACamera = ["not a character device", "not a video device"]
        let notThere = ["is not there", "camctl devices", "camd.toml"]

        let session = CaptureSession(settings: synthetic())
        await session.start()
        for (device, says) in [(file, notACamera), (link, notACamera), ("/dev/null", notACamera), ("/dev/zero", notACamera),
                               (folder + "/video9", notThere), ("/dev/v4l/by-id/usb-nothing-video-index0", notThere)] {
            var bad = synthetic()
            bad.device = device
            bad.quality = 50
            do {
                _ = try await session.configure(bad)
                Issue.record("device \(device) was accepted")
            } catch {
                guard case .invalidSettings(let message) = error else { Issue.record("wrong error \(error) for \(device)"); continue }
                #expect(message.hasPrefix("device \"\(device)\""), "the message names the field: \(message)")
                let matches = says == notACamera ? says.contains { message.contains($0) } : says.allSatisfy { message.contains($0) }
                #expect(matches, "\(device): \(message)")
            }
            #expect(await session.settings.device == FrameSources.syntheticName)
            #expect(await session.settings.quality == 85)
            #expect(await session.state == .running)
        }
        await session.stop()
    }

    /// What only opening the device shows is found on the capture thread; the camera
    /// then goes back to the settings it ran with, instead of staying failed.
    @Test func aReconfigureThatFailsOnOpenRollsBackToTheWorkingSettings() async throws {
        let refused = FrameSize(width: 640, height: 480)
        let session = CaptureSession(settings: synthetic(), openSource: { (_, request, _) throws(DeviceError) in
            if request.size == refused {
                throw DeviceError(.invalidArgument, path: "stand-in", "stand-in refuses \(refused)")
            }
            return try SyntheticSource(request: request)
        })
        await session.start()
        let stream = try await session.subscribe()
        var bad = synthetic()
        bad.size = refused
        bad.quality = 60
        do {
            _ = try await session.configure(bad)
            Issue.record("settings the device refused were kept")
        } catch {
            guard case .invalidSettings(let message) = error else { Issue.record("wrong error \(error)"); return }
            #expect(message.contains("stand-in refuses 640x480"), "\(message)")
            #expect(message.contains("previous settings"), "\(message)")
        }
        #expect(await session.settings == synthetic())
        let status = await session.status()
        #expect(status.state == .running)
        #expect(status.size == "320x240")
        // Stream clients stay connected through the failed attempt and the rollback.
        var next: EncodedFrame?
        for await frame in stream { next = frame; break }
        #expect(next?.size == FrameSize(width: 320, height: 240))
        await session.stop()
    }

    @Test func aMissingDeviceIsWaitedFor() async throws {
        let session = CaptureSession(settings: CameraSettings(id: "gone", device: "/dev/video-camd-missing"))
        let status = await session.start()
        #expect(status.state == .waitingForDevice)
        #expect(status.reason?.contains("does not exist") == true)
        do {
            _ = try await session.snapshot()
            Issue.record("a snapshot from a missing camera succeeded")
        } catch {
            guard case .waitingForDevice = error else { Issue.record("wrong error \(error)"); return }
        }
        await session.stop()
        #expect(await session.state == .idle)
    }
}
