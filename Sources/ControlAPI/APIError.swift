import APIModel
import CaptureSession
import Foundation
import Hummingbird
import Synchronization
import JPEG

/// An error the API reports as `{"error": {"code": "...", "message": "..."}}` with its status.
public struct APIError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    /// Headers the answer needs besides its JSON body (`Allow` on a 405).
    public var headers: HTTPFields

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let data = try Self.encoder.encode(ErrorBody(code: code, message: message))
        var headers = self.headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers,
                        body: .init(byteBuffer: ByteBuffer(bytes: Array(data) + [0x0A])))
    }

    /// One line, as before: errors are small, and scripts grep them.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func unknownCamera(_ id: String, known: [String]) -> APIError {
        APIError(.notFound, "unknown_camera", "no camera \"\(id)\"; cameras: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
    }

    static func badRequest(_ message: String, code: String = "bad_request") -> APIError {
        APIError(.badRequest, code, message)
    }

    /// The status and code each session failure maps to.
    init(_ error: SessionError) {
        switch error {
        case .notRunning(let text): self.init(.conflict, "not_running", text)
        case .waitingForDevice(let text): self.init(.serviceUnavailable, "waiting_for_device", text)
        case .failed(let text): self.init(.conflict, "camera_failed", text)
        case .timeout(let text): self.init(.gatewayTimeout, "timeout", text)
        case .invalidSettings(let text): self.init(.badRequest, "invalid_settings", text)
        case .shuttingDown: self.init(.serviceUnavailable, "stopping", error.description)
        case .unavailable(let text): self.init(.serviceUnavailable, "video_unavailable", text)
        }
    }
}

extension APIError {
    /// The status each photo failure maps to.
    init(_ error: PhotoError) {
        let status: HTTPResponse.Status
        switch error {
        case .invalidName: status = .badRequest
        case .notFound: status = .notFound
        case .diskFull: status = .init(code: 507, reasonPhrase: "Insufficient Storage")
        case .permissionDenied, .ioFailure: status = .internalServerError
        }
        self.init(status, error.code, error.description)
    }
}

/// Turns every error a route or the router throws into the API's JSON form, so a
/// client never has to parse two kinds of error body.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The routes, to tell a method a path does not take (405) from a path that is not camd's (404).
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as SessionError {
            throw APIError(error)
        } catch let error as PhotoError {
            throw APIError(error)
        } catch let error as TimelapseError {
            throw APIError(error)
        } catch let error as ImageError {
            throw APIError(error)
        } catch let error as HTTPError {
            // A path that is camd's, with a method it does not take, is 405 with the methods it does.
            let allowed = error.status == .notFound ? routes.methods(for: request.uri.path) : []
            if !allowed.isEmpty {
                throw APIError(.methodNotAllowed, "method_not_allowed",
                               "\(request.uri.path) takes \(allowed.joined(separator: ", ")), not \(request.method)",
                               headers: [.allow: allowed.joined(separator: ", ")])
            }
            let code = error.status == .notFound ? "not_found" : error.status == .contentTooLarge ? "too_large" : "http_\(error.status.code)"
            var message = error.body ?? error.status.reasonPhrase
            if error.status == .notFound { message = "no such endpoint: \(request.method) \(request.uri.path); see docs/api.md" }
            if error.status == .contentTooLarge { message = "request body too large (the limit is \(JSONBody.limit) bytes)" }
            throw APIError(error.status, code, message)
        }
    }
}

/// Answers HEAD's errors as GET's (status, Content-Type, Content-Length of the JSON
/// body) without the body. NIO would drop the bytes on the wire anyway; doing it here
/// keeps the router's answer exact for every caller, tests included.
struct HeadErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .head else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            return try error.response(from: request, context: context).createHeadResponse()
        }
    }
}

/// The API's routes by path pattern and method, filled once the router has its routes.
final class RouteTable: Sendable {
    private let patterns = Mutex<[(segments: [Substring], methods: [String])]>([])

    /// Takes the router's routes; `{name}` segments match any one segment.
    func fill<Context>(from router: Router<Context>) {
        var byPath: [String: Set<String>] = [:]
        for route in router.routes { byPath[route.path.description, default: []].insert(route.method.rawValue) }
        // Every GET route answers HEAD too (Router's autoGenerateHeadEndpoints).
        for (path, methods) in byPath where methods.contains("GET") { byPath[path]?.insert("HEAD") }
        patterns.withLock { patterns in
            patterns = byPath.map { path, methods in
                (path.split(separator: "/"), methods.sorted())
            }
        }
    }

    /// The methods the path takes, sorted; empty when no route has this path. A path that
    /// fits several patterns takes the one with the most literal segments, as the router
    /// does (`/v1/photos/contact-sheet` over `/v1/photos/{name}`).
    func methods(for path: String) -> [String] {
        let segments = path.split(separator: "/")
        return patterns.withLock { patterns in
            patterns.filter { pattern in
                pattern.segments.count == segments.count
                    && zip(pattern.segments, segments).allSatisfy { $0.first == "{" || $0 == $1 }
            }.max { a, b in a.segments.filter { $0.first != "{" }.count < b.segments.filter { $0.first != "{" }.count }?.methods ?? []
        }
    }
}
