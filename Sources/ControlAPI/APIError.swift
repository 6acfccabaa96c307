import APIModel
import CaptureSession
import Foundation
import Hummingbird
import JPEG

/// An error the API reports as `{"error": {"code": "...", "message": "..."}}` with its status.
public struct APIError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let data = try Self.encoder.encode(ErrorBody(code: code, message: message))
        return Response(status: status, headers: [.contentType: "application/json"],
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
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as SessionError {
            throw APIError(error)
        } catch let error as PhotoError {
            throw APIError(error)
        } catch let error as ImageError {
            throw APIError(error)
        } catch let error as HTTPError {
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
