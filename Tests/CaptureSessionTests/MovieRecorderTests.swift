import CamdTestSupport
import Foundation
import Testing
import Video
import VideoCore
@testable import CaptureSession

/// Continuous recording in segments, recovery of a killed run's recording, and movie
/// retention, on the synthetic source.
@Suite struct MovieRecorderTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-recorder-\(UInt32.random(in: 0...UInt32.max))").path

    func session(_ video: VideoSettings) -> CaptureSession {
        CaptureSession(settings: CameraSettings(id: "cam", device: FrameSources.syntheticName, size: FrameSize(width: 160, height: 120),
                                                fps: 20, video: video))
    }

    func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root + "/cam")) ?? []).sorted()
    }

    @Test func continuousRecordingCutsFilesAtKeyframesAfterEachSegmentAndEveryFilePlays() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let video = VideoSettings(encoder: VideoEncoderSettings(encoder: .libx264, keyframeInterval: 0.5), record: .continuous,
                                  segmentSeconds: 1)
        let camera = session(video)
        await camera.start()
        let output = PhotoOutput(root: root)
        let recorder = MovieRecorder(session: camera, output: output)
        await recorder.follow(settings: video, cameraRunning: true)
        // Two segments of 1 s are named within about 3 s; a loaded machine may encode slower.
        var saved: [PhotoRecord] = []
        try await waitUntil(limit: .seconds(30), every: .milliseconds(100)) {
            saved = await recorder.status().saved
            return saved.count >= 2
        }
        #expect(saved.count >= 2, "segments so far: \(saved.map(\.name))")
        // Turning continuous off ends the recording; its last file is named too.
        await recorder.follow(settings: VideoSettings(record: .off), cameraRunning: true)
        saved = await recorder.status().saved
        #expect(await recorder.status().state == .off)
        #expect(saved.count >= 3)
        for (index, movie) in saved.enumerated() {
            let info = try VideoFile(path: root + "/cam/" + movie.name).info
            // Each file but the last (cut when recording stopped) is a segment up to the next keyframe.
            let least = index == saved.count - 1 ? 0.01 : 0.9
            #expect(info.duration >= least && info.duration <= 1.6, "\(movie.name): \(info.duration) s")
            #expect(try VideoFile(path: root + "/cam/" + movie.name).frame(at: 0).size == FrameSize(width: 160, height: 120))
        }
        #expect(!files().contains { $0.hasPrefix(".") }, "no temporary file is left: \(files())")
        #expect(Set(saved.map(\.name)).count == saved.count)
        await camera.stop()
    }

    @Test func aRecordingAKilledRunLeftIsNamedAtStartAndOneWithoutAFragmentIsRemoved() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/cam", withIntermediateDirectories: true)
        // An unfinished recording: header and fragments, no trailer, as SIGKILL leaves it.
        let encoder = try H264Encoder(settings: VideoEncoderSettings(encoder: .libx264), size: FrameSize(width: 160, height: 120),
                                      frameRate: 10, range: .limited)
        let picture = try VideoPicture(size: FrameSize(width: 160, height: 120))
        var bytes: [UInt8] = []
        var writer: FragmentedMP4Writer?
        for index in 0..<35 {
            let layout = FrameLayout(format: .yuyv, size: FrameSize(width: 160, height: 120), bytesPerLine: 320, range: .limited)
            try picture.fill(from: Frame(layout: layout, bytes: [UInt8](repeating: UInt8(16 + index * 4), count: 320 * 120),
                                         sequence: UInt32(index), monotonicTime: Double(index) / 10, captureTime: 0))
            for packet in try encoder.encode(picture, monotonicTime: Double(index) / 10, captureTime: 0) {
                if writer == nil {
                    writer = try FragmentedMP4Writer(format: encoder.format) { chunk in bytes += chunk; return 0 }
                }
                try writer?.write(packet)
            }
        }
        // Killed while a fragment was half written: 100 bytes of the next one are there.
        let whole = bytes.count
        bytes += bytes.suffix(200).prefix(100)
        _ = FileManager.default.createFile(atPath: root + "/cam/" + PhotoOutput.recordingPrefix + "cam-20261125-101010.mp4",
                                           contents: Data(bytes))
        // A recording killed before its first fragment: the start of its header only.
        _ = FileManager.default.createFile(atPath: root + "/cam/" + PhotoOutput.recordingPrefix + "cam-20261125-111111.mp4",
                                           contents: Data(bytes.prefix(40)))
        let output = PhotoOutput(root: root)
        let recovered = await output.recoverInterruptedRecordings()
        #expect(recovered.map(\.name) == ["cam-20261125-101010.mp4"])
        #expect((recovered.first?.duration ?? 0) >= 2.9, "the whole fragments: \(recovered.first?.duration ?? 0) s")
        #expect(files() == ["cam-20261125-101010.mp4"])
        #expect(recovered.first?.bytes == whole, "cut back to the last whole fragment")
        #expect(await output.list(kind: .video).map(\.name) == ["cam-20261125-101010.mp4"])
    }

    @Test func movieRetentionCountsMoviesApartFromPhotos() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let video = VideoSettings(encoder: VideoEncoderSettings(encoder: .libx264), keepCount: 1)
        let camera = session(video)
        await camera.start()
        let output = PhotoOutput(root: root)
        _ = try await output.save(try await camera.snapshot().jpeg, camera: "cam", settings: PhotoSettings(keepCount: 1),
                                  captureTime: PhotoOutput.currentTime(), sequence: 1, width: 160, height: 120)
        let recorder = MovieRecorder(session: camera, output: output)
        for _ in 0..<2 {
            _ = try await recorder.start(duration: 0.5)
            try await Task.sleep(for: .seconds(1))
            _ = try? await recorder.stop()
        }
        #expect(await output.list(kind: .video).count == 1)
        #expect(await output.list(kind: .photo).count == 1, "the photo is not counted against the movies' limit")
        await camera.stop()
    }
}

