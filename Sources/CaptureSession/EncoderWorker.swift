import Foundation
import JPEG
import VideoCore

/// The thread that encodes the newest raw frame whenever someone wants one.
/// The capture thread never waits for it: if encoding is slower than capture,
/// frames in between are skipped and consumers get the freshest.
final class EncoderWorker: Sendable {
    private let hub: FrameHub
    private let quality: Int
    private let id: String
    private let epoch: UInt64
    /// Where the stream overlay comes from (`stream_overlay` in `[camera.image]`).
    private let image: ImageSettings

    /// `epoch` is the hub's run this encoder serves; it exits when the hub moves on.
    init(id: String, hub: FrameHub, quality: Int, epoch: UInt64, image: ImageSettings = ImageSettings()) {
        self.id = id
        self.epoch = epoch
        self.hub = hub
        self.quality = quality
        self.image = image
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "camd-encode-\(id)"
        thread.start()
    }

    private func run() {
        guard let encoder = try? FrameEncoder(quality: quality) else { return }
        while let (frame, generation) = hub.nextFrameToEncode(epoch: epoch) {
            let started = ContinuousClock.now
            // The stream overlay is drawn here, once per frame, and only while someone streams.
            let overlay = hub.subscriberCount > 0
                ? image.streamTextOverlay(time: frame.captureTime, camera: id, sequence: UInt64(frame.sequence)) : nil
            let encoded = try? encoder.encode(frame, overlay: overlay)
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            hub.deliver(encoded.map {
                EncodedFrame(jpeg: $0.jpeg, sequence: frame.sequence, captureTime: frame.captureTime,
                             monotonicTime: frame.monotonicTime, size: frame.layout.size, sourceFormat: frame.layout.format,
                             encodeSeconds: frame.layout.format.isJPEG && overlay == nil ? 0 : seconds, streamJPEG: $0.overlaid)
            }, generation: generation, epoch: epoch)
        }
    }
}
