/// Which events a subscriber wants. An event about a camera passes a camera filter only if it
/// is that camera's; events about the whole daemon (disk, reload, gap, dropped) always pass it.
public struct EventFilter: Sendable, Hashable {
    public var camera: String?
    /// nil for every type. `gap` and `dropped` are always sent: they are about the stream itself.
    public var types: Set<EventType>?

    public init(camera: String? = nil, types: Set<EventType>? = nil) {
        self.camera = camera
        self.types = types
    }

    public func matches(_ event: DaemonEvent) -> Bool {
        if event.type == .gap || event.type == .dropped { return true }
        if let types, !types.contains(event.type) { return false }
        if let camera, let eventCamera = event.camera, eventCamera != camera { return false }
        return true
    }
}
