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
        let buffer = try await checkedBody(request)
        if buffer.readableBytes == 0 { return [] }
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

    /// The body as one of the API's request messages (an empty body as `{}`), or a 400
    /// that names the field at fault: `bad_json` for what is not JSON, `bad_field` for a
    /// field that is missing, unknown or of the wrong type.
    static func decode<Message: Decodable>(_ type: Message.Type, _ request: Request) async throws -> Message {
        let buffer = try await checkedBody(request)
        let bytes = buffer.readableBytes == 0 ? Data("{}".utf8) : Data(buffer.readableBytesView)
        do {
            return try APIJSON.decoder().decode(type, from: bytes)
        } catch let DecodingError.keyNotFound(key, _) {
            throw APIError.badRequest("\(snakeCase(key.stringValue)) is required", code: "bad_field")
        } catch let DecodingError.typeMismatch(_, context) where !context.codingPath.isEmpty {
            throw APIError.badRequest("\(field(context)) has the wrong type: \(context.debugDescription)", code: "bad_field")
        } catch let DecodingError.valueNotFound(_, context) where !context.codingPath.isEmpty {
            throw APIError.badRequest("\(field(context)) must not be null", code: "bad_field")
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw APIError.badRequest(context.debugDescription, code: "bad_field")
        } catch let DecodingError.dataCorrupted(context) {
            let detail = context.underlyingError.map { "\($0)" } ?? context.debugDescription
            throw APIError.badRequest("the body is not valid JSON: \(detail)", code: "bad_json")
        } catch {
            throw APIError.badRequest("the body must be a JSON object: \(error)", code: "bad_json")
        }
    }

    /// The body, at most `limit` bytes, without a trailing comma or a key named twice.
    private static func checkedBody(_ request: Request) async throws -> ByteBuffer {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch {
            throw APIError(.contentTooLarge, "too_large", "request body too large (the limit is \(limit) bytes)")
        }
        switch shapeProblem(in: buffer.readableBytesView) {
        case .trailingComma(let offset)?:
            throw APIError.badRequest("the body is not valid JSON: a trailing comma at byte \(offset) (JSON allows no comma before '}' or ']')",
                                      code: "bad_json")
        case .duplicateKey(let key, let offset)?:
            throw APIError.badRequest("the body names \"\(key)\" twice (again at byte \(offset)); give each field once", code: "bad_json")
        case nil:
            return buffer
        }
    }

    /// The field a decoding error is about, as the body spells it ("frames_total").
    private static func field(_ context: DecodingError.Context) -> String {
        context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? snakeCase($0.stringValue) }.joined(separator: ".")
    }

    /// "framesTotal" as the API spells it: "frames_total" (the decoder turned it the other way).
    private static func snakeCase(_ name: String) -> String {
        name.reduce(into: "") { result, character in
            if character.isUppercase { result += "_" + character.lowercased() } else { result.append(character) }
        }
    }
}

extension JSONBody {
    enum ShapeProblem: Equatable {
        /// A comma followed (after whitespace) by '}' or ']', at this offset.
        case trailingComma(Int)
        /// An object that names a key twice; the offset of the second.
        case duplicateKey(String, Int)
    }

    /// The first trailing comma or duplicate key, outside strings. Foundation's parser on Linux
    /// accepts `{"a": 1,}` and `[1,]`, which JSON does not, and keeps the first of two equal keys,
    /// so `{"quality": 50, "quality": 0}` would quietly apply 50; a client that sends either
    /// should hear so. Written by hand because no JSON parser camd has reports them: one
    /// pass over at most `limit` bytes, before parsing.
    static func shapeProblem(in bytes: some Collection<UInt8>) -> ShapeProblem? {
        // Per open container: nil for an array, else the object's keys and whether a key comes next.
        var containers: [(keys: Set<[UInt8]>, keyNext: Bool)?] = []
        var inString = false, escaped = false
        var string: [UInt8] = [], stringStart = 0
        var comma: Int?
        for (offset, byte) in bytes.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if let top = containers.last, var object = top, object.keyNext {
                        guard object.keys.insert(string).inserted else {
                            return .duplicateKey(String(decoding: string, as: UTF8.self), stringStart)
                        }
                        object.keyNext = false
                        containers[containers.count - 1] = object
                    }
                    continue
                }
                string.append(byte)
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                continue
            case UInt8(ascii: "{"):
                containers.append((keys: [], keyNext: true))
            case UInt8(ascii: "["):
                containers.append(nil)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if let comma { return .trailingComma(comma) }
                if !containers.isEmpty { containers.removeLast() }
            case UInt8(ascii: ","):
                if let top = containers.last, var object = top {
                    object.keyNext = true
                    containers[containers.count - 1] = object
                }
                comma = offset
                continue
            case UInt8(ascii: "\""):
                inString = true
                string.removeAll(keepingCapacity: true)
                stringStart = offset
            default:
                break
            }
            comma = nil
        }
        return nil
    }
}
