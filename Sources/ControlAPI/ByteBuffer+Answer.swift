import CaptureSession
import HTTPTypes
import NIOCore

extension ByteBuffer {
    /// Room for an answer's head: the status line and a snapshot's fields are about 300 bytes.
    public static let answerHeadCapacity = 512

    /// Writes `response`'s head as HTTP/1.1 bytes; true when the body follows (not after 1xx,
    /// 204 and 304, which have none). The bytes are those NIO's `HTTPResponseEncoder` writes for
    /// the same response converted to its types (`HTTPResponseHead(response)`, always HTTP/1.1),
    /// but that a head without a `Content-Length` gets one of `bodyLength` where NIO would send
    /// the body chunked.
    ///
    /// Written by hand because an answer here has one shape, a status, a few fields and a body
    /// of known length, and the encoder's pass (the fields converted to `HTTPHeaders`, the
    /// framing worked out, three writes through the pipeline) was a tenth of a poll's
    /// instructions. The head is measured, then copied in with one write: written piece by piece
    /// (`writeString`, about 280 instructions each) it cost 11,000 instructions a poll. Swift HTTP
    /// Types has already turned any CR, LF or NUL in a field's value into a space.
    public mutating func writeAnswerHead(_ response: HTTPResponse, bodyLength: Int) -> Bool {
        let code = response.status.code
        let reason = response.status.reasonPhrase
        let mayHaveBody = !(code < 200 || code == 204 || code == 304)
        var size = "HTTP/1.1 200 \r\n\r\n".utf8.count + reason.utf8.count
        var hasLength = false
        for field in response.headerFields where mayHaveBody || field.name != .contentLength {
            if field.name == .contentLength { hasLength = true }
            size += field.name.rawName.utf8.count + ": \r\n".utf8.count + field.withUnsafeBytesOfValue(\.count)
        }
        let length = mayHaveBody && !hasLength ? String(bodyLength) : nil
        if let length { size += "Content-Length: \r\n".utf8.count + length.utf8.count }
        writeWithUnsafeMutableBytes(minimumWritableBytes: size) { buffer in
            var head = HeadBytes(buffer: buffer)
            head.append("HTTP/1.1 ")
            head.append(byte: UInt8(ascii: "0") + UInt8(code / 100 % 10))
            head.append(byte: UInt8(ascii: "0") + UInt8(code / 10 % 10))
            head.append(byte: UInt8(ascii: "0") + UInt8(code % 10))
            head.append(" ")
            head.append(reason)
            head.append("\r\n")
            for field in response.headerFields where mayHaveBody || field.name != .contentLength {
                head.append(field.name.rawName)
                head.append(": ")
                field.withUnsafeBytesOfValue { head.append(UnsafeRawBufferPointer($0)) }
                head.append("\r\n")
            }
            if let length {
                head.append("Content-Length: ")
                head.append(length)
                head.append("\r\n")
            }
            head.append("\r\n")
            return head.count
        }
        return mayHaveBody
    }

    /// Writes the answer to a snapshot poll, head and JPEG: what `writeAnswerHead` writes for
    /// `HTTPResponse(status: .ok, headerFields: snapshotHeaders(shot))` with a `Content-Length`
    /// (the router's answer), then the JPEG. The fields are those of `snapshotHeaders`, written
    /// a second time here as bytes because this is the answer of every poll a JPEG made ahead
    /// answers: building the fields (each checked, and inserted into `HTTPFields`) and then
    /// writing them took 14,000 of a poll's 173,000 instructions. `AnswerHeadTests` holds the
    /// two to the same bytes.
    public mutating func writeSnapshotAnswer(_ shot: RenderedSnapshot) {
        writeWithUnsafeMutableBytes(minimumWritableBytes: Self.answerHeadCapacity) { buffer in
            var head = HeadBytes(buffer: buffer)
            head.append("HTTP/1.1 200 OK\r\nX-Capture-Time: ")
            head.append(seconds: shot.captureTime)
            head.append("\r\nX-Frame-Sequence: ")
            head.append(decimal: UInt64(shot.sequence))
            head.append("\r\nX-Frame-Size: ")
            head.append(decimal: UInt64(clamping: shot.frameSize.width))
            head.append("x")
            head.append(decimal: UInt64(clamping: shot.frameSize.height))
            head.append("\r\nContent-Type: image/jpeg\r\nCache-Control: no-store\r\nContent-Length: ")
            head.append(decimal: UInt64(shot.jpeg.count))
            head.append("\r\n\r\n")
            return head.count
        }
        writeBytes(shot.jpeg)
    }
}

/// Copies an answer's head into the room measured or reserved for it (`writeAnswerHead`,
/// `writeSnapshotAnswer`), and stops the program rather than write past it.
private struct HeadBytes {
    let buffer: UnsafeMutableRawBufferPointer
    var count = 0

    /// Stops the program unless `more` bytes fit after those written. The raw buffer's own
    /// bounds are checked only in debug builds.
    private func room(_ more: Int) {
        precondition(more <= buffer.count - count, "an answer's head is larger than the room made for it")
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        room(bytes.count)
        UnsafeMutableRawBufferPointer(rebasing: buffer[count...]).copyMemory(from: bytes)
        count += bytes.count
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    mutating func append(byte: UInt8) {
        room(1)
        buffer[count] = byte
        count += 1
    }

    /// A time in seconds as `FrameHeader.seconds` writes it, without making a string (1,800
    /// instructions of a poll answered on the event loop).
    mutating func append(seconds value: Double) {
        guard let (seconds, micros) = FrameHeader.secondsAndMicros(value) else { return append(String(value)) }
        append(decimal: seconds)
        append(byte: UInt8(ascii: "."))
        var divisor: UInt64 = 100_000
        while divisor > 0 {
            append(byte: UInt8(ascii: "0") + UInt8(micros / divisor % 10))
            divisor /= 10
        }
    }

    /// `value` in decimal digits, as `String(value)` writes it.
    mutating func append(decimal value: UInt64) {
        var digits = 1, rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        room(digits)
        var value = value
        for index in stride(from: count + digits - 1, through: count, by: -1) {
            buffer[index] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        }
        count += digits
    }
}
