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
