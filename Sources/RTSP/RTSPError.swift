/// Why the RTSP server could not start, said so that the reader knows what to change.
public struct RTSPError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
