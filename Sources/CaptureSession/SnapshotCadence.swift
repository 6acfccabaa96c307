/// When the next snapshot request will come, learned from the last few: the clients that
/// poll a camera (Home Assistant's still image, OctoPrint's and Moonraker's timelapses, a
/// dashboard, a script under `watch`) ask at a steady period, so the JPEG of the newest
/// frame can be made just before the request is due rather than after it arrives.
///
/// A poll is followed through other requests of the same camera (a timelapse photo, a
/// photo saved, a script's snapshot): one that falls between two of the poll's requests
/// leaves the poll as it was, and a poll is learned from requests among which others
/// came, as long as five of them are a period apart; three in a row whose two gaps agree
/// closely (a client on a timer) are a poll too, learned two requests sooner; and the first
/// two after a rest are taken for a client that has just started, so its third request finds
/// its JPEG made, unless it does not come a period after the second (then the two were no
/// poll). A request a little early is another client's, not the poll's. A faster poll that
/// starts takes over from a slower one; a poll whose client misses a request or two is
/// followed at its next one, and one that misses three (or its first) is learned again.
/// Requests that come together (several clients at once) count as one. Clients that ask at
/// no steady period give no prediction, and snapshots are encoded when asked.
struct SnapshotCadence: Sendable {
    /// The times (CLOCK_MONOTONIC seconds) of the last requests, oldest first.
    private(set) var times: [Double] = []
    /// The poll followed: when its last request came, the gaps between its recent ones, and
    /// how many of its requests came where it put them since it was learned.
    private var poll: (last: Double, gaps: [Double], kept: Int)? {
        didSet { period = poll.map { Self.median($0.gaps) } }
    }
    /// The period of the poll followed: the median of its recent gaps. Kept, not worked out
    /// each time it is asked: every snapshot request asks it two or three times.
    private(set) var period: Double?
    /// Polls learned so far: moves each time a poll is learned, afresh or taking over, so that
    /// what is measured for the poll followed (`FrameHub`'s encodes made for it) starts anew.
    private(set) var learned = 0

    /// Requests remembered, the poll's and others' among them.
    static let remembered = 16
    /// Periods that must agree before a poll is believed (so five requests), and other
    /// requests that may come among them. Fewer, and requests at random make up polls that
    /// are not there (an encode ahead that nobody takes); more others, and so does a random
    /// client's traffic; more periods, and a poll is learned later. With these, on random
    /// traffic fewer encodes are made for nothing than with the four requests in a row the
    /// learner asked for before, and a poll among other requests is followed (the made-up
    /// traffic of `SnapshotCadenceTests` has the figures).
    static let agreeing = 4
    static let othersAmong = 3
    /// How far a request may stray from where the poll puts it, as a fraction of the period.
    static let tolerance = 0.25
    /// How far apart the gaps of the requests a poll is learned from may be, as a fraction of
    /// the period: closer than it may then stray, so that a poll and another client's requests
    /// among its own do not make up a period neither has (a poll every 0.5 s and a request
    /// 0.2 s after some of them agree on 0.7 s within 25%).
    static let learning = 0.1
    /// How far apart the two gaps of three requests in a row may be, as a fraction of the
    /// period, for them to be a poll without the five: a client on a timer (Home Assistant,
    /// a timelapse, a script's loop) keeps its gaps within milliseconds, and requests at random
    /// rarely agree this closely (about once in a hundred requests for gaps of 0.2-0.8 s, each
    /// an encode made ahead for nothing; `SnapshotCadenceTests` has the figures). A faster poll
    /// does not take over on three such requests: only on five, as before.
    static let closely = 0.01
    /// Requests of a poll that may be missed in a row (a client busy, a request lost) before
    /// it is learned again: its next request still comes on its period. Only for a poll
    /// whose requests came where it put them `agreeing` times since it was learned: one
    /// made up of random requests would otherwise live on, and its encodes go untaken.
    static let missedAtMost = 2
    /// How long nothing must have been asked before two requests are taken for a client that
    /// has just started polling (`startingPoll`): at least `rest` seconds, and `restPeriods`
    /// times the gap between the two. A client that starts (a dashboard opened, a timelapse
    /// begun) comes after a rest; random traffic seldom leaves one before two requests close
    /// together, and when it does the cost is one encode ahead that nobody takes.
    static let rest = 5.0
    static let restPeriods = 3.0
    /// Requests closer than this came together: one encode answers them all.
    static let together = 0.02
    /// Periods outside this range are not polls worth anticipating.
    static let periods = 0.05...600.0

