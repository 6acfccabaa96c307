import VideoCore

/// Why an image operation failed, in words for the person who asked.
public enum ImageError: Error, CustomStringConvertible, Sendable, Hashable {
    /// A parameter's value cannot be used; `name` is the query parameter (or config key), so an HTTP layer answers 400.
    case invalidParameter(name: String, message: String)
    /// The input is not an image camd can read (a broken or unsupported JPEG).
    case unreadableImage(String)
    /// TurboJPEG failed to encode the result.
    case encodingFailed(String)
    /// A contact sheet was asked for more photos than `ContactSheet.maximumCells`.
    case tooManyPhotos(count: Int, limit: Int)
    /// A contact sheet was asked for no photos at all.
    case noPhotos

    /// The parameter at fault, when the caller's input is.
    public var parameter: String? {
        if case .invalidParameter(let name, _) = self { return name }
        return nil
    }

    public var description: String {
        switch self {
        case .invalidParameter(_, let message): return message
        case .unreadableImage(let why): return "cannot read the image: \(why)"
        case .encodingFailed(let why): return "cannot encode the image: \(why)"
        case .tooManyPhotos(let count, let limit):
            return "a contact sheet holds at most \(limit) photos; \(count) were selected: narrow since/until"
        case .noPhotos: return "no photos were selected for the contact sheet: widen since/until"
        }
    }
}

/// The one entry point for image operations: crop, scale, rotate, flip, pad
/// (`Geometry`) and a text stamp (`TextOverlay`), all on Y'CbCr planes before
/// the encoder, so a thumbnail costs about what its own size costs to encode.
/// JPEG input is decoded at the smallest DCT scale that still has the pixels
/// the output needs.
///
/// Keeps its scratch images, filter tables, decoder and encoder between calls.
/// Not thread-safe: one per worker, like `FrameEncoder`.
public final class ImagePipeline {
    private let resampler = Resampler()
    /// The scaled picture before it is turned.
    private var unturned = YUVImage()
    /// A JPEG decoded at its DCT scale.
    private var decoded = YUVImage()
    /// `jpeg(...)`'s result before encoding.
    private var rendered = YUVImage()
    private var decoder: JPEGDecoder?
    private var encoder: JPEGEncoder?

    /// The last JPEG decode: its full size, the DCT scale chosen, and the size decoded before resampling.
    public private(set) var lastDecode: JPEGDecoder.ScaledDecode?
    /// The last raw frame's box reduction (1, 2, 4 or 8) before resampling.
    public private(set) var lastReduction: Int?

    public init() {}

    // MARK: Planes in, planes out

    /// Applies `geometry`, then draws `overlay`, into a new image.
    public func render(_ image: YUVImage, geometry: Geometry, overlay: TextOverlay?) throws(ImageError) -> YUVImage {
        var output = YUVImage()
        try render(image, geometry: geometry, overlay: overlay, into: &output)
        return output
    }

    /// Applies `geometry`, then draws `overlay`, into `output`, reusing its storage.
    public func render(_ image: YUVImage, geometry: Geometry, overlay: TextOverlay?, into output: inout YUVImage) throws(ImageError) {
        let layout = try geometry.layout(for: image.size, subsampling: image.subsampling)
        output.reshape(layout.outputSize, layout.subsampling)
        draw(image, layout: layout, into: &output, at: (0, 0))
        overlay?.draw(into: &output)
    }

    /// Decodes a JPEG at the smallest sufficient DCT scale, then renders as `render(_:geometry:overlay:)`.
    public func render(jpeg: [UInt8], geometry: Geometry, overlay: TextOverlay?) throws(ImageError) -> YUVImage {
        var output = YUVImage()
        try render(jpeg: jpeg, geometry: geometry, overlay: overlay, into: &output)
        return output
    }

    /// Decodes a JPEG at the smallest sufficient DCT scale, then renders into `output`.
    public func render(jpeg: [UInt8], geometry: Geometry, overlay: TextOverlay?, into output: inout YUVImage) throws(ImageError) {
        let layout = try decode(jpeg, for: geometry, outputSubsampling: nil)
        output.reshape(layout.outputSize, layout.subsampling)
        draw(decoded, layout: layout, into: &output, at: (0, 0))
        overlay?.draw(into: &output)
    }

    // MARK: To JPEG

    /// Renders and encodes: the snapshot path for Y'CbCr frames.
    public func jpeg(_ image: YUVImage, geometry: Geometry, overlay: TextOverlay?, quality: Int,
                     chroma: JPEGChroma = .camera) throws(ImageError) -> [UInt8] {
        try render(image, geometry: geometry, overlay: overlay, into: &rendered)
        return try encode(rendered, quality: quality, chroma: chroma)
    }

