import ControlAPI
import HTTPTypes
import NIOHTTP1

/// A poll's fields read where they are, unconverted (`ReadySnapshots.answer`): as `HTTPFields`
/// reads the fields `HTTPFields(head.headers, splitCookie: false)` makes of them.
struct UnconvertedFields: RequestFields {
    let headers: HTTPHeaders

    subscript(_ name: HTTPField.Name) -> String? {
        let values = headers[name.rawName]
        return values.isEmpty ? nil : values.joined(separator: name == .cookie ? "; " : ", ")
    }

    subscript(values name: HTTPField.Name) -> [String] {
        headers[name.rawName]
    }
}
