import V4L2
import VideoCore
@testable import CaptureSession

/// The synthetic source's frames at its rate, filled with noise: what a real camera's grain
/// costs H.264 (a megabyte or more a second at 320x240), where the synthetic bars cost kilobytes.
/// A test that needs a client's socket to fill up needs that many bytes.
final class NoiseSource: FrameSource {
    private let synthetic: SyntheticSource
    /// Noise for a few frames; each frame is a window into it at another offset.
    private let noise: [UInt8]

    init(request: CaptureRequest) throws(DeviceError) {
        synthetic = try SyntheticSource(request: request)
        var generator = SystemRandomNumberGenerator()
        noise = (0..<(synthetic.configuration.bufferSize * 2)).map { _ in UInt8.random(in: 16...235, using: &generator) }
    }

    var name: String { "noise (a test source)" }
    var cardName: String { "noise" }
    var configuration: CaptureConfiguration { synthetic.configuration }
    var droppedFrames: Int { 0 }

    func nextFrame(timeout: Duration) throws(DeviceError) -> Frame {
        let frame = try synthetic.nextFrame(timeout: timeout)
        let count = configuration.bufferSize
        let offset = Int(frame.sequence) * 4_099 % (noise.count - count) & ~3
        return Frame(layout: frame.layout, bytes: Array(noise[offset..<(offset + count)]), sequence: frame.sequence,
                     monotonicTime: frame.monotonicTime, captureTime: frame.captureTime)
    }

    func stop() { synthetic.stop() }

    /// `CaptureSession.init(openSource:)`'s opener for it.
    static let opener: CaptureWorker.Opener = { _, request, _ throws(DeviceError) in try NoiseSource(request: request) }
}
