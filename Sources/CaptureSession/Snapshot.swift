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
        /// Size, crop, rotation, overlay: applied to the raw frame's planes before the one
        /// encode when the camera sends Y'CbCr, to a DCT-scaled decode when it sends JPEG.
        public var image = ImageSettings()

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
        /// The size of `jpeg` (the camera's size, unless `image` changed it).
        public var size: FrameSize
        /// `image` was applied to the raw frame's planes: the frame was encoded once.
        public var renderedFromRawFrame: Bool
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
        /// `image` could not be applied (a crop outside the frame, say).
        case image(ImageError)

        public var description: String {
            switch self {
            case .device(let error): return error.description
            case .encoding(let error): return error.description
            case .image(let error): return error.description
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
        do {
            encoder = try FrameEncoder(quality: options.quality, chroma: options.image.chroma, stripRunner: StripPool.shared)
        } catch { throw .encoding(.encoder(error)) }

        do {
            // Warm-up frames go back to the driver unread: no copy of pixels nobody keeps.
            for _ in 0..<options.skip { _ = try source.skipFrame(timeout: options.frameTimeout) }
        } catch { throw .device(error) }
        var dropped = 0
        // What the overlay's {camera} shows: "/dev/video0", "testsrc".
        let camera = source.name.split(separator: " ").first.map(String.init) ?? source.name
        let pipeline = ImagePipeline()
        while true {
            let frame: Frame
            do { frame = try source.nextFrame(timeout: options.frameTimeout) } catch { throw .device(error) }
            let info = FrameInfo(sequence: frame.sequence, captureTime: frame.captureTime)
            func result(_ rendered: (jpeg: [UInt8], size: FrameSize), fromRaw: Bool) -> Result {
                Result(jpeg: rendered.jpeg, source: source.name, card: source.cardName, configuration: source.configuration,
                       skipped: options.skip, dropped: dropped, frame: info, size: rendered.size, renderedFromRawFrame: fromRaw)
            }
            if !options.image.isIdentity, PlaneConversion.subsampling(for: frame.layout.format) != nil {
                do {
                    return result(try options.image.blockingRender(frame, camera: camera, card: source.cardName,
                                                                   quality: options.quality, pipeline: pipeline), fromRaw: true)
                } catch { throw .image(error) }
            }
            let jpeg: [UInt8]
            do { jpeg = try encoder.encode(frame) } catch {
                guard case .brokenFrame = error, dropped < brokenFrameLimit else { throw .encoding(error) }
                dropped += 1
                continue
            }
            do {
                // As captured, only tagged; otherwise (an MJPEG camera) rendered from a DCT-scaled decode.
                return result(try options.image.blockingRender(jpeg, size: frame.layout.size, captureTime: frame.captureTime,
                                                               camera: camera, card: source.cardName,
                                                               sequence: UInt64(frame.sequence), quality: options.quality,
                                                               pipeline: pipeline), fromRaw: false)
            } catch { throw .image(error) }
        }
    }
}
