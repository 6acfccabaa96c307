import JPEG
import VideoCore

/// A still of a video: the frame at a time, turned upright as the track's display matrix
/// says, then fitted, cropped or turned further by the same image options as photos.
public enum VideoThumbnail {
    /// The JPEG of the frame at `seconds` of the video at `path`. FFmpeg's H.264 decoder
    /// has no reduced-size decoding (libjpeg-turbo's DCT scaling has no H.264 match), so the
    /// frame is decoded whole and the pipeline's resampler reduces it.
    public static func jpeg(path: String, at seconds: Double, geometry: Geometry, overlay: TextOverlay? = nil,
                            quality: Int, pipeline: ImagePipeline) throws(VideoError) -> [UInt8] {
        let video = try VideoFile(path: path)
        let frame = try video.frame(at: seconds)
        let upright = frame.transformed(orientation(of: video.info))
        do {
            return try pipeline.jpeg(upright, geometry: geometry, overlay: overlay, quality: quality)
        } catch {
            throw VideoError(.unsupportedFormat, "rendering the frame: \(error)")
        }
    }

    /// The EXIF orientation that turns a decoded frame the way the track's matrix turns it.
    public static func orientation(of info: VideoFile.Info) -> EXIF.Orientation {
        EXIF.Orientation(rotation: Geometry.Rotation(rawValue: info.rotate) ?? .upright, flip: info.mirrored ? .horizontal : [])
    }
}
