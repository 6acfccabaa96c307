import VideoCore

/// Why a frame could not become a JPEG.
public enum FrameEncodingError: Error, CustomStringConvertible, Sendable {
    /// A JPEG frame from the camera is broken (truncated, no image data): drop it.
    case brokenFrame(JPEGValidation.Problem)
    /// Fewer bytes than the layout needs.
    case shortFrame(expected: Int, got: Int)
    case unsupportedFormat(PixelFormat)
    case encoder(JPEGError)

    public var description: String {
        switch self {
        case .brokenFrame(let problem): return "broken JPEG frame from the camera: \(problem)"
        case .shortFrame(let expected, let got): return "frame too short: \(got) bytes, \(expected) expected"
        case .unsupportedFormat(let format): return "camd cannot encode pixel format \(format); choose another with --format (see `camctl devices`)"
        case .encoder(let error): return error.description
        }
    }
}

/// Turns one captured frame into a JPEG by the cheapest correct path:
/// - MJPEG/JPEG: validated and passed through, never re-encoded;
/// - Y'CbCr formats: converted to full-range planes and encoded as planes; planar
///   frames already in full range are encoded where they lie, without a copy;
/// - packed RGB: encoded directly;
/// - anything else libv4lconvert knows: converted to RGB first.
///
/// Keeps its buffers between frames. Not thread-safe: one per worker.
public final class FrameEncoder {
    public var quality: Int
    private let encoder: JPEGEncoder
    /// The frame just converted; left untouched by frames encoded in place (`inPlacePlanes`).
    private(set) var planes = YUVImage()
    private lazy var converter = LibV4LConverter()
    /// Draws stream overlays on frames that were not converted to planes here (MJPEG, RGB).
    private var pipeline: ImagePipeline?

    public static let defaultQuality = 85

    public init(quality: Int = FrameEncoder.defaultQuality) throws(JPEGError) {
        self.quality = quality
        self.encoder = try JPEGEncoder()
    }

    public func encode(_ frame: Frame) throws(FrameEncodingError) -> [UInt8] {
        var result: Result<[UInt8], FrameEncodingError> = .failure(.unsupportedFormat(frame.layout.format))
        frame.bytes.withUnsafeBytes { bytes in
            do throws(FrameEncodingError) { result = .success(try encode(bytes, layout: frame.layout)) }
            catch { result = .failure(error) }
        }
        return try result.get()
    }

    /// Encodes `frame`, and with an `overlay` also a copy with the text drawn in: the live
    /// stream's picture, made once per frame for every stream client while the plain JPEG
    /// stays for snapshots. Y'CbCr frames reuse the planes just converted; other formats
    /// decode the JPEG just made. `overlaid` is nil without an overlay or when drawing failed.
    public func encode(_ frame: Frame, overlay: TextOverlay?) throws(FrameEncodingError) -> (jpeg: [UInt8], overlaid: [UInt8]?) {
        guard let overlay else { return (try encode(frame), nil) }
        // Converted even where the encoder could read the frame's own planes: the overlay is drawn on these.
        if try convertPlanes(frame) {
            let jpeg = try compressPlanes()
            overlay.draw(into: &planes)
            return (jpeg, try? encoder.compress(planes, quality: quality))
        }
        let jpeg = try encode(frame)
        if pipeline == nil { pipeline = ImagePipeline() }
        return (jpeg, try? pipeline!.jpeg(jpeg: jpeg, geometry: Geometry(), overlay: overlay, quality: quality))
    }

    /// Only the live stream's picture: `frame` with `overlay` drawn in, for a frame nobody
    /// wants as captured. A Y'CbCr frame is converted, drawn on and encoded once; other
    /// formats are encoded (or passed through) first, as `encode(_:overlay:)` does.
    public func encodeOverlaid(_ frame: Frame, overlay: TextOverlay) throws(FrameEncodingError) -> [UInt8] {
        guard try convertPlanes(frame) else {
            let (jpeg, overlaid) = try encode(frame, overlay: overlay)
            return overlaid ?? jpeg
        }
        overlay.draw(into: &planes)
        return try compressPlanes()
    }

    /// Converts a Y'CbCr frame into `planes` (full range) and returns true; false for
    /// formats that are not Y'CbCr. A frame too short for its layout is refused.
    private func convertPlanes(_ frame: Frame) throws(FrameEncodingError) -> Bool {
        guard !frame.layout.format.isJPEG, let needed = PlaneConversion.requiredBytes(frame.layout) else { return false }
        guard frame.bytes.count >= needed else { throw .shortFrame(expected: needed, got: frame.bytes.count) }
        _ = frame.bytes.withUnsafeBytes { PlaneConversion.convert($0, layout: frame.layout, into: &planes) }
        return true
    }

    private func compressPlanes() throws(FrameEncodingError) -> [UInt8] {
        do { return try encoder.compress(planes, quality: quality) } catch { throw .encoder(error) }
    }

    public func encode(_ bytes: UnsafeRawBufferPointer, layout: FrameLayout) throws(FrameEncodingError) -> [UInt8] {
        do {
            if layout.format.isJPEG {
                switch JPEGValidation.validate(bytes) {
                case .success(let jpeg): return jpeg
                case .failure(let problem): throw FrameEncodingError.brokenFrame(problem)
                }
            }
            if let needed = PlaneConversion.requiredBytes(layout) {
                guard bytes.count >= needed else { throw FrameEncodingError.shortFrame(expected: needed, got: bytes.count) }
                if let inPlace = PlaneConversion.inPlacePlanes(layout) {
                    return try encoder.compress(planes: bytes, inPlace, size: layout.size, quality: quality)
                }
                _ = PlaneConversion.convert(bytes, layout: layout, into: &planes)
                return try encoder.compress(planes, quality: quality)
            }
            if let rgb = Self.rgbLayout(layout.format) {
                return try encoder.compress(rgb: bytes, layout: rgb, size: layout.size, pitch: layout.bytesPerLine, quality: quality)
            }
            let quality = self.quality, encoder = self.encoder
            if let converter, let jpeg = try converter.withRGB(bytes, layout: layout, { (rgb) throws(JPEGError) -> [UInt8] in
                try encoder.compress(rgb: rgb, layout: .rgb, size: layout.size, pitch: 0, quality: quality)
            }) {
                return jpeg
            }
            throw FrameEncodingError.unsupportedFormat(layout.format)
        } catch let error as FrameEncodingError {
            throw error
        } catch let error as JPEGError {
            throw .encoder(error)
        } catch {
            throw .encoder(JPEGError("\(error)"))
        }
    }

    static func rgbLayout(_ format: PixelFormat) -> JPEGEncoder.RGBLayout? {
        switch format {
        case .rgb24: return .rgb
        case .bgr24: return .bgr
        case .xbgr32: return .bgrx
        case .xrgb32: return .xrgb
        default: return nil
        }
    }
}
