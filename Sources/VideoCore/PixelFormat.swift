/// A V4L2 pixel format, named by its four-character code ("YUYV", "MJPG").
///
/// The raw value is the little-endian FourCC the kernel uses
/// (the C macro is `v4l2_fourcc(a, b, c, d)`).
public struct PixelFormat: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// A format from its four-character code; nil unless exactly four ASCII characters.
    public init?(fourCC: String) {
        let bytes = Array(fourCC.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return nil }
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    /// Parses what a user types: a FourCC of up to four characters, padded with
    /// spaces ("Y10" → "Y10 "), or "MJPEG" for "MJPG". Case matters ("YU12").
    public init?(parsing text: String) {
        if text.uppercased() == "MJPEG" { self = .mjpeg; return }
        guard (1...4).contains(text.utf8.count) else { return nil }
        self.init(fourCC: text + String(repeating: " ", count: 4 - text.utf8.count))
    }

    /// The four-character code, trailing spaces kept ("Y10 " stays four long).
    public var fourCC: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> ($0 * 8)) }
        return String(decoding: bytes.map { (0x20..<0x7f).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    public var description: String { fourCC.trimmingTrailingSpaces }

    private init(_ code: StaticString) {
        self.init(fourCC: code.description)!
    }

    public static let yuyv = PixelFormat("YUYV")
    public static let uyvy = PixelFormat("UYVY")
    public static let yvyu = PixelFormat("YVYU")
    public static let vyuy = PixelFormat("VYUY")
    public static let nv12 = PixelFormat("NV12")
    public static let nv21 = PixelFormat("NV21")
    public static let nv16 = PixelFormat("NV16")
    public static let nv61 = PixelFormat("NV61")
    /// Planar 4:2:0, Y then U then V (`V4L2_PIX_FMT_YUV420`).
    public static let yuv420 = PixelFormat("YU12")
    /// Planar 4:2:0, Y then V then U (`V4L2_PIX_FMT_YVU420`).
    public static let yvu420 = PixelFormat("YV12")
    /// Planar 4:2:2 (`V4L2_PIX_FMT_YUV422P`).
    public static let yuv422p = PixelFormat("422P")
    public static let grey = PixelFormat("GREY")
    public static let rgb24 = PixelFormat("RGB3")
    public static let bgr24 = PixelFormat("BGR3")
    /// 32-bit BGRA in memory (`V4L2_PIX_FMT_XBGR32`: B, G, R, X).
    public static let xbgr32 = PixelFormat("XR24")
    /// 32-bit XRGB (`V4L2_PIX_FMT_XRGB32`): X, R, G, B in memory.
    public static let xrgb32 = PixelFormat("BX24")
    public static let mjpeg = PixelFormat("MJPG")
    public static let jpeg = PixelFormat("JPEG")

    /// Compressed formats carry a JPEG per frame rather than pixels.
    public var isJPEG: Bool { self == .mjpeg || self == .jpeg }
}

extension String {
    var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