    /// Notes a request. A request of the poll, or one that teaches it, moves `nextDue`;
    /// another client's leaves it as it was.
    mutating func record(_ time: Double) {
        // Of a fast poll, a request closer to its due time than this counts on its own.
        let together = period.map { min(Self.together, Self.learning * $0 / 2) } ?? Self.together
        if let last = times.last, time - last < together { return }
        times.append(time)
        if times.count > Self.remembered { times.removeFirst(times.count - Self.remembered) }
        if let poll, let period {
            // Requests that agree on a shorter period are a faster poll: that one is followed
            // (else its requests would count as another client's, but for one in a few).
            if let faster = Self.poll(endingWith: times, shorterThan: period - Self.tolerance * period) {
                self.poll = faster
                learned += 1
                return
            }
            // The poll's request: due one period after its last, or two or three when one or two
            // were missed; late by up to `tolerance`, early by up to `learning` only (a client's
            // request a little before the poll's would take its place, and the poll's own then
            // count as another's).
            let periods = ((time - poll.last) / period).rounded()
            let due = poll.last + periods * period
            let reach = poll.kept >= Self.agreeing ? Double(Self.missedAtMost + 1) : 1
            // A poll of two requests after a rest (`startingPoll`) is one when its third comes a
            // period after the second, as closely as three requests on a timer agree; otherwise
            // it is learned afresh.
            let started = poll.gaps.count > 1 || abs(time - poll.last - period) <= Self.closely * period
            if started, (1...reach).contains(periods), time - due <= Self.tolerance * period, due - time <= Self.learning * period {
                let gaps = periods == 1 ? Array((poll.gaps + [time - poll.last]).suffix(Self.agreeing)) : poll.gaps
                self.poll = (time, gaps, poll.kept + 1)
                return
            }
            // Another client's request, between two of the poll's or while one or two were missed.
            if started || periods < 1, periods <= reach { return }
        }
        // No poll, or none of its requests came for too long: learn one afresh.
        poll = Self.poll(endingWith: times) ?? Self.closePoll(endingWith: times) ?? Self.startingPoll(endingWith: times)
        if poll != nil { learned += 1 }
    }

    private static func median(_ gaps: [Double]) -> Double {
        let sorted = gaps.sorted()
        return sorted[sorted.count / 2]
    }

    /// When the poll's next request is due.
    var nextDue: Double? {
        guard let poll, let period else { return nil }
        return poll.last + period
    }

    /// A poll from the last three of `times`, in a row, when their two gaps agree within
    /// `closely` (of a period in `periods`).
    private static func closePoll(endingWith times: [Double]) -> (last: Double, gaps: [Double], kept: Int)? {
        guard times.count >= 3 else { return nil }
        let last = times[times.count - 1], middle = times[times.count - 2], first = times[times.count - 3]
        let gaps = [middle - first, last - middle]
        guard periods.contains(gaps[1]), abs(gaps[1] - gaps[0]) <= closely * gaps[1] else { return nil }
        return (last, gaps, 0)
    }

    /// A poll from the last two of `times` (a period in `periods` apart) when nothing was asked
    /// for `rest` seconds, and `restPeriods` of their gap, before them: a client that has just
    /// started. Its third request confirms it.
    private static func startingPoll(endingWith times: [Double]) -> (last: Double, gaps: [Double], kept: Int)? {
        guard times.count >= 2 else { return nil }
        let last = times[times.count - 1], first = times[times.count - 2], gap = last - first
        guard periods.contains(gap) else { return nil }
        if times.count > 2, first - times[times.count - 3] < max(rest, restPeriods * gap) { return nil }
        return (last, [gap], 0)
    }

    /// A poll whose last request is the newest of `times`: five requests among them, each
    /// a period after the one before within `learning`, with at most `othersAmong` other
    /// requests between them. The shortest such period is taken.
    ///
    /// Written here rather than taken from a library: it is a search over 16 numbers.
    private static func poll(endingWith times: [Double], shorterThan limit: Double = .infinity) -> (last: Double, gaps: [Double], kept: Int)? {
        guard let newest = times.last else { return nil }
        for earlier in times.dropLast().reversed() {
            let period = newest - earlier
            guard period < limit else { break }  // oldest last: the periods only grow
            guard periods.contains(period) else { continue }
            var gaps = [period], cursor = earlier
            while gaps.count < agreeing,
                  let before = times.last(where: { abs(cursor - $0 - period) <= learning * period }) {
                gaps.append(cursor - before)
                cursor = before
            }
            guard gaps.count == agreeing else { continue }
            let others = times.filter { $0 > cursor && $0 < newest }.count - (agreeing - 1)
            if others <= othersAmong { return (newest, gaps.reversed(), 0) }
        }
        return nil
    }
}
