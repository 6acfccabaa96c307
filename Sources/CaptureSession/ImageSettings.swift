import JPEG
import Video
import VideoCore

/// How a camera's images come out when a request says nothing else: the config
/// file's `[camera.image]` table. Snapshots and saved photos (POST snapshot,
/// timelapse) start from these; query parameters override them key by key.
public struct ImageSettings: Sendable, Hashable {
    /// Size, fit, crop, rotation, flip, interpolation and padding.
    public var geometry: Geometry
    /// A strftime-style overlay template (`%Y-%m-%d %H:%M:%S {camera}`); nil for no overlay.
    public var overlay: String?
    public var overlayCorner: TextOverlay.Corner
    /// Also draw `overlay` on every frame of the live stream (once per frame, for all clients).
    public var streamOverlay: Bool
    /// How much colour resolution the JPEGs camd encodes keep: 4:2:0 unless the camera's own is asked for.
    public var chroma: JPEGChroma

    /// The longest overlay template accepted, in bytes.
    public static let overlayLimit = 200

    public init(geometry: Geometry = Geometry(), overlay: String? = nil, overlayCorner: TextOverlay.Corner = .bottomLeft,
                streamOverlay: Bool = false, chroma: JPEGChroma = .halved) {
        self.geometry = geometry
        self.overlay = overlay
        self.overlayCorner = overlayCorner
        self.streamOverlay = streamOverlay
        self.chroma = chroma
    }

    /// Whether images are served exactly as captured (no pixels change, no orientation tag).
    public var isIdentity: Bool { !geometry.changesPixels && overlay == nil && geometry.exifOrientation == nil }

    /// The camera's `rotate` and `flip` as a video track's display matrix: players turn the
    /// picture of a recording or live stream, and no pixel is moved.
    public var displayTransform: FragmentedMP4Writer.DisplayTransform {
        FragmentedMP4Writer.DisplayTransform(rotate: geometry.rotate.rawValue, flipHorizontal: geometry.flip.contains(.horizontal),
                                             flipVertical: geometry.flip.contains(.vertical))
    }

    /// The overlay for one frame, its template expanded; nil without a template.
    public func textOverlay(time: Double, camera: String, sequence: UInt64) -> TextOverlay? {
        overlay.map { TextOverlay(template: $0, time: time, camera: camera, sequence: sequence, corner: overlayCorner) }
    }

    /// The overlay the live stream draws, when `streamOverlay` asks for one.
    public func streamTextOverlay(time: Double, camera: String, sequence: UInt64) -> TextOverlay? {
        streamOverlay ? textOverlay(time: time, camera: camera, sequence: sequence) : nil
    }

    /// Renders a captured JPEG (on a `RenderPool` thread) and tags it with EXIF: capture
    /// time, camera, orientation (`rotate=exif`), pixel size and, when given, the GPS position.
    /// Returns the JPEG and its stored pixel size. `keptOrientation` is the source's own
    /// Orientation tag (a saved photo's): the copy keeps it unless `rotate=exif` sets another,
    /// so a viewer turns the copy as it turns the photo.
    public func render(_ jpeg: [UInt8], size: FrameSize, captureTime: Double, camera: String, card: String?,
                       sequence: UInt64, quality: Int, location: EXIF.GPSPosition? = nil,
                       keptOrientation: EXIF.Orientation? = nil) async throws(ImageError) -> (jpeg: [UInt8], size: FrameSize) {
        if isIdentity {
            return (Self.tagged(jpeg, size: size, captureTime: captureTime, card: card, location: location,
                           orientation: keptOrientation), size)
        }
        return try await RenderPool.shared.run { (pipeline) throws(ImageError) -> ([UInt8], FrameSize) in
            try blockingRender(jpeg, size: size, captureTime: captureTime, camera: camera, card: card, sequence: sequence,
                               quality: quality, location: location, keptOrientation: keptOrientation, pipeline: pipeline)
        }
    }

    /// Renders a raw Y'CbCr frame from its planes (on a `RenderPool` thread), box-reduced and
    /// scaled before the encoder, so a thumbnail costs little more than its own size; tagged
    /// as `render` tags.
    public func render(_ frame: Frame, camera: String, card: String?, quality: Int,
                       location: EXIF.GPSPosition? = nil) async throws(ImageError) -> (jpeg: [UInt8], size: FrameSize) {
        try await RenderPool.shared.run { (pipeline) throws(ImageError) -> ([UInt8], FrameSize) in
            try blockingRender(frame, camera: camera, card: card, quality: quality, location: location, pipeline: pipeline)
        }
    }

    /// `render(_:size:...)` on the caller's thread, for a command-line tool that has no
    /// other work to do; `pipeline` may be one the caller keeps.
    public func blockingRender(_ jpeg: [UInt8], size: FrameSize, captureTime: Double, camera: String, card: String?,
                               sequence: UInt64, quality: Int, location: EXIF.GPSPosition? = nil,
                               keptOrientation: EXIF.Orientation? = nil,
                               pipeline: ImagePipeline = ImagePipeline()) throws(ImageError) -> (jpeg: [UInt8], size: FrameSize) {
        var rendered = jpeg
        var outputSize = size
        if !isIdentity {
            let overlay = textOverlay(time: captureTime, camera: camera, sequence: sequence)
            rendered = try pipeline.jpeg(jpeg: jpeg, geometry: geometry, overlay: overlay, quality: quality, chroma: chroma)
            outputSize = try geometry.outputSize(for: pipeline.lastDecode?.fullSize ?? size)
        }
        return (Self.tagged(rendered, size: outputSize, captureTime: captureTime, card: card, location: location,
                       orientation: geometry.exifOrientation ?? keptOrientation), outputSize)
    }

    /// `render(_:camera:...)` of a raw frame on the caller's thread; `pipeline` may be one the caller keeps.
    public func blockingRender(_ frame: Frame, camera: String, card: String?, quality: Int,
                               location: EXIF.GPSPosition? = nil,
                               pipeline: ImagePipeline = ImagePipeline()) throws(ImageError) -> (jpeg: [UInt8], size: FrameSize) {
        let overlay = textOverlay(time: frame.captureTime, camera: camera, sequence: UInt64(frame.sequence))
        let jpeg = try frame.withUnsafeBytes { (bytes) throws(ImageError) in
            try pipeline.jpeg(frame: bytes, layout: frame.layout, geometry: geometry, overlay: overlay, quality: quality,
                              chroma: chroma)
        }
        let size = try geometry.outputSize(for: frame.layout.size)
        return (Self.tagged(jpeg, size: size, captureTime: frame.captureTime, card: card, location: location,
                       orientation: geometry.exifOrientation), size)
    }

    /// EXIF: capture time, camera, pixel size, orientation (`rotate=exif`) and position.
    static func tagged(_ jpeg: [UInt8], size: FrameSize, captureTime: Double, card: String?, location: EXIF.GPSPosition?,
                       orientation: EXIF.Orientation?) -> [UInt8] {
        let known = size.width > 0 && size.height > 0
        var exif = EXIF(captureTime: captureTime, make: card, model: card,
                        pixelWidth: known ? size.width : nil, pixelHeight: known ? size.height : nil)
        exif.orientation = orientation
        exif.gps = location
        return exif.inserted(into: jpeg)
    }
}
