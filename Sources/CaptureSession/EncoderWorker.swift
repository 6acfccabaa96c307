import Foundation
import JPEG
import VideoCore

/// One of a camera's encoder threads: each takes the newest raw frame no other has
/// taken whenever someone wants JPEGs, with its own TurboJPEG handle, so a pool of
/// them keeps up when one encode is longer than a frame interval. The capture thread
/// never waits for them: frames nobody could take in time are skipped, and the hub
/// delivers in capture order.
final class EncoderWorker: Sendable {
    private let hub: FrameHub
    private let quality: Int
    private let id: String
    private let index: Int
    private let epoch: UInt64
    /// Where the stream overlay comes from (`stream_overlay` in `[camera.image]`).
    private let image: ImageSettings
    /// What a snapshot answered on the event loop would say in its EXIF now (the camera's
    /// `readySnapshot`), nil when none is answered there: a JPEG made ahead of a poll is
    /// tagged with it here, off the loop.
    private let snapshotTag: @Sendable () -> SnapshotTag?

    /// `epoch` is the hub's run this encoder serves; it exits when the hub moves on.
    init(id: String, index: Int = 0, hub: FrameHub, quality: Int, epoch: UInt64, image: ImageSettings = ImageSettings(),
         snapshotTag: @escaping @Sendable () -> SnapshotTag? = { nil }) {
        self.snapshotTag = snapshotTag
        self.id = id
        self.index = index
        self.epoch = epoch
        self.hub = hub
        self.quality = quality
        self.image = image
    }

    func start() {
        WorkerThread.start(name: "camd-enc\(index)-\(id)", niceness: Self.niceness) { [self] in run() }
    }

    /// How much nicer than the rest of camd an encoder thread runs. When the CPU is
    /// saturated (a slow board, `encode_every_frame`, many cameras), the capture thread
    /// and the control API are served first: a snapshot or status request does not queue
    /// behind stream encodes, and the capture thread keeps taking the freshest frame.
    /// Encodes still use every idle cycle.
    static let niceness: Int32 = 5

    private func run() {
        guard let encoder = try? FrameEncoder(quality: quality, chroma: image.chroma, stripRunner: StripPool.shared) else { return }
        while let (frame, generation) = hub.nextFrameToEncode(epoch: epoch, worker: index) {
            let started = ContinuousClock.now
            // The stream overlay is drawn here, once per frame, and only while someone streams.
            let overlay = hub.subscriberCount > 0
                ? image.streamTextOverlay(time: frame.captureTime, camera: id, sequence: UInt64(frame.sequence)) : nil
            // With only stream clients asking, the overlaid copy is the one encode (an MJPEG
            // frame's plain copy costs nothing: it is passed through).
            let overlaidOnly = overlay != nil && !frame.layout.format.isJPEG && !hub.wantsPlainJPEG()
            let encoded: (jpeg: [UInt8], overlaid: [UInt8]?)? = if let overlay, overlaidOnly {
                (try? encoder.encodeOverlaid(frame, overlay: overlay)).map { ($0, nil) }
            } else {
                try? encoder.encode(frame, overlay: overlay)
            }
            // The poll this JPEG is made for is answered on the event loop: its EXIF is written
            // here, where nothing waits on it, and counted in the time the JPEG took to make, so
            // the next one made ahead is started early enough for it too.
            let snapshot = encoded.flatMap { encoded -> TaggedJPEG? in
                guard !overlaidOnly, hub.isMadeAhead(generation), let tag = snapshotTag() else { return nil }
                return TaggedJPEG(tag: tag, jpeg: tag.tagged(encoded.jpeg, size: frame.layout.size, captureTime: frame.captureTime))
            }
            let seconds = (ContinuousClock.now - started).inSeconds
            hub.deliver(encoded.map {
                var made = EncodedFrame(jpeg: $0.jpeg, sequence: frame.sequence, captureTime: frame.captureTime,
                                        monotonicTime: frame.monotonicTime, size: frame.layout.size, sourceFormat: frame.layout.format,
                                        encodeSeconds: frame.layout.format.isJPEG && overlay == nil ? 0 : seconds,
                                        streamJPEG: $0.overlaid, overlaidOnly: overlaidOnly)
                made.snapshot = snapshot
                return made
            }, generation: generation, epoch: epoch)
        }
    }
}
