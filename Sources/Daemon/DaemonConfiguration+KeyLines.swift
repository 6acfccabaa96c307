import CaptureSession
import JPEG
import TOMLKit
import V4L2
import VideoCore

extension DaemonConfiguration {
    /// The line each key and table header of a TOML text is on, by key path
    /// (`daemon.socket`, `camera[1]`, `camera[1].photos.keep_bytes`).
    ///
    /// TOMLKit does not expose source positions, so this scans the text itself. It understands
    /// comments, all four string forms, arrays, inline tables, dotted and quoted keys, and
    /// `[[array]]` headers. Its limits: it assumes the text is valid TOML (run it after parsing);
    /// a quoted key containing '.' or '[' cannot be looked up; and when a key is not found
    /// (say, one inside an inline table written in an unusual way) `line(of:)` falls back to
    /// the enclosing table's line, or nil.
    struct KeyLines: Sendable {
        private var lineOfPath: [String: Int] = [:]

        init(_ text: String) {
            var scanner = Scanner(bytes: Array(text.utf8))
            scanner.scanDocument()
            lineOfPath = scanner.lineOfPath
        }

        /// The line of `path`, else of the nearest enclosing key or table that has one.
        func line(of path: String) -> Int? {
            var path = Substring(path)
            while !path.isEmpty {
                if let line = lineOfPath[String(path)] { return line }
                if path.hasSuffix("]"), let open = path.lastIndex(of: "[") {
                    path = path[..<open]
                } else if let dot = path.lastIndex(of: ".") {
                    path = path[..<dot]
                } else {
                    return nil
                }
            }
            return nil
        }

        private struct Scanner {
            let bytes: [UInt8]
            var index = 0
            var line = 1
            var lineOfPath: [String: Int] = [:]
            /// How many `[[name]]` headers have been seen, by the header's indexed path.
            var arrayCounts: [String: Int] = [:]

            init(bytes: [UInt8]) { self.bytes = bytes }

            var current: UInt8? { index < bytes.count ? bytes[index] : nil }
            func peek(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }

            mutating func advance() {
                if bytes[index] == UInt8(ascii: "\n") { line += 1 }
                index += 1
            }

            mutating func record(_ path: String, _ line: Int) {
                if lineOfPath[path] == nil { lineOfPath[path] = line }
            }

            mutating func scanDocument() {
                var table = ""
                while current != nil {
                    skipBlank(newlines: true)
                    guard let byte = current else { return }
                    let start = index
                    if byte == UInt8(ascii: "[") {
                        if let path = scanHeader() { table = path }
                    } else {
                        scanKeyValue(prefix: table)
                    }
                    skipToLineEnd()
                    if index == start { advance() }  // never stall on text this scanner does not expect
                }
            }

            /// `[a.b]` or `[[a.b]]`; returns the indexed path ("camera[2].photos").
            mutating func scanHeader() -> String? {
                let headerLine = line
                advance()
                let isArray = current == UInt8(ascii: "[")
                if isArray { advance() }
                guard let keys = scanKey(), current == UInt8(ascii: "]") else { return nil }
                var path = ""
                for (position, key) in keys.enumerated() {
                    path = path.isEmpty ? key : "\(path).\(key)"
                    if isArray && position == keys.count - 1 {
                        let count = arrayCounts[path, default: 0]
                        arrayCounts[path] = count + 1
                        path += "[\(count)]"
                    } else if let count = arrayCounts[path] {
                        path += "[\(count - 1)]"
                    }
                }
                record(path, headerLine)
                return path
            }

            mutating func scanKeyValue(prefix: String) {
                let keyLine = line
                guard let keys = scanKey(), current == UInt8(ascii: "=") else { return }
                advance()
                let path = ([prefix].filter { !$0.isEmpty } + keys).joined(separator: ".")
                record(path, keyLine)
                skipBlank(newlines: false)
                scanValue(path: path)
            }

            /// A dotted key of bare and quoted parts, leaving the scanner after trailing blanks.
            mutating func scanKey() -> [String]? {
                var keys: [String] = []
                while true {
                    skipBlank(newlines: false)
                    guard let byte = current else { return nil }
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        let start = index + 1
                        skipString()
                        let end = max(start, index - 1)
                        keys.append(String(decoding: bytes[start..<end], as: UTF8.self))
                    } else {
                        let start = index
                        while let c = current, isBareKeyByte(c) { advance() }
                        guard index > start else { return nil }
                        keys.append(String(decoding: bytes[start..<index], as: UTF8.self))
                    }
                    skipBlank(newlines: false)
                    guard current == UInt8(ascii: ".") else { return keys }
                    advance()
                }
            }

            mutating func scanValue(path: String) {
                guard let byte = current else { return }
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "'"):
                    skipString()
                case UInt8(ascii: "["):
                    advance()
                    var element = 0
                    while current != nil && current != UInt8(ascii: "]") {
                        skipBlank(newlines: true)
                        guard let c = current, c != UInt8(ascii: "]") else { break }
                        let start = index
                        if c == UInt8(ascii: ",") { advance(); element += 1; continue }
                        scanValue(path: "\(path)[\(element)]")
                        if index == start { advance() }
                    }
                    if current != nil { advance() }
                case UInt8(ascii: "{"):
                    advance()
                    while current != nil && current != UInt8(ascii: "}") {
                        skipBlank(newlines: false)
                        guard let c = current, c != UInt8(ascii: "}") else { break }
                        let start = index
                        if c == UInt8(ascii: ",") { advance(); continue }
                        scanKeyValue(prefix: path)
                        if index == start { advance() }
                    }
                    if current != nil { advance() }
                default:
                    // A number, boolean or date: runs to a separator.
                    while let c = current, !" \t\r\n,]}#".utf8.contains(c) { advance() }
                }
            }

            /// Skips a basic or literal string, single- or multi-line, starting at its opening quote.
            mutating func skipString() {
                let quote = bytes[index]
                let isMultiline = peek(1) == quote && peek(2) == quote
                if isMultiline {
                    advance(); advance(); advance()
                    while current != nil {
                        if quote == UInt8(ascii: "\""), current == UInt8(ascii: "\\") { advance(); if current != nil { advance() }; continue }
                        if current == quote, peek(1) == quote, peek(2) == quote {
                            advance(); advance(); advance()
                            // Up to two more quotes may belong to the content ("""a""""").
                            while current == quote { advance() }
                            return
                        }
                        advance()
                    }
                } else {
                    advance()
                    while let c = current, c != UInt8(ascii: "\n") {
                        if quote == UInt8(ascii: "\""), c == UInt8(ascii: "\\") { advance(); if current != nil { advance() }; continue }
                        advance()
                        if c == quote { return }
                    }
                }
            }

            /// Skips spaces, tabs and comments, and newlines too when asked.
            mutating func skipBlank(newlines: Bool) {
                while let c = current {
                    if c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\r") {
                        advance()
                    } else if c == UInt8(ascii: "#") {
                        skipToLineEnd()
                    } else if newlines && c == UInt8(ascii: "\n") {
                        advance()
                    } else {
                        return
                    }
                }
            }

            mutating func skipToLineEnd() {
                while current != nil && current != UInt8(ascii: "\n") { advance() }
            }

            func isBareKeyByte(_ c: UInt8) -> Bool {
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F
            }
        }
    }
}
