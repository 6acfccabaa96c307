import Foundation
import Hummingbird

/// Reads and writes the API's JSON: snake_case keys, and request bodies checked
/// field by field so a bad value is named in the error.
enum JSONBody {
    /// The largest request body accepted, in bytes.
    static let limit = 64 * 1024

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(bytes: Array(data) + [0x0A])))
    }

    /// The body as a JSON object, or a 400 that says what is wrong with it.
    static func object(_ request: Request, context: CamdRequestContext) async throws -> [String: Any] {
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
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))
        } catch {
            throw APIError.badRequest("the body is not valid JSON: \(error.localizedDescription)", code: "bad_json")
        }
        guard let object = parsed as? [String: Any] else {
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

/// Typed access to one JSON object's fields, with errors that name the field.
struct JSONFields {
    let object: [String: Any]
    let path: String

    init(_ object: [String: Any], path: String = "") {
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
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw wrongType(key, "a string") }
        return text
    }

    func number(_ key: String) throws -> Double? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let number = value as? NSNumber, !isBool(number) else {
            throw wrongType(key, "a number")
        }
        return number.doubleValue
    }

    func integer(_ key: String) throws -> Int? {
        guard let value = try number(key) else { return nil }
        guard value == value.rounded(), abs(value) < 1e15 else { throw wrongType(key, "a whole number") }
        return Int(value)
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let number = value as? NSNumber, isBool(number) else { throw wrongType(key, "true or false") }
        return number.boolValue
    }

    func nested(_ key: String) throws -> JSONFields? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let inner = value as? [String: Any] else { throw wrongType(key, "an object") }
        return JSONFields(inner, path: name(key))
    }

    /// A scalar (string, number or boolean) as text, for control values.
    func scalarText(_ key: String) throws -> String {
        switch object[key] {
        case let text as String: return text
        case let number as NSNumber: return isBool(number) ? (number.boolValue ? "1" : "0") : number.stringValue
        default: throw wrongType(key, "a string, number or boolean")
        }
    }

    /// JSONSerialization gives booleans as NSNumbers of type char; numbers never are.
    private func isBool(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }

    func wrongType(_ key: String, _ expected: String) -> APIError {
        APIError.badRequest("\(name(key)) must be \(expected)", code: "bad_field")
    }

    func invalid(_ key: String, _ message: String) -> APIError {
        APIError.badRequest("\(name(key)) \(message)", code: "bad_field")
    }
}
