import CLibCamera
import V4L2
import VideoCore

/// One pixel format a libcamera camera offers for its stream, with its sizes.
public struct LibCameraFormat: Sendable, Hashable {
    /// libcamera's name ("RGB888").
    public var name: String
    /// libcamera's format: a DRM fourcc ("RG24" for RGB888).
    public var drmFourCC: UInt32
    /// camd's name for the same memory layout (V4L2's), nil where camd has none.
    public var format: PixelFormat?
    public var sizes: FrameSizes

    init(_ c: clibcamera_format) {
        name = cString(c.name)
        drmFourCC = c.fourcc
        format = c.modifier == 0 ? Self.pixelFormat(drm: c.fourcc) : nil
        let discrete = withUnsafeBytes(of: c.sizes) { raw in
            raw.bindMemory(to: UInt32.self).prefix(Int(c.size_count) * 2)
        }
        if c.h_step > 0, c.v_step > 0, c.min_width < c.max_width || c.min_height < c.max_height {
            sizes = .stepwise(min: FrameSize(width: Int(c.min_width), height: Int(c.min_height)),
                              max: FrameSize(width: Int(c.max_width), height: Int(c.max_height)),
                              step: FrameSize(width: Int(c.h_step), height: Int(c.v_step)))
        } else {
            sizes = .discrete(stride(from: 0, to: discrete.count, by: 2).map {
                FrameSize(width: Int(discrete[$0]), height: Int(discrete[$0 + 1]))
            })
        }
    }

    /// libcamera names formats by DRM fourcc, camd (like V4L2) by V4L2 fourcc; where the
    /// two differ the bytes are the same and only the names disagree: DRM's RGB888 is
    /// stored B, G, R (V4L2's BGR24), and DRM's BGR888 is V4L2's RGB24.
    static let drmToV4L2: [(drm: String, format: PixelFormat)] = [
        ("RG24", .bgr24), ("BG24", .rgb24), ("XR24", .xbgr32),
        ("YUYV", .yuyv), ("UYVY", .uyvy), ("YVYU", .yvyu), ("VYUY", .vyuy),
        ("NV12", .nv12), ("NV21", .nv21), ("NV16", .nv16), ("NV61", .nv61),
        ("YU12", .yuv420), ("YV12", .yvu420), ("YU16", .yuv422p),
        ("R8  ", .grey), ("MJPG", .mjpeg),
    ]

    static func pixelFormat(drm fourcc: UInt32) -> PixelFormat? {
        drmToV4L2.first { PixelFormat(fourCC: $0.drm)!.rawValue == fourcc }?.format
    }

    static func drmFourCC(_ format: PixelFormat) -> UInt32? {
        drmToV4L2.first { $0.format == format }.map { PixelFormat(fourCC: $0.drm)!.rawValue }
    }

    /// "BGR3 (libcamera RGB888)".
    public var description: String {
        "\(format?.description ?? "?") (libcamera \(name))"
    }
}