extension MovieRecorderTests {
    /// A recording that has run for its duration leaves the H.264 stage at once: finishing and
    /// naming its file (fsync, probing it) may take seconds on a slow disk, and the encoder
    /// would run on for nobody meanwhile. Found in the MJPEG VM check, where the stage encoded
    /// 95 frames more than the 10 s file held.
    @Test func aRecordingThatRanItsDurationStopsTheEncoderBeforeItsFileIsNamed() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let camera = session(VideoSettings(encoder: VideoEncoderSettings(encoder: .libx264)))
        await camera.start()
        let output = PhotoOutput(root: root)
        let recorder = MovieRecorder(session: camera, output: output)
        _ = try await recorder.start(duration: 0.5)
        // The photo output's writer is held, as a slow disk holds it: the file cannot be named yet.
        let held = DispatchSemaphore(value: 0)
        let holding = Task { await output.writer.run { held.wait() } }
        var video = await camera.status().video
        try await waitUntil(limit: .seconds(20), every: .milliseconds(50)) {
            video = await camera.status().video
            return !video.running
        }
        let state = await recorder.status().state
        held.signal()
        await holding.value
        #expect(!video.running && video.consumers == 0,
                "the stage still encodes while the file waits for its name: \(video.consumers) consumer(s), \(video.framesEncoded) frames")
        #expect(state == .recording, "the recording is not over until its file is named")
        var status = await recorder.status()
        try await waitUntil(limit: .seconds(10), every: .milliseconds(50)) {
            status = await recorder.status()
            return status.state == .off
        }
        #expect(status.state == .off && status.saved.count == 1, "\(status)")
        #expect(await camera.status().video.framesEncoded == video.framesEncoded, "nothing was encoded after the stage stopped")
        if let movie = status.saved.first {
            #expect(try VideoFile(path: root + "/cam/" + movie.name).info.duration >= 0.4)
        }
        await camera.stop()
    }

    /// A continuous recording on a disk without room is on and waiting, says why, and is off
    /// again when `record` is turned off.
    @Test(.enabled(if: canMountTmpfs, "needs root with CAP_SYS_ADMIN to mount a small tmpfs"))
    func continuousRecordingOnAFullDiskWaitsForRoom() async throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        guard mount("tmpfs", root, "tmpfs", 0, "size=1m") == 0 else {
            Issue.record("mounting a tmpfs on \(root) failed: errno \(errno)")
            return
        }
        defer {
            umount(root)
            try? FileManager.default.removeItem(atPath: root)
        }
        let video = VideoSettings(record: .continuous)
        let camera = session(video)
        await camera.start()
        let recorder = MovieRecorder(session: camera, output: PhotoOutput(root: root))
        await recorder.follow(settings: video, cameraRunning: true)
        let waiting = await recorder.status()
        #expect(waiting.state == .waitingForSpace)
        #expect(waiting.error?.contains("full") == true, "\(waiting.error ?? "")")
        #expect(await camera.status().video.recording.state == .waitingForSpace, "status says so")
        #expect(await camera.status().video.running == false, "nothing is encoded for it meanwhile")
        await recorder.follow(settings: VideoSettings(record: .off), cameraRunning: true)
        #expect(await recorder.status().state == .off)
        await camera.stop()
    }
}

