import JPEG
import VideoCore

/// A snapshot with a camera's image settings applied (size, crop, rotation, overlay, EXIF).
public struct RenderedSnapshot: Sendable {
    public var jpeg: [UInt8]
    /// The size of `jpeg`.
    public var size: FrameSize
    /// The size the camera captured.
    public var frameSize: FrameSize
    public var sequence: UInt32
    /// Wall-clock capture time, seconds since 1970.
    public var captureTime: Double
    /// Rendered from the camera's raw frame, so no full-size JPEG was made for it.
    public var fromRawFrame: Bool
}

extension CaptureSession {
    /// The newest frame rendered with `image`, by the cheapest path:
    /// - as captured: the shared encoded frame, tagged with EXIF;
    /// - from a camera sending Y'CbCr (YUYV, NV12...): the raw frame's planes, scaled
    ///   before the encoder, so a thumbnail costs about its own size to encode and no
    ///   full-size JPEG is made when nobody streams;
    /// - from an MJPEG camera: its JPEG decoded at the smallest sufficient DCT scale.
    ///
    /// Throws `SessionError` when there is no frame, `ImageError` when the image cannot be made.
    public nonisolated func renderedSnapshot(_ image: ImageSettings, maxAge: Double? = nil,
                                             quality: Int, location: EXIF.GPSPosition? = nil) async throws -> RenderedSnapshot {
        if !image.isIdentity, let frame = try await rawSnapshot(maxAge: maxAge) {
            let card = await self.card
            let (jpeg, size) = try await image.render(frame, camera: id, card: card, quality: quality, location: location)
            return RenderedSnapshot(jpeg: jpeg, size: size, frameSize: frame.layout.size, sequence: frame.sequence,
                                    captureTime: frame.captureTime, fromRawFrame: true)
        }
        let frame = try await snapshot(maxAge: maxAge)
        let card = await self.card
        let (jpeg, size) = try await image.render(frame.jpeg, size: frame.size, captureTime: frame.captureTime, camera: id,
                                                  card: card, sequence: UInt64(frame.sequence), quality: quality, location: location)
        return RenderedSnapshot(jpeg: jpeg, size: size, frameSize: frame.size, sequence: frame.sequence,
                                captureTime: frame.captureTime, fromRawFrame: false)
    }
}
