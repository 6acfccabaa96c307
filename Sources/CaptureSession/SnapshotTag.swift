import JPEG

/// What a camera's snapshots say in their EXIF beside the frame's own time and size: the
/// camera's name (Make and Model) and where it stands (the GPS IFD).
public struct SnapshotTag: Hashable, Sendable {
    public var card: String?
    public var location: EXIF.GPSPosition?
}

/// A snapshot's JPEG with its EXIF, and the tag the EXIF was written from.
public struct TaggedJPEG: Sendable {
    public var tag: SnapshotTag
    public var jpeg: [UInt8]
}
