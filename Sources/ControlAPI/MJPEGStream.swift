import CaptureSession
import Hummingbird

/// The live preview: `multipart/x-mixed-replace` with one JPEG per part, as
/// browsers, VLC, ffmpeg and OctoPrint read it.
///
/// Each client reads its own bounded buffer, so a slow client drops frames
/// instead of stalling capture or anyone else. While the camera is waiting for
/// its device the connection stays open and sends nothing; frames resume when
/// the device is back. The stream ends when the camera is stopped.
enum MJPEGStream {
    static let boundary = "camdframe"

    static let headers: HTTPFields = [
        .contentType: "multipart/x-mixed-replace; boundary=\(boundary)",
        .cacheControl: "no-store",
    ]

    static func response(_ frames: AsyncStream<EncodedFrame>, maxFPS: Double?) -> Response {
        Response(status: .ok, headers: headers, body: ResponseBody { writer in
            var thinner = FrameThinner(fps: maxFPS)
            for await frame in frames where thinner.admits(frame.monotonicTime) {
                try await writer.write(Self.part(frame))
            }
            try await writer.finish(nil)
        })
    }

    /// One part of the stream: the frame's stream copy (with the configured overlay, if any).
    static func part(_ frame: EncodedFrame) -> ByteBuffer {
        let jpeg = frame.jpegForStream
        var part = ByteBuffer()
        part.writeString("--\(boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n")
        part.writeString("X-Frame-Sequence: \(frame.sequence)\r\nX-Capture-Time: \(frame.captureTime)\r\n\r\n")
        part.writeBytes(jpeg)
        part.writeString("\r\n")
        return part
    }
}
