/// A frame's width and height in pixels.
public struct FrameSize: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses "1280x720" (also "1280X720"); nil when malformed or not positive.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }

    public var description: String { "\(width)x\(height)" }
    public var area: Int { width * height }

    /// The longest side camd asks a device for (V4L2 drivers top out well below it);
    /// a larger request is a typo, refused where it is made (API or config).
    public static let largestSide = 16384
    public var isWithinLimits: Bool { width <= Self.largestSide && height <= Self.largestSide }

    public static func < (a: FrameSize, b: FrameSize) -> Bool {
        (a.area, a.width) < (b.area, b.width)
    }

    /// How far `other` is from this size, for choosing the nearest one a device offers.
    /// Compares both dimensions relative to the asked size, so 1280x700 is nearer to
    /// 1280x720 than to 1024x768 and a small miss in width counts as much as one in height.
    public func distance(to other: FrameSize) -> Double {
        let dw = Double(other.width - width) / Double(max(width, 1))
        let dh = Double(other.height - height) / Double(max(height, 1))
        return dw * dw + dh * dh
    }
}
