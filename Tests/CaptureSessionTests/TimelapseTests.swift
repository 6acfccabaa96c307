import CamdTestSupport
@testable import CaptureSession
import Foundation
import JPEG
import Testing
import Video
import VideoCore

/// Timelapse movies from photos saved with `PhotoOutput.save` in a scratch folder, read
/// back with FFmpeg (`VideoFile`, and `ffprobe -count_frames` where it is installed).
@Suite struct TimelapseTests {
    static let camera = "cam"
    static let libx264 = VideoEncoderSettings(encoder: .libx264)
    static let bright = Geometry.Color(red: 240, green: 240, blue: 240)

    /// Saves one photo per entry, a second apart from `start`, and returns them oldest first.
    static func save(_ photos: [(FrameSize, Geometry.Color)], to output: PhotoOutput, start: Double = 1_700_000_000)
        async throws -> [PhotoRecord] {
        var records: [PhotoRecord] = []
        for (index, (size, color)) in photos.enumerated() {
            let jpeg = try TestPhotos.jpeg(size, color)
            records.append(try await output.save(jpeg, camera: camera, settings: PhotoSettings(), captureTime: start + Double(index),
                                                 sequence: UInt32(index), width: size.width, height: size.height))
        }
        return records
    }

    static func withJobs(_ body: (TimelapseJobs, String) async throws -> Void) async throws {
        let root = try TestPhotos.temporaryFolder("timelapse")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await body(TimelapseJobs(photos: PhotoOutput(root: root), encoder: libx264), root)
    }

