/// Thins a stream to at most `fps` frames a second (`?fps=N` on the live stream).
///
/// Each frame is due one interval after the previous one was *due*, not after it
/// was sent: frames come when the encoder finishes them, unevenly, and spacing
/// from the last frame sent would lose a little at every step (5 fps asked of a
/// loaded 25 fps camera came out near 3.5). After a pause (a reconnect) the
/// schedule starts afresh, so no burst makes up for it.
struct FrameThinner {
    let interval: Double
    private var due = -Double.infinity

    /// No thinning when `fps` is nil.
    init(fps: Double?) {
        interval = fps.map { 1 / $0 } ?? 0
    }

    /// Whether the frame captured at `time` (monotonic seconds) is sent.
    mutating func admits(_ time: Double) -> Bool {
        guard interval > 0 else { return true }
        guard time >= due else { return false }
        due = due + interval > time ? due + interval : time + interval
        return true
    }
}
