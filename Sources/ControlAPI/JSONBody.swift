import APIModel
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

    /// The body as a JSON object, or a 400 that says what is wrong with it.
    static func object(_ request: Request, context: CamdRequestContext) async throws -> [String: JSONValue] {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch {
            throw APIError(.contentTooLarge, "too_large", "request body too large (the limit is \(limit) bytes)")
        }
        if buffer.readableBytes == 0 { return [:] }
        if let offset = trailingComma(in: buffer.readableBytesView) {
            throw APIError.badRequest("the body is not valid JSON: a trailing comma at byte \(offset) (JSON allows no comma before '}' or ']')",
                                      code: "bad_json")
        }
        let parsed: JSONValue
        do {
            parsed = try JSONDecoder().decode(JSONValue.self, from: Data(buffer.readableBytesView))
        } catch let DecodingError.dataCorrupted(context) {
            let detail = context.underlyingError.map { "\($0)" } ?? context.debugDescription
            throw APIError.badRequest("the body is not valid JSON: \(detail)", code: "bad_json")
        } catch {
            throw APIError.badRequest("the body is not valid JSON: \(error)", code: "bad_json")
        }
        guard case .object(let object) = parsed else {
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

/// A JSON value as the request gave it: booleans, whole numbers and other numbers told
/// apart by their JSON type, so a field's checks can name what was sent.
enum JSONValue: Decodable, Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Foundation's decoder is strict about JSON types: `true` is no number, `1` no Bool.
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .integer(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }
}

/// Typed access to one JSON object's fields, with errors that name the field.
struct JSONFields {
    let object: [String: JSONValue]
    let path: String

    init(_ object: [String: JSONValue], path: String = "") {
        self.object = object
        self.path = path
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func rejectUnknown(_ known: Set<String>) throws {
        for key in object.keys.sorted() where !known.contains(key) {
            throw APIError.badRequest("unknown field \"\(name(key))\"; known fields: \(known.sorted().joined(separator: ", "))", code: "bad_field")
        }
    }

    func has(_ key: String) -> Bool { object[key] != nil }

    func string(_ key: String) throws -> String? {
        switch object[key] {
        case nil, .null: return nil
        case .string(let text): return text
        default: throw wrongType(key, "a string")
        }
    }

    func number(_ key: String) throws -> Double? {
        switch object[key] {
        case nil, .null: return nil
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: throw wrongType(key, "a number")
        }
    }

    func integer(_ key: String) throws -> Int? {
        guard let value = try number(key) else { return nil }
        guard value == value.rounded(), abs(value) < 1e15 else { throw wrongType(key, "a whole number") }
        return Int(value)
    }

    func bool(_ key: String) throws -> Bool? {
        switch object[key] {
        case nil, .null: return nil
        case .bool(let value): return value
        default: throw wrongType(key, "true or false")
        }
    }

    func nested(_ key: String) throws -> JSONFields? {
        switch object[key] {
        case nil, .null: return nil
        case .object(let inner): return JSONFields(inner, path: name(key))
        default: throw wrongType(key, "an object")
        }
    }

    /// A scalar (string, number or boolean) as text, for control values.
    func scalarText(_ key: String) throws -> String {
        switch object[key] {
        case .string(let text): return text
        case .integer(let value): return String(value)
        case .number(let value): return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .bool(let value): return value ? "1" : "0"
        default: throw wrongType(key, "a string, number or boolean")
        }
    }

    func wrongType(_ key: String, _ expected: String) -> APIError {
        APIError.badRequest("\(name(key)) must be \(expected)", code: "bad_field")
    }

    func invalid(_ key: String, _ message: String) -> APIError {
        APIError.badRequest("\(name(key)) \(message)", code: "bad_field")
    }
}