/// Whether this machine has no VA-API device, so that `h264_vaapi` cannot open.
let hasNoVAAPIDevice = !FileManager.default.fileExists(atPath: "/dev/dri")

extension MovieRecorderTests {
    /// A recording whose encoder cannot open (`h264_vaapi` with no GPU) ends with the
    /// encoder's reason and leaves the stage idle, rather than stay `recording` for ever.
    @Test(.enabled(if: hasNoVAAPIDevice, "needs a machine without /dev/dri, where h264_vaapi cannot open"))
    func aRecordingWhoseEncoderCannotOpenEndsWithTheReason() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let video = VideoSettings(encoder: VideoEncoderSettings(encoder: .vaapi))
        let camera = session(video)
        await camera.start()
        let recorder = MovieRecorder(session: camera, output: PhotoOutput(root: root))
        // The encoder may fail before the start returns (then it throws the reason) or after.
        do {
            #expect(try await recorder.start().state == .recording)
        } catch {
            #expect(error.description.contains("VA-API"), "\(error)")
        }
        try await waitUntil(limit: .seconds(30), every: .milliseconds(50)) { await recorder.status().state != .recording }
        let ended = await recorder.status()
        #expect(ended.state == .off)
        #expect(ended.error?.contains("VA-API") == true, "\(ended.error ?? "no error")")
        #expect(await camera.status().video.running == false, "nothing is encoded once the recording ended")
        await #expect(throws: RecordingError.self, "stop answers with why it ended") { try await recorder.stop() }
        #expect(files().isEmpty, "no file was started: \(files())")
        await camera.stop()
    }

    /// A continuous recording whose encoder cannot open is not started again at every
    /// `follow` (once a second) but after `continuousRetrySeconds`.
    @Test(.enabled(if: hasNoVAAPIDevice, "needs a machine without /dev/dri, where h264_vaapi cannot open"))
    func aContinuousRecordingWhoseEncoderCannotOpenWaitsBeforeItTriesAgain() async throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let video = VideoSettings(encoder: VideoEncoderSettings(encoder: .vaapi), record: .continuous)
        let camera = session(video)
        await camera.start()
        let recorder = MovieRecorder(session: camera, output: PhotoOutput(root: root))
        await recorder.follow(settings: video, cameraRunning: true)
        try await waitUntil(limit: .seconds(30), every: .milliseconds(50)) { await recorder.status().state != .recording }
        #expect(await recorder.status().error?.contains("VA-API") == true)
        await recorder.follow(settings: video, cameraRunning: true)
        #expect(await recorder.status().state == .off, "not started again within \(MovieRecorder.continuousRetrySeconds) s")
        #expect(await camera.status().video.running == false)
        await camera.stop()
    }
}
