import Foundation

/// One Server-Sent Event as it came: its `id:`, `event:` and `data:` fields.
public struct ServerSentEvent: Sendable, Hashable {
    public var id: String?
    public var event: String?
    public var data: String
}

/// Reads an HTTP/1.1 response carrying `text/event-stream`: the head, the chunked coding,
/// then the SSE lines (fields, comments, a blank line ending each event). Fed bytes as they
/// arrive, in any pieces; gives the events that are complete.
public struct ServerSentEventParser: Sendable {
    /// The status line's code once the head is read.
    public private(set) var status: Int?
    /// The response's header fields, names in lower case, once the head is read.
    public private(set) var headers: [String: String] = [:]
    /// Bytes read and not parsed yet.
    private var buffered: [UInt8] = []
    private var chunked = false
    private var headDone = false
    /// Bytes of the current chunk still to come.
    private var chunkLeft = 0
    private var lines: [UInt8] = []
    private var current = ServerSentEvent(data: "")
    private var hasData = false
    /// The body of a response that is not an event stream (an error), as read so far.
    public private(set) var otherBody: [UInt8] = []

    public init() {}

    /// Adds bytes; returns the events they completed.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        buffered.append(contentsOf: bytes)
        if !headDone {
            guard let end = buffered.firstRange(of: [13, 10, 13, 10]) else { return [] }
            let head = String(decoding: buffered[..<end.lowerBound], as: UTF8.self)
            let statusLine = head.split(separator: "\r\n").first ?? ""
            status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            for line in head.split(separator: "\r\n").dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            chunked = head.lowercased().contains("transfer-encoding: chunked")
            buffered.removeSubrange(..<end.upperBound)
            headDone = true
        }
        var body: [UInt8] = []
        if chunked {
            while !buffered.isEmpty {
                if chunkLeft > 0 {
                    let take = min(chunkLeft, buffered.count)
                    body += buffered[..<take]
                    buffered.removeFirst(take)
                    chunkLeft -= take
                    continue
                }
                // Between chunks: the CRLF ending the last one, then a size line.
                if buffered.starts(with: [13, 10]) { buffered.removeFirst(2); continue }
                guard let lineEnd = buffered.firstRange(of: [13, 10]) else { break }
                let sizeText = String(decoding: buffered[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
                buffered.removeSubrange(..<lineEnd.upperBound)
                chunkLeft = Int(sizeText, radix: 16) ?? 0
            }
        } else {
            body = buffered
            buffered.removeAll()
        }
        guard status == 200 else {
            otherBody += body
            return []
        }
        return parseLines(body)
    }

    private mutating func parseLines(_ body: [UInt8]) -> [ServerSentEvent] {
        lines += body
        var events: [ServerSentEvent] = []
        while let newline = lines.firstIndex(of: 10) {
            var line = String(decoding: lines[..<newline], as: UTF8.self)
            lines.removeSubrange(...newline)
            if line.hasSuffix("\r") { line.removeLast() }
            if line.isEmpty {
                if hasData { events.append(current) }
                current = ServerSentEvent(data: "")
                hasData = false
                continue
            }
            if line.hasPrefix(":") { continue }  // a comment: keep-alive
            let field = line.prefix { $0 != ":" }
            var value = line.dropFirst(field.count).dropFirst()
            if value.hasPrefix(" ") { value = value.dropFirst() }
            switch field {
            case "id": current.id = String(value)
            case "event": current.event = String(value)
            case "data":
                current.data += hasData ? "\n" + value : String(value)
                hasData = true
            default: break
            }
        }
        return events
    }
}
