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
/// Y'CbCr frames large enough are encoded in strips at once on a `StripRunner`'s
/// threads and joined (`JPEGStrips`). Keeps its buffers between frames. Not
/// thread-safe: one per worker.
public final class FrameEncoder {
    public var quality: Int
    /// How much of the frame's colour resolution the JPEG keeps; MJPEG frames pass through as they come.
    public var chroma: JPEGChroma
    private let encoder: JPEGEncoder
    private let stripRunner: (any StripRunner)?
    /// The compressors of strips 1, 2, ...; strip 0 is `encoder`'s.
    private var stripEncoders: [JPEGEncoder] = []
    /// The frame just converted; left untouched by frames encoded in place (`inPlacePlanes`).
    private(set) var planes = YUVImage()
    private lazy var converter = LibV4LConverter()
    /// Draws stream overlays on frames that were not converted to planes here (MJPEG, RGB).
    private var pipeline: ImagePipeline?

    public static let defaultQuality = 85

    /// Without a `stripRunner`, every frame is encoded whole on the calling thread.
    public init(quality: Int = FrameEncoder.defaultQuality, chroma: JPEGChroma = .camera,
                stripRunner: (any StripRunner)? = nil) throws(JPEGError) {
        self.quality = quality
        self.chroma = chroma
        self.encoder = try JPEGEncoder()
        self.stripRunner = stripRunner
    }

