import ArgumentParser
import CaptureSession
import Client
import JPEG
import V4L2
import VideoCore

struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Capture one JPEG from a camera.",
        discussion: "Opens the camera itself, skips a few frames while exposure settles, and writes the newest frame as a JPEG (atomically: a reader never sees half a file).")

    @Option(name: .shortAndLong, help: "Camera: a path, a /dev/v4l/by-id name, a card name, an index, or testsrc (default: the first camera).")
    var device: String?

    @Option(help: "Frame size, WxH; the nearest size the camera offers is used.")
    var size: String?

    @Option(help: "Pixel format as a FourCC (YUYV, MJPG, NV12, ...); default: MJPG when offered, else YUYV.")
    var format: String?

    @Option(help: "Frame rate to ask for.")
    var fps: Double?

    @Option(help: "JPEG quality, 1 to 100.")
    var quality: Int = FrameEncoder.defaultQuality

    @Option(help: "JPEG chroma: \"4:2:0\" (halved, camd's default) or \"camera\" (as the camera sends it: 4:2:2 for YUYV).")
    var chroma: String?

    @Option(help: "Frames to skip first while auto-exposure settles.")
    var skip: Int = Snapshot.defaultSkip

    @Option(help: "Seconds to wait for a frame before calling the camera stalled.")
    var timeout: Double = 10

    @Option(name: .shortAndLong, help: "Where to write the JPEG; - for standard output.")
    var output: String

    @Argument(help: "Controls to set first, NAME=VALUE (e.g. brightness=140).")
    var controls: [String] = []

    @OptionGroup var daemon: DaemonSelection

    @OptionGroup(title: "Image options (as the API's query parameters)") var image: ImageOptions

    func validate() throws {
        // Checked by the camera settings' declarations, with the words camd.toml and the API use.
        let settings = [("size", size), ("format", format), ("fps", fps.map { String($0) }), ("quality", String(quality)),
                        ("image.chroma", chroma)]
        do throws(SettingError) {
            _ = try CameraSettings.fields(fromArguments: settings.compactMap { key, value in value.map { "\(key)=\($0)" } })
        } catch {
            throw ValidationError(error.key == "image.chroma" ? "--chroma \(error.message)" : error.description)
        }
        guard (0...1000).contains(skip) else { throw ValidationError("--skip must be from 0 to 1000; got \(skip)") }
        guard timeout > 0 else { throw ValidationError("--timeout must be above 0 seconds") }
        _ = try parseAssignments(controls)
    }

    func run() throws {
        if device != FrameSources.syntheticName, controls.isEmpty, let client = daemon.daemon(),
           let id = try DaemonCall.cameraID(client, matching: device) {
            return try fromDaemon(client, camera: id)
        }
        var options = Snapshot.Options(device: device)
        options.request = CaptureRequest(
            format: format.flatMap(PixelFormat.init(parsing:)), size: requestedSize, fps: fps)
        options.quality = quality
        options.skip = skip
        options.frameTimeout = .milliseconds(Int64(timeout * 1000))
        options.controls = try parseAssignments(controls)
        do { options.image = try image.settings() } catch { throw fail(error.description, ExitStatus.usage) }
        if let chroma = chroma.flatMap(JPEGChroma.init(rawValue:)) { options.image.chroma = chroma }

        let result: Snapshot.Result
        do {
            result = try Snapshot.take(options)
        } catch {
            switch error {
            case .device(let deviceError): throw fail(deviceError.message, ExitStatus.code(for: deviceError))
            case .encoding(let encodingError):
                if case .unsupportedFormat = encodingError { throw fail(encodingError.description, ExitStatus.unsupported) }
                throw fail(encodingError.description, ExitStatus.deviceIO)
            case .image(let imageError):
                // A parameter that does not fit this frame (a crop outside it) is the caller's; the rest is the frame's.
                throw fail(imageError.description, imageError.parameter == nil ? ExitStatus.deviceIO : ExitStatus.usage)
            }
        }
        do {
            if output == "-" {
                try StandardOutput.write(result.jpeg)
            } else {
                try AtomicFile.write(result.jpeg, to: output)
            }
        } catch {
            throw fail("\(error)", ExitStatus.outputFailed)
        }
        printError(summary(result))
    }

    /// The newest frame of camd's running stream: no open, no warm-up, no second owner of the device.
    func fromDaemon(_ client: DaemonClient, camera id: String) throws {
        let reply = try DaemonCall.perform(client, "GET", "/v1/cameras/\(id)/snapshot" + (image.isEmpty ? "" : "?" + image.queryString))
        if size != nil || format != nil || fps != nil || quality != FrameEncoder.defaultQuality || chroma != nil {
            printError("camctl: note: camd's camera \(id) keeps its own size, format, rate, quality and chroma; change them with `camctl configure \(id) quality=70 image.chroma=camera`, or use --no-daemon")
        }
        do {
            if output == "-" { try StandardOutput.write(reply.body) } else { try AtomicFile.write(reply.body, to: output) }
        } catch {
            throw fail("\(error)", ExitStatus.outputFailed)
        }
        let frameSize = reply.headers["x-frame-size"] ?? "?"
        let sequence = reply.headers["x-frame-sequence"] ?? "?"
        printError("camd camera \(id) (\(client.socketPath)): \(frameSize), frame #\(sequence), \(reply.body.count) bytes → \(output == "-" ? "standard output" : output)")
    }

    func summary(_ result: Snapshot.Result) -> String {
        let layout = result.configuration.layout
        var text = "\(result.source): \(layout.format) \(layout.size)"
        if let interval = result.configuration.interval { text += " at \(interval)" }
        if let asked = requestedSize, asked != layout.size { text += " (asked \(asked); nearest offered)" }
        if result.size != layout.size {
            text += ", rendered \(result.size) from the \(result.renderedFromRawFrame ? "raw frame's planes" : "camera's JPEG")"
        }
        text += ", skipped \(result.skipped) frame(s)"
        if result.dropped > 0 { text += ", dropped \(result.dropped) broken frame(s)" }
        text += ", frame #\(result.frame.sequence), \(result.jpeg.count) bytes → \(output == "-" ? "standard output" : output)"
        return text
    }

    private var requestedSize: FrameSize? { size.flatMap(FrameSize.init(parsing:)) }
}

/// Parses NAME=VALUE pairs given on the command line.
func parseAssignments(_ items: [String]) throws -> [(name: String, value: String)] {
    try items.map { item in
        guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
            throw ValidationError("controls are NAME=VALUE, such as brightness=140; got \"\(item)\"")
        }
        return (String(item[..<equals]), String(item[item.index(after: equals)...]))
    }
}
