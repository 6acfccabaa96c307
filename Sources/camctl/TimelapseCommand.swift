import APIModel
import ArgumentParser
import CaptureSession
import Client
import Foundation

struct TimelapseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timelapse",
        abstract: "Make an H.264 movie of a camera's saved photos in camd, and download it.",
        discussion: """
            camd renders the movie in the background (one frame per photo, oldest first) and keeps it \
            in its media library; camctl shows the progress on stderr, then writes the movie to -o. \
            Ctrl-C cancels the render, and camd leaves no file. Needs camd.
            """)

    @OptionGroup var daemon: DaemonSelection

    @Argument(help: "Camera: an id, a device, or a card name (default: the first camera).")
    var camera: String?

    @Option(help: "From this time (seconds since 1970 or ISO 8601, such as 2026-11-22T06:00:00Z).")
    var since: String?

    @Option(help: "Until this time (exclusive).")
    var until: String?

    @Option(help: "Frames a second (default \(Int(TimelapseSettings.defaultFPS))); each photo is one frame.")
    var fps: Double?

    @Option(help: "Movie size, WIDTHxHEIGHT (default: the first photo's); photos of another shape get black bars.")
    var size: String?

    @Option(name: .shortAndLong, help: "Where to write the MP4.")
    var output: String

    func validate() throws {
        guard output != "-" else { throw ValidationError("-o must be a file: the movie is written under a temporary name and renamed") }
    }

    func run() throws {
        let client = try daemon.requiredDaemon()
        let id = try cameraID(client)
        let request = TimelapseRequest(camera: id, since: since, until: until, fps: fps, size: size)
        let body: [UInt8]
        do { body = Array(try APIJSON.encoder().encode(request)) } catch { throw fail("cannot encode the request: \(error)", ExitCode(1)) }

        // From the job's creation on, Ctrl-C cancels it in camd rather than leaving it to run.
        let interruption = Interruption()
        defer { interruption.end() }
        var job = try DaemonCall.decode(TimelapseJob.self, try DaemonCall.perform(client, "POST", "/v1/timelapses", body: body))
        let progress = Progress.frames(job.framesTotal, label: "timelapse")
        while !job.state.isFinished {
            if interruption.isRaised {
                progress.finish()
                _ = try? DaemonCall.perform(client, "POST", "/v1/timelapses/\(job.id)/cancel")
                printError("camctl: cancelled; camd removed the unfinished movie")
                throw ExitCode(Interruption.exitStatus)
            }
            progress.show(Double(job.framesDone))
            Thread.sleep(forTimeInterval: 0.2)
            job = try DaemonCall.decode(TimelapseJob.self, try DaemonCall.perform(client, "GET", "/v1/timelapses/\(job.id)"))
        }
        progress.show(Double(job.framesDone))
        progress.finish()
        interruption.end()

        switch job.state {
        case .done:
            guard let name = job.name else { throw fail("camd finished timelapse \(job.id) but named no movie", ExitCode(1)) }
            let movie = try DaemonCall.fetchMedia(client, name)
            do { try AtomicFile.write(movie, to: output) } catch { throw fail("\(error)", ExitStatus.outputFailed) }
            let skipped = job.framesSkipped > 0 ? " (\(job.framesSkipped) photos could not be read)" : ""
            printError("camd camera \(id): \(job.framesDone - job.framesSkipped) frames\(skipped) at \(Self.number(job.fps)) fps, "
                       + "\(job.size ?? "?"), \(movie.count) bytes → \(output); kept in camd's media as \(name)")
        case .failed:
            throw fail("camd: \(job.error ?? "the timelapse failed")", job.error?.contains("disk is full") == true ? ExitStatus.outputFailed : ExitCode(1))
        default:
            throw fail("timelapse \(job.id) was cancelled in camd", ExitCode(1))
        }
    }

    /// The camera's id in camd: the one `camera` names, or, for photos of a camera camd no
    /// longer runs, the id as given.
    private func cameraID(_ client: DaemonClient) throws -> String {
        if let id = try DaemonCall.cameraID(client, matching: camera) { return id }
        if let camera, CameraSettings.isValidID(camera) { return camera }
        throw fail("camd has no camera \"\(camera ?? "")\"; see `camctl status`", ExitStatus.noSuchDevice)
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