    /// Converts a raw Y'CbCr frame at the largest box reduction (1/2, 1/4, 1/8) that still
    /// holds the pixels `geometry` needs, then renders and encodes: a thumbnail of a YUYV
    /// camera never makes, converts or resamples the full-size image.
    public func jpeg(frame bytes: UnsafeRawBufferPointer, layout frameLayout: FrameLayout, geometry: Geometry,
                     overlay: TextOverlay?, quality: Int, chroma: JPEGChroma = .camera) throws(ImageError) -> [UInt8] {
        guard let subsampling = PlaneConversion.subsampling(for: frameLayout.format),
              let needed = PlaneConversion.requiredBytes(frameLayout), bytes.count >= needed else {
            throw .unreadableImage("a \(frameLayout) frame of \(bytes.count) bytes is short or not Y'CbCr")
        }
        let full = frameLayout.size
        let layout = try geometry.layout(for: full, subsampling: subsampling)
        let factor = PlaneConversion.reduction(for: frameLayout, covering: layout.decodeSize(full: full))
        _ = PlaneConversion.convert(bytes, layout: frameLayout, reducedBy: factor, into: &decoded)
        lastReduction = factor
        let reduced = layout.rescaled(from: full, to: decoded.size)
        rendered.reshape(reduced.outputSize, reduced.subsampling)
        draw(decoded, layout: reduced, into: &rendered, at: (0, 0))
        overlay?.draw(into: &rendered)
        return try encode(rendered, quality: quality, chroma: chroma)
    }

    /// Decodes (scaled), renders and encodes: thumbnails of saved photos and MJPEG frames.
    public func jpeg(jpeg: [UInt8], geometry: Geometry, overlay: TextOverlay?, quality: Int,
                     chroma: JPEGChroma = .camera) throws(ImageError) -> [UInt8] {
        try render(jpeg: jpeg, geometry: geometry, overlay: overlay, into: &rendered)
        return try encode(rendered, quality: quality, chroma: chroma)
    }

    /// Encodes planes with this pipeline's encoder.
    public func encode(_ image: YUVImage, quality: Int, chroma: JPEGChroma = .camera) throws(ImageError) -> [UInt8] {
        do {
            if encoder == nil { encoder = try JPEGEncoder() }
            return try encoder!.compress(image, quality: quality, chroma: chroma)
        } catch {
            throw .encodingFailed(error.description)
        }
    }

    // MARK: Internals shared with ContactSheet

    /// Decodes `jpeg` into `decoded` at the scale `geometry` needs; returns the layout over the decoded image.
    func decode(_ jpeg: [UInt8], for geometry: Geometry, outputSubsampling: ChromaSubsampling?) throws(ImageError) -> Geometry.Layout {
        let full: JPEGDecoder.Header
        do {
            if decoder == nil { decoder = try JPEGDecoder() }
            full = try decoder!.header(jpeg)
        } catch {
            throw .unreadableImage(error.description)
        }
        let layout = try geometry.layout(for: full.size, subsampling: full.subsampling ?? .s444, outputSubsampling: outputSubsampling)
        let result: JPEGDecoder.ScaledDecode
        do {
            result = try decoder!.decode(jpeg, covering: layout.decodeSize(full: full.size), into: &decoded)
        } catch {
            throw .unreadableImage(error.description)
        }
        lastDecode = result
        return layout.rescaled(from: full.size, to: result.size)
    }

    /// Draws `jpeg` rendered with `geometry` into `output` at `origin`, in `output`'s subsampling.
    func draw(jpeg: [UInt8], geometry: Geometry, into output: inout YUVImage, at origin: (x: Int, y: Int)) throws(ImageError) {
        let layout = try decode(jpeg, for: geometry, outputSubsampling: output.subsampling)
        draw(decoded, layout: layout, into: &output, at: origin)
    }

    /// Scales, turns and pads `source` into `output` (already shaped), with the layout's output rectangle at `origin`.
    func draw(_ source: YUVImage, layout: Geometry.Layout, into output: inout YUVImage, at origin: (x: Int, y: Int)) {
        if let pad = layout.pad {
            output.fill(pad, in: Geometry.Rect(x: origin.x, y: origin.y, width: layout.outputSize.width, height: layout.outputSize.height))
        }
        let content = Geometry.Rect(x: origin.x + layout.content.x, y: origin.y + layout.content.y,
                                    width: layout.content.width, height: layout.content.height)
        if layout.orientation == .up {
            resampler.draw(source, region: layout.region, interpolation: layout.interpolation, into: &output, at: content)
        } else {
            unturned.reshape(layout.scaledSize, output.subsampling)
            resampler.draw(source, region: layout.region, interpolation: layout.interpolation, into: &unturned,
                           at: Geometry.Rect(x: 0, y: 0, width: layout.scaledSize.width, height: layout.scaledSize.height))
            unturned.transform(layout.orientation, into: &output, at: (content.x, content.y))
        }
    }
}
