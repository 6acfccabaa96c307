import JPEG
import V4L2
import VideoCore

/// Takes one JPEG from a camera opened for the purpose, as `camctl snapshot`
/// does when no daemon runs: open, configure, skip warm-up frames, capture, encode.
public enum Snapshot {
    public struct Options: Sendable {
        /// A camera selector (see `DeviceDiscovery.resolve`), "testsrc", or nil for the first camera.
        public var device: String?
        public var request = CaptureRequest()
        public var quality = FrameEncoder.defaultQuality
        /// Frames to throw away first, while auto-exposure and white balance settle.
        public var skip = Snapshot.defaultSkip
        /// How long to wait for any one frame before calling the device stalled.
        public var frameTimeout: Duration = .seconds(10)
        public var controls: [(name: String, value: String)] = []

        public init(device: String? = nil) { self.device = device }
    }

    public static let defaultSkip = 5

    /// What was captured and how.
    public struct Result: Sendable {
        public var jpeg: [UInt8]
        public var source: String
        /// The camera's own name (V4L2's card name), as the EXIF Make and Model carry it.
        public var card: String
        public var configuration: CaptureConfiguration
        public var skipped: Int
        /// Broken frames the camera sent that were dropped (truncated JPEGs and the like).
        public var dropped: Int
        public var frame: FrameInfo
    }

    /// The captured frame's identity, without its pixels.
    public struct FrameInfo: Sendable {
        public var sequence: UInt32
        public var captureTime: Double
    }

    /// Why a snapshot failed: the device, or the frames it sent.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        case device(DeviceError)
        case encoding(FrameEncodingError)

        public var description: String {
            switch self {
            case .device(let error): return error.description
            case .encoding(let error): return error.description
            }
        }
    }

    /// Broken frames tolerated in a row before the snapshot gives up.
    static let brokenFrameLimit = 10

    public static func take(_ options: Options) throws(Failure) -> Result {
        let source: any FrameSource
        do { source = try FrameSources.open(options.device, request: options.request, controls: options.controls) }
        catch { throw .device(error) }
        defer { source.stop() }
        let encoder: FrameEncoder
        do { encoder = try FrameEncoder(quality: options.quality) } catch { throw .encoding(.encoder(error)) }

        do {
            // Warm-up frames go back to the driver unread: no copy of pixels nobody keeps.
            for _ in 0..<options.skip { _ = try source.skipFrame(timeout: options.frameTimeout) }
        } catch { throw .device(error) }
        var dropped = 0
        while true {
            let frame: Frame
            do { frame = try source.nextFrame(timeout: options.frameTimeout) } catch { throw .device(error) }
            do {
                let jpeg = try encoder.encode(frame)
                let exif = EXIF(captureTime: frame.captureTime, make: source.cardName, model: source.cardName,
                                pixelWidth: frame.layout.size.width, pixelHeight: frame.layout.size.height)
                return Result(jpeg: exif.inserted(into: jpeg), source: source.name, card: source.cardName, configuration: source.configuration,
                              skipped: options.skip, dropped: dropped,
                              frame: FrameInfo(sequence: frame.sequence, captureTime: frame.captureTime))
            } catch {
                guard case .brokenFrame = error, dropped < brokenFrameLimit else { throw .encoding(error) }
                dropped += 1
            }
        }
    }
}
