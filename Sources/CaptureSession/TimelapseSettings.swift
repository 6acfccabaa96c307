import VideoCore

/// How a timelapse movie is made: its frame rate and picture size. The one place their
/// rules live; the API and camctl pass the values on and report these errors.
public struct TimelapseSettings: Sendable, Hashable {
    /// Frames a second: photo i is shown at i / fps seconds.
    public var fps: Double
    /// The picture size; nil takes the first photo's, as it is shown (see `size(forFirstPhoto:)`).
    public var size: FrameSize?

    public static let defaultFPS = 25.0
    /// The lowest frame rate accepted: a photo every 100 s, a slide show; below it the
    /// timestamps of a long movie would leave the 90 kHz clock's range.
    public static let minimumFPS = 0.01
    /// The highest frame rate accepted; players and encoders handle more, people watching do not.
    public static let maximumFPS = 120.0
    /// Each side of the picture, in pixels: H.264 in 4:2:0 needs even sides, and 4096 keeps
    /// one picture and the encoder's reference frames within a small board's memory.
    public static let sides = 16...4096

    /// Checks both values; the error names the field at fault.
    public init(fps: Double = TimelapseSettings.defaultFPS, size: FrameSize? = nil) throws(TimelapseError) {
        guard fps.isFinite, fps >= Self.minimumFPS, fps <= Self.maximumFPS else {
            throw .invalidParameter(name: "fps", message: "fps must be a number from \(Self.minimumFPS) to \(Int(Self.maximumFPS)) (frames a second); got \(Self.format(fps))")
        }
        if let size {
            guard Self.sides.contains(size.width), Self.sides.contains(size.height) else {
                throw .invalidParameter(name: "size", message: "size \(size) is out of range: each side must be \(Self.sides.lowerBound) to \(Self.sides.upperBound) pixels")
            }
            guard size.width % 2 == 0, size.height % 2 == 0 else {
                throw .invalidParameter(name: "size", message: "size \(size) has an odd side; H.264 needs an even width and height, such as \(size.width & ~1)x\(size.height & ~1)")
            }
        }
        self.fps = fps
        self.size = size
    }

    /// Reads "WIDTHxHEIGHT" as the `size` field, checked as `init` checks it.
    public static func size(parsing text: String) throws(TimelapseError) -> FrameSize {
        guard text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "x" || $0 == "X") }), let size = FrameSize(parsing: text) else {
            throw .invalidParameter(name: "size", message: "size must be WIDTHxHEIGHT in pixels, such as 1280x720; got \"\(text)\"")
        }
        _ = try TimelapseSettings(size: size)
        return size
    }

    /// The size a movie takes when none was asked for: the first photo's as shown (its
    /// EXIF turn applied), each side rounded down to even, and shrunk, aspect kept, to
    /// fit `sides` when the photo is larger.
    public static func size(forFirstPhoto shown: FrameSize) -> FrameSize {
        let largest = Double(sides.upperBound)
        let shrink = min(1, largest / Double(max(shown.width, 1)), largest / Double(max(shown.height, 1)))
        func side(_ value: Int) -> Int {
            let scaled = Int((Double(value) * shrink).rounded(.down)) & ~1
            return min(max(scaled, sides.lowerBound), sides.upperBound)
        }
        return FrameSize(width: side(shown.width), height: side(shown.height))
    }

    private static func format(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
