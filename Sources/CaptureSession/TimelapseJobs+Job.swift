import VideoCore

extension TimelapseJobs {
    /// One timelapse movie job as it stands: what was asked, how far it got, and how it ended.
    public struct Job: Sendable, Hashable, Identifiable {
        public enum State: String, Sendable, Hashable, Codable, CaseIterable {
            /// Waiting for the jobs before it (one renders at a time).
            case queued
            case running
            /// The movie is in the media library under `movie.name`.
            case done
            /// Stopped by an error (`error` says which); no file was left.
            case failed
            /// Stopped on request; no file was left.
            case cancelled

            public var isFinished: Bool { self == .done || self == .failed || self == .cancelled }
        }

        public var id: String
        public var camera: String
        /// The range asked for, in seconds since 1970: `since` inclusive, `until` exclusive; nil is open.
        public var since: Double?
        public var until: Double?
        public var fps: Double
        /// The size asked for; when none was, the movie's once its first photo was read.
        public var size: FrameSize?
        public var state: State
        /// Photos handled (encoded or skipped) and photos in the range when the job was made.
        public var framesDone: Int
        public var framesTotal: Int
        /// Photos that could not be read (deleted by retention meanwhile, or broken): not in the movie.
        public var framesSkipped: Int
        /// The H.264 encoder that runs, such as "libx264", once open.
        public var encoder: String?
        /// The finished movie in the media library, when `done`.
        public var movie: PhotoRecord?
        /// What went wrong and what to do, when `failed`.
        public var error: String?
        /// Seconds since 1970.
        public var createdAt: Double
        public var startedAt: Double?
        public var finishedAt: Double?
    }
}
