import JPEG
import VideoCore

/// What a camera's snapshots say in their EXIF beside the frame's own time and size: the
/// camera's name (Make and Model) and where it stands (the GPS IFD).
public struct SnapshotTag: Hashable, Sendable {
    public var card: String?
    public var location: EXIF.GPSPosition?

    /// `jpeg` of a frame of `size` captured at `captureTime`, with the EXIF a snapshot answered
    /// on the event loop carries: the encoder's copy made ahead and the loop's own are the same.
    func tagged(_ jpeg: [UInt8], size: FrameSize, captureTime: Double) -> [UInt8] {
        ImageSettings.tagged(jpeg, size: size, captureTime: captureTime, card: card, location: location, orientation: nil)
    }
}

/// A snapshot's JPEG with its EXIF, and the tag the EXIF was written from.
public struct TaggedJPEG: Sendable {
    public var tag: SnapshotTag
    public var jpeg: [UInt8]
}
