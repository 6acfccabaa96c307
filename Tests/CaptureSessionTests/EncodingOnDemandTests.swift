import CaptureSession
import Foundation
import Testing
import VideoCore

/// JPEG encoding happens only while someone wants frames: a running camera
/// with no consumer captures but does not encode.
@Suite struct EncodingOnDemandTests {
    @Test func aCameraWithNoConsumerDoesNotEncode() async throws {
        let session = CaptureSession(settings: CameraSettings(id: "idle", device: FrameSources.syntheticName,
                                                              size: FrameSize(width: 320, height: 240), fps: 30))
        await session.start()
        let before = await session.status()
        try await Task.sleep(for: .milliseconds(700))
        let idle = await session.status()
        #expect(idle.framesCaptured > before.framesCaptured, "the camera captures while running")
        #expect(idle.framesEncoded == before.framesEncoded, "no consumer, yet \(idle.framesEncoded - before.framesEncoded) frames encoded")

        let stream = try await session.subscribe()
        var received = 0
        for await _ in stream {
            received += 1
            if received == 5 { break }
        }
        let streaming = await session.status()
        #expect(streaming.framesEncoded >= idle.framesEncoded + 5)
        await session.stop()
    }
}
