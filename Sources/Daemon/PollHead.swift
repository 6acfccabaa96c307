import ControlAPI
import NIOCore
import NIOHTTP1

/// The request head of a snapshot poll read from bytes (`PollHeadReader`): a whole `GET` of a
/// target under `/v1/cameras/` in HTTP/1.1, and nothing after it. What it declines (nil), NIO's
/// decoder reads: a head split over reads, requests sent behind it, another method or version,
/// a body's length or chunks, an upgrade, an `Expect`, a `Connection` other than one `close`
/// or `keep-alive`, a line ending in a bare LF, a folded line, a field name with a character
/// outside a token or space before its colon, an empty value or one ending in space, any byte
/// outside printable ASCII (tab between a value's words aside), a target character outside
/// RFC 3986's, and a head longer than the decoder's limit on one field or with as many fields
/// as its limit.
enum PollHead {
    static func read(_ buffer: ByteBuffer, limits: NIOHTTPDecoderLimitConfiguration) -> HTTPRequestHead? {
        guard buffer.readableBytes <= min(limits.maxHeaderFieldSize, limits.maxHeaderListSize) else { return nil }
        return buffer.withUnsafeReadableBytes { read($0, fieldCountLimit: limits.maxHeaderFieldCount) }
    }

    private static let method = Array("GET ".utf8)
    private static let version = Array(" HTTP/1.1\r\n".utf8)
    private static func read(_ bytes: UnsafeRawBufferPointer, fieldCountLimit: Int) -> HTTPRequestHead? {
        let end = bytes.count
        guard end >= 4, bytes[end - 4] == cr, bytes[end - 3] == lf, bytes[end - 2] == cr, bytes[end - 1] == lf,
              bytes.starts(with: method), bytes[method.count...].starts(with: ReadySnapshots.prefixBytes) else { return nil }
        var at = method.count
        while at < end, isTargetByte(bytes[at]) { at += 1 }
        let target = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[method.count..<at]), as: UTF8.self)
        guard bytes[at...].starts(with: version) else { return nil }
        at += version.count
        var fields: [(String, String)] = []
        fields.reserveCapacity(8)
        var connection = false
        while at < end - 2 {
            let nameStart = at
            while at < end, isTokenByte(bytes[at]) { at += 1 }
            let nameEnd = at
            guard nameEnd > nameStart, at < end, bytes[at] == colon else { return nil }
            at += 1
            while at < end, bytes[at] == space || bytes[at] == tab { at += 1 }
            let valueStart = at
            while at < end, isValueByte(bytes[at]) { at += 1 }
            let valueEnd = at
            guard valueEnd > valueStart, bytes[valueEnd - 1] != space, bytes[valueEnd - 1] != tab,
                  at + 1 < end, bytes[at] == cr, bytes[at + 1] == lf, fields.count + 1 < fieldCountLimit else { return nil }
            at += 2
            let name = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<nameEnd])
            let value = UnsafeRawBufferPointer(rebasing: bytes[valueStart..<valueEnd])
            if declined.contains(where: { equalIgnoringCase(name, $0) }) { return nil }
            if equalIgnoringCase(name, connectionName) {
                guard !connection, equalIgnoringCase(value, closeValue) || equalIgnoringCase(value, keepAliveValue) else { return nil }
                connection = true
            }
            fields.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        guard at == end - 2 else { return nil }
        return HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: HTTPHeaders(fields))
    }

    private static let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n"), colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
    /// Fields that give a request a body, an upgrade or an interim answer: the decoder's to read.
    private static let declined = ["content-length", "transfer-encoding", "upgrade", "expect"].map { Array($0.utf8) }
    private static let connectionName = Array("connection".utf8)
    private static let closeValue = Array("close".utf8), keepAliveValue = Array("keep-alive".utf8)

    private static func isTargetByte(_ byte: UInt8) -> Bool { classes[Int(byte)] & target != 0 }
    private static func isTokenByte(_ byte: UInt8) -> Bool { classes[Int(byte)] & token != 0 }
    private static func isValueByte(_ byte: UInt8) -> Bool { classes[Int(byte)] & value != 0 }

    private static let target: UInt8 = 1, token: UInt8 = 2, value: UInt8 = 4
    /// Each byte's classes, looked up once a byte: a target's characters (RFC 3986's unreserved,
    /// sub-delims, `:`, `@`, `/`, `?` and `%`), a field name's (RFC 9110's `tchar`) and a value's
    /// (printable ASCII, space and tab).
    private static let classes: [UInt8] = (0...255).map { (byte: Int) -> UInt8 in
        let alphanumeric = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        var classes: UInt8 = 0
        if alphanumeric || "-._~!$&'()*+,;=:@/?%".utf8.contains(UInt8(byte)) { classes |= target }
        if alphanumeric || "!#$%&'*+-.^_`|~".utf8.contains(UInt8(byte)) { classes |= token }
        if (0x20...0x7E).contains(byte) || byte == 0x09 { classes |= value }
        return classes
    }

    private static func equalIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercase: [UInt8]) -> Bool {
        bytes.count == lowercase.count && zip(bytes, lowercase).allSatisfy { $0 | 0x20 == $1 }
    }
}
