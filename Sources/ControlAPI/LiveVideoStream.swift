import CaptureSession
import Hummingbird

/// The live H.264 as one fragmented MP4 over HTTP: the init segment, then a fragment per
/// frame as it is encoded, for as long as the client reads. ffmpeg, mpv, VLC, GStreamer
/// and a browser's Media Source play it; its `Content-Type` carries the codec string.
///
/// The fragments of every frame the client was sent are written at once, so a client that
/// fell a little behind catches up in one write. One that falls far behind loses its queue
/// and goes on from the next keyframe (`LiveVideoClient`).
enum LiveVideoStream {
    /// How long a new client waits for its first keyframe before the answer is an error.
    static let startTimeout: Duration = .seconds(15)

    static func headers(contentType: String) -> HTTPFields {
        [.contentType: contentType, .cacheControl: "no-store"]
    }

    static func response(_ client: LiveVideoClient, start: LiveStreamStart) -> Response {
        Response(status: .ok, headers: headers(contentType: start.contentType), body: ResponseBody { writer in
            defer { client.finish() }
            try await writer.write(ByteBuffer(bytes: start.initSegment))
            for await fragments in client {
                var buffer = ByteBuffer()
                buffer.reserveCapacity(fragments.reduce(0) { $0 + $1.bytes.count })
                for fragment in fragments { buffer.writeBytes(fragment.bytes) }
                try await writer.write(buffer)
            }
            try await writer.finish(nil)
        })
    }
}
