/// A frame interval as V4L2 states it: `numerator/denominator` seconds per frame.
public struct FrameInterval: Hashable, Sendable, CustomStringConvertible {
    public var numerator: UInt32
    public var denominator: UInt32

    public init(numerator: UInt32, denominator: UInt32) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// The interval for a rate in frames per second (30 fps → 1/30 s).
    public init(fps: Double) {
        if fps == fps.rounded(), fps >= 1 {
            self.init(numerator: 1, denominator: UInt32(fps))
        } else {
            self.init(numerator: 1000, denominator: UInt32((fps * 1000).rounded()))
        }
    }

    public var fps: Double {
        numerator == 0 ? 0 : Double(denominator) / Double(numerator)
    }

    public var seconds: Double {
        denominator == 0 ? 0 : Double(numerator) / Double(denominator)
    }

    public var description: String {
        let value = fps
        return value == value.rounded() ? "\(Int(value)) fps" : "\((value * 100).rounded() / 100) fps"
    }
}
