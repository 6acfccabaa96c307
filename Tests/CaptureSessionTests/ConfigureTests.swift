@testable import CaptureSession
import Foundation
import JPEG
import Testing
import VideoCore

/// A configure is one step inside the camera's actor, restarts only what must restart,
/// and never makes a request that arrives meanwhile fail.
@Suite struct ConfigureTests {
    func synthetic(size: FrameSize = FrameSize(width: 320, height: 240)) -> CameraSettings {
        CameraSettings(id: "cfg", device: FrameSources.syntheticName, size: size, fps: 30, idleStopSeconds: 30)
    }

    @Test func concurrentConfiguresAllTakeEffect() async throws {
        let session = CaptureSession(settings: synthetic())
        await session.start()
        // Each changes another field; some need the device restarted, some the encoders, some nothing.
        let changes: [@Sendable (inout CameraSettings) -> Void] = [
            { $0.quality = 61 },
            { $0.photos.keepCount = 7 },
            { $0.idleStopSeconds = 99 },
            { $0.photos.intervalSeconds = 42 },
            { $0.size = FrameSize(width: 160, height: 120) },
            { $0.photos.keepSeconds = 3600 },
            { $0.encoderThreads = 1 },
            { $0.autostart = false },
        ]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for change in changes {
                group.addTask {
                    _ = try await session.configure { current in
                        var new = current
                        change(&new)
                        return new
                    }
                }
            }
            try await group.waitForAll()
        }
        let s = await session.settings
        #expect(s.quality == 61)
        #expect(s.photos.keepCount == 7)
        #expect(s.idleStopSeconds == 99)
        #expect(s.photos.intervalSeconds == 42)
        #expect(s.size == FrameSize(width: 160, height: 120))
        #expect(s.photos.keepSeconds == 3600)
        #expect(s.encoderThreads == 1)
        #expect(s.autostart == false)
        #expect(await session.status().size == "160x120")
        await session.stop()
    }

    @Test func onlyWhatMustRestartRestarts() async throws {
        let session = CaptureSession(settings: synthetic())
        await session.start()
        let stream = try await session.subscribe()
        var frames = stream.makeAsyncIterator()
        var last = try #require(await frames.next()).sequence

        /// The stream's next frame: the synthetic source counts from 0 again when reopened.
        func continues() async throws -> Bool {
            let next = try #require(await frames.next())
            defer { last = next.sequence }
            return next.sequence > last
        }

        let retention = try await session.configure { var s = $0; s.photos.keepCount = 3; s.idleStopSeconds = 120; return s }
        #expect(retention.restart == ConfigureRestart.none)
        #expect(try await continues(), "a retention change reopened the device")

        let quality = try await session.configure { var s = $0; s.quality = 40; return s }
        #expect(quality.restart == .encoders)
        #expect(try await continues(), "a quality change reopened the device")
        #expect(await session.status().quality == 40)
        // JPEGs from before the change are not served as the new quality's.
        let shot = try await session.snapshot(maxAge: 0)
        #expect(shot.jpeg.count > 0)

        let size = try await session.configure { var s = $0; s.size = FrameSize(width: 160, height: 120); return s }
        #expect(size.restart == .device)
        #expect(size.size == "160x120")
        await session.stop()
    }

    @Test func requestsDuringARestartWaitForIt() async throws {
        let session = CaptureSession(settings: synthetic())
        await session.start()
        let sizes = [FrameSize(width: 160, height: 120), FrameSize(width: 320, height: 240)]
        let failures = try await withThrowingTaskGroup(of: [String].self) { group in
            group.addTask {
                for round in 0..<6 {
                    _ = try await session.configure { var s = $0; s.size = sizes[round % 2]; return s }
                }
                return []
            }
            // Snapshots and new streams, back to back, for as long as the restarts go on.
            for _ in 0..<3 {
                group.addTask {
                    var failed: [String] = []
                    let end = ContinuousClock.now + .seconds(2)
                    while ContinuousClock.now < end {
                        do {
                            _ = try await session.snapshot(maxAge: 0)
                            _ = try await session.subscribe()
                        } catch {
                            failed.append("\(error)")
                        }
                    }
                    return failed
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures.isEmpty, "\(failures.count) requests failed during planned restarts: \(Set(failures))")
        await session.stop()
    }
}
