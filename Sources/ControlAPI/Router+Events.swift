import CaptureSession
import Foundation
import HTTPTypes
import Hummingbird

/// `GET /v1/events`: the event log as Server-Sent Events (docs/api.md, Events).
/// `Last-Event-ID` (or `?last_event_id=`) resumes after that event; `?camera=` and
/// `?types=a,b` keep only those.
func addEventRoutes(_ v1: RouterGroup<CamdRequestContext>, _ services: APIServices) {
    v1.get("events") { request, _ in
        let (after, filter) = try eventRequest(request, services)
        return EventStream.response(services.events.subscribe(after: after, filter: filter))
    }
    // The checks and headers, then the end: no subscription, so nothing waits for a client that reads no body.
    v1.head("events") { request, _ in
        _ = try eventRequest(request, services)
        return headOnly(EventStream.headers)
    }
}

/// The request's resume point and filter, or the error that says what is wrong with them.
private func eventRequest(_ request: Request, _ services: APIServices) throws -> (UInt64?, EventFilter) {
    let query = request.uri.queryParameters
    let known: Set<String> = ["camera", "types", "last_event_id"]
    for (key, _) in query where !known.contains(String(key)) {
        throw APIError.badRequest("unknown parameter \"\(key)\"; events takes \(known.sorted().joined(separator: ", "))",
                                  code: "bad_parameter")
    }
    let after = try lastEventID(request.headers[lastEventIDHeader] ?? query.get("last_event_id"))
    var filter = EventFilter()
    if let camera = query.get("camera") {
        guard services.cameras[camera] != nil else { throw APIError.unknownCamera(camera, known: services.cameras.ids) }
        filter.camera = camera
    }
    if let types = query.get("types") {
        filter.types = try eventTypes(types)
    }
    return (after, filter)
}

/// Sent by a browser's EventSource when it reconnects.
private let lastEventIDHeader = HTTPField.Name("Last-Event-ID")!

private func lastEventID(_ text: String?) throws(APIError) -> UInt64? {
    guard let text, !text.isEmpty else { return nil }
    guard let id = UInt64(text) else {
        throw .badRequest("Last-Event-ID \"\(text)\" is not an event id: send the `id:` of the last event received, a whole number",
                          code: "bad_parameter")
    }
    return id
}

private func eventTypes(_ text: String) throws(APIError) -> Set<EventType> {
    var types = Set<EventType>()
    for name in text.split(separator: ",") {
        guard let type = EventType(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
            let names = EventType.allCases.filter { $0 != .gap && $0 != .dropped }.map(\.rawValue).joined(separator: ", ")
            throw .badRequest("types: unknown event type \"\(name)\"; the types are \(names)", code: "bad_parameter")
        }
        types.insert(type)
    }
    return types
}
