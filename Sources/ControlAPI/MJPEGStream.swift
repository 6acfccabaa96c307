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

    static func response(_ frames: AsyncStream<EncodedFrame>, maxFPS: Double?) -> Response {
        let minimumGap = maxFPS.map { 1 / $0 } ?? 0
        let headers: HTTPFields = [
            .contentType: "multipart/x-mixed-replace; boundary=\(boundary)",
            .cacheControl: "no-store",
        ]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            var lastSent = -Double.infinity
            for await frame in frames {
                // Thinning: skip frames that come sooner than the asked rate allows (with 10% slack).
                if frame.monotonicTime - lastSent < minimumGap * 0.9 { continue }
                lastSent = frame.monotonicTime
                var part = ByteBuffer()
                part.writeString("--\(boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(frame.jpeg.count)\r\n")
                part.writeString("X-Frame-Sequence: \(frame.sequence)\r\nX-Capture-Time: \(frame.captureTime)\r\n\r\n")
                part.writeBytes(frame.jpeg)
                part.writeString("\r\n")
                try await writer.write(part)
            }
            try await writer.finish(nil)
        })
    }
}
