import CaptureSession
import Foundation
import Hummingbird

/// The event log as Server-Sent Events: each event as `id:`, `event:` and one `data:` line of
/// JSON, then a blank line; a `: keep-alive` comment when nothing happened for `keepAlive`.
///
/// Each event is written before the next is read, so a slow client holds only its own
/// subscription's queue; one that falls too far behind gets `dropped` and the stream ends.
enum EventStream {
    static let keepAlive: Duration = .seconds(15)

    static let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]

    /// One line, unlike the rest of the API's JSON: an SSE `data:` line must not break.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func response(_ subscription: EventSubscription, keepAlive: Duration = keepAlive) -> Response {
        Response(status: .ok, headers: headers, body: ResponseBody { writer in
            let ticker = Task {
                while (try? await Task.sleep(for: keepAlive)) != nil { subscription.nudge() }
            }
            defer {
                ticker.cancel()
                subscription.cancel()
            }
            // A first comment sends the headers at once, so a client knows it is subscribed.
            try await writer.write(ByteBuffer(string: ": subscribed\n\n"))
            while let item = await subscription.next() {
                switch item {
                case .event(let event): try await writer.write(try message(event))
                case .nudged: try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                }
            }
            try await writer.finish(nil)
        })
    }

    static func message(_ event: DaemonEvent) throws -> ByteBuffer {
        var buffer = ByteBuffer(string: "id: \(event.id)\nevent: \(event.type.rawValue)\ndata: ")
        buffer.writeBytes(try encoder.encode(event))
        buffer.writeString("\n\n")
        return buffer
    }
}
