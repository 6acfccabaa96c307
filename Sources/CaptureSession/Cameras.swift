/// The daemon's cameras by id, fixed for the daemon's lifetime.
public struct Cameras: Sendable {
    public let sessions: [CaptureSession]

    public init(_ sessions: [CaptureSession]) {
        self.sessions = sessions
    }

    public subscript(id: String) -> CaptureSession? {
        sessions.first { $0.id == id }
    }

    public var ids: [String] { sessions.map(\.id) }
}

/// Each camera's recorder, by camera id, sharing the daemon's media library.
public struct Recorders: Sendable {
    public let all: [MovieRecorder]

    public init(cameras: Cameras, photos: PhotoOutput) {
        all = cameras.sessions.map { MovieRecorder(session: $0, output: photos) }
    }

    public subscript(id: String) -> MovieRecorder? {
        all.first { $0.camera == id }
    }
}
