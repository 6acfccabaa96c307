import APIModel
import ArgumentParser
import CaptureSession
import Client
import Foundation
import Logging
import Video
import VideoCore

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record H.264 video from a camera into an MP4 file.",
        discussion: """
            Through camd when it runs and owns the camera (the recording is also kept in camd's media \
            library); otherwise camctl opens the camera itself, as `ffmpeg -f v4l2` would. The file is \
            fragmented MP4, written under a temporary name and renamed when complete.
            """)

    @Option(name: .shortAndLong, help: "Camera: a path, a /dev/v4l/by-id name, a card name, an index, or testsrc (default: the first camera).")
    var device: String?

    @Option(help: "How long to record: seconds, or a duration such as 10s or 5m.")
    var duration: String

    @Option(name: .shortAndLong, help: "Where to write the MP4.")
    var output: String

    @Option(help: "Frame size, WxH (without camd only).")
    var size: String?

    @Option(help: "Pixel format as a FourCC (YUYV, MJPG, NV12, ...; without camd only).")
    var format: String?

    @Option(help: "Frame rate to ask for (without camd only).")
    var fps: Double?

    @Option(help: "H.264 encoder: auto, h264_v4l2m2m, h264_vaapi or libx264 (without camd only).")
    var encoder: String?

    @Option(help: "Target bit rate, such as 2M (without camd only; default: constant quality).")
    var bitrate: String?

    @OptionGroup var daemon: DaemonSelection

    /// The settings of a camera camctl opens itself, read by the same declarations as camd.toml.
    func settings() throws -> CameraSettings {
        let given = [("size", size), ("format", format), ("fps", fps.map { String($0) }), ("video.encoder", encoder),
                     ("video.bitrate", bitrate)]
        var settings = CameraSettings(id: "camctl", device: device)
        do throws(SettingError) {
            try settings.apply(try CameraSettings.fields(fromArguments: given.compactMap { key, value in value.map { "\(key)=\($0)" } }))
        } catch {
            throw ValidationError(error.description)
        }
        return settings
    }

    var seconds: Double {
        get throws {
            guard let value = ValueSpelling.seconds(parsing: duration), value > 0, value <= 86_400 else {
                throw ValidationError("--duration must be a number of seconds above 0 (at most a day), or a duration such as 10s or 5m; got \(duration)")
            }
            return value
        }
    }

    func validate() throws {
        _ = try seconds
        _ = try settings()
        guard output != "-" else { throw ValidationError("-o must be a file: an MP4 is written under a temporary name and renamed") }
    }

    func run() throws {
        let seconds = try seconds
        if device != FrameSources.syntheticName, let client = daemon.daemon(), let id = try DaemonCall.cameraID(client, matching: device) {
            return try throughDaemon(client, camera: id, seconds: seconds)
        }
        try byItself(seconds: seconds)
    }

    /// camd records into its media library; camctl follows it, then copies the file out.
    func throughDaemon(_ client: DaemonClient, camera id: String, seconds: Double) throws {
        if size != nil || format != nil || fps != nil || encoder != nil || bitrate != nil {
            printError("camctl: note: camd's camera \(id) keeps its own settings; change them with `camctl configure \(id) video.bitrate=...`, or use --no-daemon")
        }
        let body = Array(#"{"duration": \#(seconds)}"#.utf8)
        _ = try DaemonCall.perform(client, "POST", "/v1/cameras/\(id)/recordings", body: body)
        let progress = Progress(total: seconds)
        var status: RecordingStatus
        repeat {
            Thread.sleep(forTimeInterval: 0.25)
            status = try DaemonCall.decode(RecordingStatus.self, try DaemonCall.perform(client, "GET", "/v1/cameras/\(id)/recordings"))
            progress.show(Date().timeIntervalSince1970 - (status.started ?? Date().timeIntervalSince1970))
        } while status.state != .off
        progress.finish()
        if let error = status.error { throw fail("camd: \(error)", ExitStatus.outputFailed) }
        guard let movie = status.saved.first else { throw fail("camd saved no file: no frame came from camera \(id)", ExitStatus.deviceIO) }
        try write(try DaemonCall.fetchMedia(client, movie.name))
        printError("camd camera \(id) (\(client.socketPath)): \(describe(movie)) → \(output); kept in camd's media as \(movie.name)")
    }

    /// camctl opens the camera, records with the same video stage camd uses, and moves the file into place.
    func byItself(seconds: Double) throws {
        let settings = try settings()
        let folder = (output as NSString).deletingLastPathComponent
        var template = Array(((folder.isEmpty ? "." : folder) + "/.camctl-record-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw fail("cannot create a temporary folder beside \(output): \(String(cString: strerror(errno)))", ExitStatus.outputFailed)
        }
        let root = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let output = self.output
        let result = Blocking.run { () async -> Result<PhotoRecord, RecordFailure> in
            // The camera's and the recorder's progress is shown by camctl's own line; only trouble is logged.
            var logger = Logger(label: "camctl")
            logger.logLevel = .warning
            let session = CaptureSession(settings: settings, logger: logger)
            let recorder = MovieRecorder(session: session, output: PhotoOutput(root: root), logger: logger)
            defer { Task { await session.stop() } }
            let started = await session.start()
            guard started.state == .running else {
                return .failure(RecordFailure(message: started.reason ?? "the camera did not start", status: ExitStatus.deviceIO))
            }
            do {
                _ = try await recorder.start(duration: seconds)
            } catch {
                return .failure(RecordFailure(message: "\(error)", status: ExitStatus.deviceIO))
            }
            let progress = Progress(total: seconds)
            let begin = Date()
            var status = await recorder.status()
            while status.state != .off {
                try? await Task.sleep(for: .milliseconds(250))
                progress.show(Date().timeIntervalSince(begin))
                status = await recorder.status()
            }
            progress.finish()
            await session.stop()
            if let error = status.error { return .failure(RecordFailure(message: error, status: ExitStatus.outputFailed)) }
            guard let movie = status.saved.first else {
                return .failure(RecordFailure(message: "no frame came from the camera", status: ExitStatus.deviceIO))
            }
            guard rename(root + "/camctl/" + movie.name, output) == 0 else {
                return .failure(RecordFailure(message: "cannot move the recording to \(output): \(String(cString: strerror(errno)))",
                                              status: ExitStatus.outputFailed))
            }
            return .success(movie)
        }
        switch result {
        case .success(let movie): printError("\(settings.device ?? "the first camera"): \(describe(movie)) → \(output)")
        case .failure(let failure): throw fail(failure.message, failure.status)
        }
    }

    private func describe(_ movie: PhotoRecord) -> String {
        String(format: "%.1f s of H.264, %dx%d, %d bytes", movie.duration ?? 0, movie.width ?? 0, movie.height ?? 0, movie.bytes)
    }

    private func write(_ bytes: [UInt8]) throws {
        do { try AtomicFile.write(bytes, to: output) } catch { throw fail("\(error)", ExitStatus.outputFailed) }
    }
}

struct RecordFailure: Error {
    var message: String
    var status: ExitCode
}

/// Runs async work from camctl's synchronous commands and waits for it.
enum Blocking {
    static func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            box.value = await body()
            done.signal()
        }
        done.wait()
        return box.value!
    }

    private final class ResultBox<T: Sendable>: @unchecked Sendable {  // written once before the semaphore is signalled
        var value: T?
    }
}
