import Foundation
import Testing
import Video
import VideoCore
import CaptureSession

/// A recording publishes `recording_started` when its file opens and `recording_finished`
/// when the file has its name; deleting it publishes `photo_deleted`.
@Suite struct RecordingEventTests {
    @Test func aRecordingPublishesStartedAndFinishedAndADeletionPublishesWhy() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-recording-events-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let log = EventLog()
        let camera = CaptureSession(settings: CameraSettings(id: "cam", device: FrameSources.syntheticName, size: FrameSize(width: 160, height: 120),
                                                             fps: 20, video: VideoSettings(encoder: VideoEncoderSettings(encoder: .libx264))), events: log)
        let output = PhotoOutput(root: root, events: log)
        let recorder = MovieRecorder(session: camera, output: output)
        let watcher = log.subscribe(filter: EventFilter(types: [.recordingStarted, .recordingFinished, .photoDeleted]))
        _ = try await recorder.start(duration: 1)
        let started = await EventLogTests.read(watcher, 1)
        // The recording ends on its own after its second; its file is named, then announced.
        let finished = await EventLogTests.read(watcher, 1)
        let status = try await recorder.stop()
        let movie = try #require(status.saved.first)
        guard case .recordingStarted(let start)? = started.first?.payload else { Issue.record("no recording_started: \(started)"); return }
        #expect(start.camera == "cam" && start.name.hasSuffix(".mp4"))
        guard case .recordingFinished(let end)? = finished.first?.payload else { Issue.record("no recording_finished: \(finished)"); return }
        #expect(end.camera == "cam" && end.name == movie.name && end.bytes == movie.bytes)
        #expect(end.durationSeconds > 0.5 && end.durationSeconds < 1.5, "\(end.durationSeconds) s")

        try await output.delete(named: movie.name)
        let deleted = await EventLogTests.read(watcher, 1)
        #expect(deleted.first?.payload == .photoDeleted(.init(name: movie.name, why: .api, camera: "cam")))
        watcher.cancel()
        await camera.stop()
    }
}