    /// What the camera's folder holds besides photos: movies and unfinished files.
    static func nonPhotos(in root: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + camera)) ?? []).filter { !$0.hasSuffix(".jpg") }.sorted()
    }

    @Test func aTimelapseHasOneFrameForEachPhotoAtTheAskedRate() async throws {
        try await Self.withJobs { jobs, root in
            let size = FrameSize(width: 320, height: 240)
            let count = 12
            let saved = try await Self.save((0..<count).map { index in
                // Two of another size: they are fitted, not refused.
                let photoSize = index == 4 ? FrameSize(width: 160, height: 160) : index == 7 ? FrameSize(width: 640, height: 360) : size
                return (photoSize, Geometry.Color(red: UInt8(20 * index), green: 128, blue: 200))
            }, to: jobs.photos)
            let queued = try await jobs.start(camera: Self.camera, since: nil, until: nil, settings: try TimelapseSettings(fps: 10))
            #expect(queued.framesTotal == count)
            #expect(queued.state == .queued || queued.state == .running)
            let job = try await jobs.finished(queued.id)
            #expect(job.state == .done, "\(job.error ?? "")")
            #expect(job.framesDone == count && job.framesSkipped == 0)
            #expect(job.size == size, "the first photo's size")
            #expect(job.encoder == "libx264")
            let movie = try #require(job.movie)
            let stamp = try PhotoOutput.fileName(pattern: "{date}-{time}.jpg", camera: Self.camera, captureTime: saved[0].captureTime,
                                                 sequence: 0).dropLast(4)
            #expect(movie.name == "cam-timelapse-\(stamp).mp4")
            #expect(movie.kind == .video && movie.captureTime == saved[0].captureTime)
            #expect(Self.nonPhotos(in: root) == [movie.name], "only the finished movie; no unfinished file")
            #expect(await jobs.photos.list(kind: .video) == [movie])

            let path = root + "/cam/" + movie.name
            let video = try VideoFile(path: path)
            #expect(video.info.size == size)
            #expect(abs(video.info.duration - Double(count) / 10) < 0.01, "duration \(video.info.duration)")
            if let frames = await TestPhotos.countFramesWithFFprobe(path) {
                #expect(frames == count)
            }
            // Asking again for the finished job answers the same.
            #expect(try await jobs.job(job.id) == job)
            #expect(await jobs.list().map(\.id) == [job.id])
        }
    }

    @Test func photosOfAnotherShapeAreFittedWithBlackBars() async throws {
        try await Self.withJobs { jobs, root in
            // The movie takes the first photo's 320x240; a tall photo gets bars left and right,
            // a wide one bars above and below; the asked size then overrides the first photo's.
            _ = try await Self.save([(FrameSize(width: 320, height: 240), Self.bright),
                                     (FrameSize(width: 120, height: 240), Self.bright),
                                     (FrameSize(width: 640, height: 160), Self.bright)], to: jobs.photos)
            let job = try await jobs.finished(try await jobs.start(camera: Self.camera, since: nil, until: nil,
                                                                   settings: try TimelapseSettings(fps: 2)).id)
            let video = try VideoFile(path: root + "/cam/" + #require(job.movie?.name))
            let full = try video.frame(at: 0.1), tall = try video.frame(at: 0.6), wide = try video.frame(at: 1.1)
            #expect(full.size == FrameSize(width: 320, height: 240))
            func luma(_ image: YUVImage, _ x: Int, _ y: Int) -> Int { Int(image.sample(plane: 0, x: x, y: y)) }
            #expect(luma(full, 10, 120) > 200 && luma(full, 160, 10) > 200, "the first photo fills the frame")
            #expect(luma(tall, 160, 120) > 200, "the tall photo in the middle")
            #expect(luma(tall, 20, 120) < 30 && luma(tall, 300, 120) < 30, "black bars left and right")
            #expect(luma(tall, 160, 10) > 200, "no bars above")
            #expect(luma(wide, 160, 120) > 200, "the wide photo in the middle")
            #expect(luma(wide, 160, 20) < 30 && luma(wide, 160, 220) < 30, "black bars above and below")
            #expect(luma(wide, 10, 120) > 200, "no bars at the sides")
        }
    }

    @Test func theAskedSizeAndTheRangeAreKept() async throws {
        try await Self.withJobs { jobs, root in
            let saved = try await Self.save((0..<6).map { _ in (FrameSize(width: 320, height: 240), Self.bright) }, to: jobs.photos)
            // since is inclusive, until exclusive: photos 1, 2 and 3.
            let job = try await jobs.finished(try await jobs.start(
                camera: Self.camera, since: saved[1].captureTime, until: saved[4].captureTime,
                settings: try TimelapseSettings(fps: 30, size: FrameSize(width: 160, height: 90))).id)
            #expect(job.state == .done && job.framesTotal == 3 && job.framesDone == 3)
            let video = try VideoFile(path: root + "/cam/" + #require(job.movie?.name))
            #expect(video.info.size == FrameSize(width: 160, height: 90))
            #expect(abs(video.info.duration - 0.1) < 0.01, "3 frames at 30 fps: \(video.info.duration)")
            #expect(job.movie?.captureTime == saved[1].captureTime, "the movie is dated by its first photo")
        }
    }

    @Test func cancellingMidwayStopsAndLeavesNoFile() async throws {
        try await Self.withJobs { jobs, root in
            let jpeg = try TestPhotos.jpeg(FrameSize(width: 640, height: 480), Self.bright)
            for index in 0..<300 {
                _ = try await jobs.photos.save(jpeg, camera: Self.camera, settings: PhotoSettings(), captureTime: 1_000 + Double(index),
                                               sequence: UInt32(index), width: 640, height: 480)
            }
            let job = try await jobs.start(camera: Self.camera, since: nil, until: nil, settings: try TimelapseSettings())
            // Cancel once it is under way: the unfinished movie exists by then.
            try await waitUntil { try await jobs.job(job.id).framesDone >= 5 }
            #expect(Self.nonPhotos(in: root).contains { $0.hasPrefix(AtomicFile.temporaryPrefix + "timelapse-") })
            let cancelled = try await jobs.cancel(job.id)
            #expect(cancelled.state == .cancelled)
            #expect(cancelled.framesDone >= 5 && cancelled.framesDone < 300, "stopped midway: \(cancelled.framesDone)")
            #expect(Self.nonPhotos(in: root).isEmpty, "no movie and no unfinished file: \(Self.nonPhotos(in: root))")
            #expect(await jobs.photos.list(kind: .video).isEmpty)
            // Cancelling again answers the same; the job can then be forgotten.
            #expect(try await jobs.cancel(job.id).state == .cancelled)
            try await jobs.remove(job.id)
            await #expect(throws: TimelapseError.self) { try await jobs.job(job.id) }
        }
    }

    @Test func aQueuedJobWaitsForTheOneBeforeItAndCancelsAtOnce() async throws {
        try await Self.withJobs { jobs, root in
            let jpeg = try TestPhotos.jpeg(FrameSize(width: 640, height: 480), Self.bright)
            for index in 0..<100 {
                _ = try await jobs.photos.save(jpeg, camera: Self.camera, settings: PhotoSettings(), captureTime: 1_000 + Double(index),
                                               sequence: UInt32(index), width: 640, height: 480)
            }
            let first = try await jobs.start(camera: Self.camera, since: nil, until: nil, settings: try TimelapseSettings())
            let second = try await jobs.start(camera: Self.camera, since: nil, until: 1_010, settings: try TimelapseSettings())
            #expect(try await jobs.job(second.id).state == .queued)
            #expect(try await jobs.cancel(second.id).state == .cancelled)
            #expect(try await jobs.finished(first.id).state == .done)
            await #expect { _ = try await jobs.cancel(first.id) } throws: { error in
                if case .alreadyFinished(let message) = error as? TimelapseError { return message.contains("already done") }
                return false
            }
            #expect(await jobs.list().map(\.id) == [second.id, first.id])
            #expect(Self.nonPhotos(in: root).count == 1)
        }
    }

    @Test func noPhotosInTheRangeIsRefusedBeforeAnyJobIsMade() async throws {
        try await Self.withJobs { jobs, _ in
            _ = try await Self.save([(FrameSize(width: 64, height: 48), Self.bright)], to: jobs.photos, start: 100)
            await #expect {
                _ = try await jobs.start(camera: Self.camera, since: 200, until: nil, settings: try TimelapseSettings())
            } throws: { error in
                guard case .noPhotos(let message) = error as? TimelapseError else { return false }
                return message.contains("no photos") && message.contains("since")
            }
            await #expect(throws: TimelapseError.self) {
                _ = try await jobs.start(camera: "other", since: nil, until: nil, settings: try TimelapseSettings())
            }
            await #expect {
                _ = try await jobs.start(camera: "../cam", since: nil, until: nil, settings: try TimelapseSettings())
            } throws: { error in
                (error as? TimelapseError).map { if case .invalidParameter("camera", _) = $0 { true } else { false } } ?? false
            }
            #expect(await jobs.list().isEmpty)
        }
    }

    @Test func badFPSAndSizesNameTheField() throws {
        for fps in [0, -1, 0.001, 1e-300, 121, .nan, .infinity] {
            #expect { _ = try TimelapseSettings(fps: fps) } throws: { error in
                if case .invalidParameter("fps", let message) = error as? TimelapseError { return message.contains("fps") }
                return false
            }
        }
        for text in ["12x", "abc", "0x0", "321x240", "320x241", "8x8", "8192x4320", "-2x4", "+320x240", " 320x240"] {
            #expect { _ = try TimelapseSettings.size(parsing: text) } throws: { error in
                if case .invalidParameter("size", let message) = error as? TimelapseError { return message.contains("size") }
                return false
            }
        }
        #expect(try TimelapseSettings.size(parsing: "1280x720") == FrameSize(width: 1280, height: 720))
        #expect(try TimelapseSettings(fps: 120).fps == 120)
        #expect(try TimelapseSettings(fps: 0.01).fps == 0.01)
        // The first photo's size, even and within limits.
        #expect(TimelapseSettings.size(forFirstPhoto: FrameSize(width: 1921, height: 1081)) == FrameSize(width: 1920, height: 1080))
        #expect(TimelapseSettings.size(forFirstPhoto: FrameSize(width: 8000, height: 6000)) == FrameSize(width: 4096, height: 3072))
    }

    @Test func aPhotoDeletedMeanwhileIsSkippedAndAFullDiskFailsTheRender() throws {
        let folder = try TestPhotos.temporaryFolder("timelapse-render")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var paths: [String] = []
        for index in 0..<4 {
            let path = folder + "/\(index).jpg"
            try Data(TestPhotos.jpeg(FrameSize(width: 160, height: 120), Self.bright)).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        paths.insert(folder + "/gone.jpg", at: 2)
        let renderer = TimelapseRenderer(settings: try TimelapseSettings(fps: 5), encoder: Self.libx264)
        var bytes = 0
        let progress = TimelapseProgress()
        let result = try renderer.render(paths, into: { bytes += $0.count; return 0 }, output: "memory", progress: progress)
        #expect(result.frames == 4 && result.skipped == 1 && result.bytes == bytes)
        #expect(progress.current.done == 5 && progress.current.skipped == 1)
        #expect(abs(result.duration - 0.8) < 1e-9)

        // The sink says the disk is full, as a file's write would.
        #expect { _ = try TimelapseRenderer(settings: try TimelapseSettings(fps: 5), encoder: Self.libx264)
            .render(paths, into: { _ in ENOSPC }, output: "/x/movie.partial", progress: TimelapseProgress()) } throws: { error in
            guard case .diskFull(let message) = error as? TimelapseError else { return false }
            return message.contains("/x/movie.partial") && message.contains("disk is full") && message.contains("Free some space")
        }
        // Nothing readable: no movie, and the reason.
        #expect { _ = try TimelapseRenderer(settings: try TimelapseSettings(), encoder: Self.libx264)
            .render([folder + "/gone.jpg"], into: { _ in 0 }, output: "memory", progress: TimelapseProgress()) } throws: { error in
            guard case .failed(let message) = error as? TimelapseError else { return false }
            return message.contains("deleted")
        }
    }

    @Test(.enabled(if: canMountTmpfs, "needs root with CAP_SYS_ADMIN to mount a small tmpfs"))
    func aFullDiskFailsTheJobWithTheMessageAndLeavesNoFile() async throws {
        let root = try TestPhotos.temporaryFolder("timelapse-full")
        defer { try? FileManager.default.removeItem(atPath: root) }
        guard mount("tmpfs", root, "tmpfs", 0, "size=512k") == 0 else {
            Issue.record("mounting a tmpfs on \(root) failed: errno \(errno)")
            return
        }
        defer { umount(root) }
        let jobs = TimelapseJobs(photos: PhotoOutput(root: root), encoder: Self.libx264)
        _ = try await Self.save((0..<20).map { (FrameSize(width: 320, height: 240), Geometry.Color(red: UInt8($0 * 12), green: 0, blue: 255)) },
                                to: jobs.photos)
        // Whatever room is left, a file outside the camera's folder takes.
        var info = statvfs()
        statvfs(root, &info)
        try Data(count: Int(info.f_bavail) * Int(info.f_frsize)).write(to: URL(fileURLWithPath: root + "/filler"))
        let job = try await jobs.finished(try await jobs.start(camera: Self.camera, since: nil, until: nil,
                                                               settings: try TimelapseSettings(fps: 10)).id)
        #expect(job.state == .failed)
        #expect(job.error?.contains("disk is full") == true, "\(job.error ?? "")")
        #expect(Self.nonPhotos(in: root).isEmpty, "\(Self.nonPhotos(in: root))")
    }
}

