/// The capture rate over the last `window` seconds: the frames that arrived in it
/// divided by the time between the first and the last of them.
///
/// Averaging per-frame rates (1 / interval) instead overweights short intervals,
/// so a camera that delivers 30 fps with jittery timestamps would read well above 30.
struct FrameRateMeter: Sendable {
    /// Seconds of frames counted: long enough to smooth jitter, short enough to follow a change.
    static let window = 2.0

    /// CLOCK_MONOTONIC times of the frames in the window, oldest first, from `start` on.
    private var times: [Double] = []
    private var start = 0

    /// Frames per second, or 0 until two frames have arrived.
    private(set) var rate = 0.0

    mutating func record(_ time: Double) {
        // A time that goes back belongs to another run of the clock's owner: start again.
        if let last = times.last, time < last { reset() }
        times.append(time)
        while time - times[start] > Self.window { start += 1 }
        // Drop counted-out times in bulk, so recording stays O(1) on average.
        if start >= 256, start * 2 >= times.count {
            times.removeFirst(start)
            start = 0
        }
        let count = times.count - start
        let span = time - times[start]
        rate = count >= 2 && span > 0 ? Double(count - 1) / span : 0
    }

    mutating func reset() {
        times.removeAll(keepingCapacity: true)
        start = 0
        rate = 0
    }
}