    public func encode(_ frame: Frame) throws(FrameEncodingError) -> [UInt8] {
        try frame.withUnsafeBytes { (bytes) throws(FrameEncodingError) in try encode(bytes, layout: frame.layout) }
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
            return (jpeg, try? compress(planes))
        }
        let jpeg = try encode(frame)
        if pipeline == nil { pipeline = ImagePipeline() }
        return (jpeg, try? pipeline!.jpeg(jpeg: jpeg, geometry: Geometry(), overlay: overlay, quality: quality, chroma: chroma))
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
        guard frame.byteCount >= needed else { throw .shortFrame(expected: needed, got: frame.byteCount) }
        _ = frame.withUnsafeBytes { PlaneConversion.convert($0, layout: frame.layout, into: &planes, chroma: chroma) }
        return true
    }

    private func compressPlanes() throws(FrameEncodingError) -> [UInt8] {
        do { return try compress(planes) } catch { throw .encoder(error) }
    }

    private func compress(_ image: YUVImage) throws(JPEGError) -> [UInt8] {
        let planes = image.planes
        var result: Result<[UInt8], JPEGError> = .failure(JPEGError("no image"))
        image.storage.withUnsafeBytes { storage in
            result = Result { () throws(JPEGError) -> [UInt8] in try compress(planes: storage, planes, size: image.size) }
        }
        return try result.get()
    }

    /// Encodes planes lying in `bytes`: in strips on the runner's threads at once where the
    /// image is large enough for more than one, else whole.
    private func compress(planes bytes: UnsafeRawBufferPointer, _ planes: PlaneConversion.Planes,
                          size: FrameSize) throws(JPEGError) -> [UInt8] {
        let rows = stripRows(size, planes.subsampling)
        guard rows.count > 1 else { return try encoder.compress(planes: bytes, planes, size: size, quality: quality, chroma: chroma) }
        return try compressInStrips(planes: bytes, planes, size: size, rows: rows, converting: nil)
    }

    /// Converts a Y'CbCr frame into `planes` and encodes it; in strips, each strip's rows
    /// are converted on the thread that encodes them, so the conversion is shared out too.
    private func convertAndCompress(_ source: UnsafeRawBufferPointer, layout: FrameLayout) throws(JPEGError) -> [UInt8] {
        guard let subsampling = PlaneConversion.subsampling(for: layout.format, chroma: chroma) else {
            throw JPEGError("no planes for \(layout.format)")
        }
        let rows = stripRows(layout.size, subsampling)
        guard rows.count > 1 else {
            _ = PlaneConversion.convert(source, layout: layout, into: &planes, chroma: chroma)
            return try compress(planes)
        }
        planes.reshape(layout.size, subsampling)
        let target = planes.planes
        var result: Result<[UInt8], JPEGError> = .failure(JPEGError("no image"))
        planes.storage.withUnsafeMutableBufferPointer { storage in
            result = Result { () throws(JPEGError) -> [UInt8] in
                try compressInStrips(planes: UnsafeRawBufferPointer(storage), target, size: layout.size, rows: rows,
                                     converting: (source, layout, storage))
            }
        }
        return try result.get()
    }

    /// The strips a frame of `size` in `subsampling` is cut into on the runner's threads, as
    /// it is encoded (`chroma`): one, whole, without a runner.
    private func stripRows(_ size: FrameSize, _ subsampling: ChromaSubsampling) -> [Range<Int>] {
        guard let stripRunner else { return [0..<size.height] }
        return JPEGStrips.rows(for: size, subsampling: chroma.encoded(subsampling), threads: stripRunner.threads)
    }

    /// Encodes `rows.count` strips at once and joins them; where `converting` is given, each
    /// strip first converts its rows of the source frame into the planes in `bytes`.
    private func compressInStrips(planes bytes: UnsafeRawBufferPointer, _ planes: PlaneConversion.Planes, size: FrameSize,
                                  rows: [Range<Int>], converting: StripJob.Conversion?) throws(JPEGError) -> [UInt8] {
        guard let stripRunner else { return try encoder.compress(planes: bytes, planes, size: size, quality: quality, chroma: chroma) }
        while stripEncoders.count < rows.count - 1, let strip = try? JPEGEncoder() { stripEncoders.append(strip) }
        guard stripEncoders.count >= rows.count - 1 else {  // TurboJPEG could not make another compressor
            return try encoder.compress(planes: bytes, planes, size: size, quality: quality, chroma: chroma)
        }
        let job = StripJob(bytes: bytes, planes: planes, size: size, rows: rows, quality: quality, chroma: chroma,
                           encoders: [encoder] + stripEncoders.prefix(rows.count - 1), converting: converting)
        stripRunner.run(rows.count) { job.encode($0) }
        if let joined = job.joined() { return joined }
        // A strip failed, or the strips cannot be joined: encode whole, and say its error if it fails too.
        return try encoder.compress(planes: bytes, planes, size: size, quality: quality, chroma: chroma)
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
                    return try compress(planes: bytes, inPlace, size: layout.size)
                }
                return try convertAndCompress(bytes, layout: layout)
            }
            if let rgb = Self.rgbLayout(layout.format) {
                return try encoder.compress(rgb: bytes, layout: rgb, size: layout.size, pitch: layout.bytesPerLine, quality: quality,
                                            chroma: chroma)
            }
            let quality = self.quality, chroma = self.chroma, encoder = self.encoder
            if let converter, let jpeg = try converter.withRGB(bytes, layout: layout, { (rgb) throws(JPEGError) -> [UInt8] in
                try encoder.compress(rgb: rgb, layout: .rgb, size: layout.size, pitch: 0, quality: quality, chroma: chroma)
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

/// One frame's strips, each encoded by its own compressor on whichever thread the runner
/// gives it, and joined once all are done.
private final class StripJob: @unchecked Sendable {  // strip i touches only results[i] and encoders[i]; the runner returns after all
    let bytes: UnsafeRawBufferPointer
    let planes: PlaneConversion.Planes
    let size: FrameSize
    let rows: [Range<Int>]
    let quality: Int
    let chroma: JPEGChroma
    let encoders: [JPEGEncoder]
    /// A frame to convert into the planes in `bytes`, strip by strip, before encoding them.
    typealias Conversion = (source: UnsafeRawBufferPointer, layout: FrameLayout, target: UnsafeMutableBufferPointer<UInt8>)
    let converting: Conversion?
    /// Not an array: strips store into it from several threads at once.
    private let results: UnsafeMutableBufferPointer<[UInt8]?>

    init(bytes: UnsafeRawBufferPointer, planes: PlaneConversion.Planes, size: FrameSize, rows: [Range<Int>], quality: Int,
         chroma: JPEGChroma, encoders: [JPEGEncoder], converting: Conversion?) {
        (self.bytes, self.planes, self.size, self.rows, self.quality, self.chroma) = (bytes, planes, size, rows, quality, chroma)
        (self.encoders, self.converting) = (encoders, converting)
        results = .allocate(capacity: rows.count)
        results.initialize(repeating: nil)
    }

    deinit {
        results.deinitialize()
        results.deallocate()
    }

    func encode(_ strip: Int) {
        if let converting {
            PlaneConversion.convert(converting.source, layout: converting.layout, rows: rows[strip], into: converting.target,
                                    chroma: chroma)
        }
        let jpeg = try? encoders[strip].compress(planes: bytes, planes, size: size, rows: rows[strip], quality: quality, chroma: chroma)
        results[strip] = jpeg
    }

    func joined() -> [UInt8]? {
        let strips = results.compactMap { $0 }
        guard strips.count == rows.count else { return nil }
        return JPEGStrips.join(strips, rows: rows, size: size, subsampling: chroma.encoded(planes.subsampling))
    }
}
