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

    /// `epoch` is the hub's run this encoder serves; it exits when the hub moves on.
    init(id: String, hub: FrameHub, quality: Int, epoch: UInt64) {
        self.id = id
        self.epoch = epoch
        self.hub = hub
        self.quality = quality
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
            let jpeg = try? encoder.encode(frame)
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            hub.deliver(jpeg.map {
                EncodedFrame(jpeg: $0, sequence: frame.sequence, captureTime: frame.captureTime,
                             monotonicTime: frame.monotonicTime, size: frame.layout.size,
                             sourceFormat: frame.layout.format, encodeSeconds: frame.layout.format.isJPEG ? 0 : seconds)
            }, generation: generation, epoch: epoch)
        }
    }
}
