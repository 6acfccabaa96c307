/// When the next snapshot request will come, learned from the last few: the clients that
/// poll a camera (Home Assistant's still image, OctoPrint's and Moonraker's timelapses, a
/// dashboard, a script under `watch`) ask at a steady period, so the JPEG of the newest
/// frame can be made just before the request is due rather than after it arrives.
///
/// Requests that come together (several clients at once) count as one. Clients that ask at
/// no steady period give no prediction, and snapshots are encoded when asked, as before.
struct SnapshotCadence: Sendable {
    /// The times (CLOCK_MONOTONIC seconds) of the last few requests, oldest first.
    private(set) var times: [Double] = []

    /// Requests remembered: three periods must agree before one is believed.
    static let remembered = 4
    /// How far a period may stray from the median of the last ones, as a fraction of it.
    static let tolerance = 0.25
    /// Requests closer than this came together: one encode answers them all.
    static let together = 0.02
    /// Periods outside this range are not polls worth anticipating.
    static let periods = 0.05...600.0

    mutating func record(_ time: Double) {
        if let last = times.last, time - last < Self.together { return }
        times.append(time)
        if times.count > Self.remembered { times.removeFirst(times.count - Self.remembered) }
    }

    /// The steady period between requests, when the last ones agree on one.
    var period: Double? {
        guard times.count == Self.remembered else { return nil }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.sorted()
        let median = gaps[gaps.count / 2]
        guard Self.periods.contains(median), gaps.allSatisfy({ abs($0 - median) <= Self.tolerance * median }) else { return nil }
        return median
    }

    /// When the next request is due, if the requests come at a steady period.
    var nextDue: Double? {
        guard let period, let last = times.last else { return nil }
        return last + period
    }
}
