import Synchronization
import VideoCore

/// The hand-off between a timelapse's render thread and the jobs actor: the thread
/// counts photos as it goes and looks for a cancel between photos; the actor reads the
/// counts when asked and sets the cancel. Neither waits for the other.
public final class TimelapseProgress: Sendable {
    /// What the render thread has done so far.
    public struct Counts: Sendable, Hashable {
        /// Photos handled: encoded, or skipped because they could not be read.
        public var done = 0
        /// Photos skipped: deleted since the job started (retention), or not a readable JPEG.
        public var skipped = 0
        /// The movie's picture size, once known (the first photo's when none was asked for).
        public var size: FrameSize?
        /// The encoder that runs, such as "libx264", once open.
        public var encoder: String?

        public init() {}
    }

    private let counts = Mutex(Counts())
    private let cancelRequested = Atomic<Bool>(false)

    public init() {}

    public var current: Counts { counts.withLock { $0 } }

    func update(_ change: (inout Counts) -> Void) {
        counts.withLock { change(&$0) }
    }

    /// Asks the render to stop before its next photo.
    public func cancel() {
        cancelRequested.store(true, ordering: .relaxed)
    }

    public var isCancelled: Bool { cancelRequested.load(ordering: .relaxed) }
}
