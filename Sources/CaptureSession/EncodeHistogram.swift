/// How long frames took to encode, as cumulative buckets (Prometheus' histogram form).
public struct EncodeHistogram: Sendable, Hashable {
    /// Upper bounds in seconds.
    public static let bounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]
    /// Observations at or below each bound (cumulative), same order as `bounds`.
    public private(set) var cumulativeCounts = [Int](repeating: 0, count: EncodeHistogram.bounds.count)
    public private(set) var count = 0
    public private(set) var sum = 0.0

    public init() {}

    mutating func record(_ seconds: Double) {
        count += 1
        sum += seconds
        for (index, bound) in Self.bounds.enumerated() where seconds <= bound { cumulativeCounts[index] += 1 }
    }
}
