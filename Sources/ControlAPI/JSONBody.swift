import APIModel
import CaptureSession
import Foundation
import Hummingbird

/// Reads and writes the API's JSON: snake_case keys, and request bodies checked
/// field by field so a bad value is named in the error.
enum JSONBody {
    /// The largest request body accepted, in bytes.
    static let limit = 64 * 1024

    static let encoder = APIJSON.encoder()

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(bytes: Array(data) + [0x0A])))
    }

    /// The body's JSON object, its fields as the settings' declarations read them, or a
    /// 400 that says what is wrong with it.
    static func object(_ request: Request, context: CamdRequestContext) async throws -> [(key: String, value: SettingValue)] {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch {
            throw APIError(.contentTooLarge, "too_large", "request body too large (the limit is \(limit) bytes)")
        }
        if buffer.readableBytes == 0 { return [] }
        if let offset = trailingComma(in: buffer.readableBytesView) {
            throw APIError.badRequest("the body is not valid JSON: a trailing comma at byte \(offset) (JSON allows no comma before '}' or ']')",
                                      code: "bad_json")
        }
        let parsed: SettingValue
        do {
            parsed = try JSONDecoder().decode(SettingValue.self, from: Data(buffer.readableBytesView))
        } catch let DecodingError.dataCorrupted(context) {
            let detail = context.underlyingError.map { "\($0)" } ?? context.debugDescription
            throw APIError.badRequest("the body is not valid JSON: \(detail)", code: "bad_json")
        } catch {
            throw APIError.badRequest("the body is not valid JSON: \(error)", code: "bad_json")
        }
        guard case .table(let object) = parsed else {
            throw APIError.badRequest("the body must be a JSON object", code: "bad_json")
        }
        return object
    }
}

extension JSONBody {
    /// The offset of a comma followed (after whitespace) by '}' or ']', outside strings.
    /// Foundation's parser on Linux accepts `{"a": 1,}` and `[1,]`; JSON does not, and a
    /// client that sends them should hear so rather than find out elsewhere. One pass
    /// over at most `limit` bytes, done before parsing.
    static func trailingComma(in bytes: some Collection<UInt8>) -> Int? {
        var inString = false, escaped = false
        var comma: Int?
        for (offset, byte) in bytes.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                continue
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if let comma { return comma }
            case UInt8(ascii: ","):
                comma = offset
                continue
            case UInt8(ascii: "\""):
                inString = true
            default:
                break
            }
            comma = nil
        }
        return nil
    }
}
