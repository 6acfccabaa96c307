@testable import Daemon
import CamdTestSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// `PollHead.read` takes only what NIO's decoder reads the same way: every head it takes is held
/// equal, field for field and in order, to the one `HTTPRequestDecoder` makes of the same bytes
/// (real clients' polls, and thousands of variations of them), and `PollHeadReader` hands
/// everything else to that decoder.
@Suite struct PollHeadReaderTests {
    /// Snapshot polls as real clients send them.
    static let polls = [
        // curl 7.88
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n",
        // Python's http.client, with a query
        "GET /v1/cameras/synth/snapshot?max_age_ms=600000 HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: identity\r\n\r\n",
        // Home Assistant (aiohttp) over TCP, with a bearer token
        "GET /v1/cameras/printer/snapshot HTTP/1.1\r\nHost: 192.168.1.20:8080\r\nAuthorization: Bearer abc.DEF-123_x~\r\n"
            + "Accept: */*\r\nAccept-Encoding: gzip, deflate, br\r\nUser-Agent: HomeAssistant/2024.1.0 aiohttp/3.9.1 Python/3.11\r\n\r\n",
        // Chromium's <img>, with cookies and client hints
        "GET /v1/cameras/bench/snapshot?max_age_ms=500 HTTP/1.1\r\nHost: camd.local:8080\r\nConnection: keep-alive\r\n"
            + "sec-ch-ua: \"Chromium\";v=\"120\", \"Not?A_Brand\";v=\"8\"\r\nsec-ch-ua-mobile: ?0\r\n"
            + "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36\r\n"
            + "Accept: image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8\r\nReferer: http://camd.local:8080/\r\n"
            + "Accept-Language: en-US,en;q=0.9\r\nCookie: camd_session=0123456789abcdef; theme=dark\r\nCookie: other=1\r\n\r\n",
        // wget, and a client that closes after its answer
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nUser-Agent: Wget/1.21.3\r\nAccept: */*\r\nAccept-Encoding: identity\r\n"
            + "Host: localhost\r\nConnection: Keep-Alive\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nHost: camd\r\nConnection: close\r\n\r\n",
        // Basic credentials, an Origin, a tab between a value's words, a percent-escape in the query
        "GET /v1/cameras/front/snapshot?max_age_ms=%31 HTTP/1.1\r\nHost: camd\r\nAuthorization: Basic dXNlcjpwYXNz\r\n"
            + "Origin: http://camd\r\nX-Note:\ta\tb\r\n\r\n",
        // No field at all
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\n\r\n",
    ]

    /// Heads the reader leaves to the decoder, whether the decoder takes them or not.
    static let declined = [
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nHost: camd\r\n",  // not whole yet
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nHost: camd\r\n\r\nGET /v1/status HTTP/1.1\r\n\r\n",  // another behind it
        "GET /v1/status HTTP/1.1\r\nHost: camd\r\n\r\n",
        "HEAD /v1/cameras/front/snapshot HTTP/1.1\r\nHost: camd\r\n\r\n",
        "POST /v1/cameras/front/snapshot HTTP/1.1\r\nHost: camd\r\nContent-Length: 0\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.0\r\nHost: camd\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nConnection: close, TE\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\nHost: camd\n\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nX-Long: a\r\n b\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nHost : camd\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nHost:\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nHost: camd \r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nHost: caméra\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\nHost: a\u{7F}b\r\n\r\n",
        "GET /v1/cameras/front/snapshot#top HTTP/1.1\r\nHost: camd\r\n\r\n",
        "GET /v1/cameras/front/snap\"shot HTTP/1.1\r\nHost: camd\r\n\r\n",
        "GET  /v1/cameras/front/snapshot HTTP/1.1\r\nHost: camd\r\n\r\n",
        "\r\nGET /v1/cameras/front/snapshot HTTP/1.1\r\nHost: camd\r\n\r\n",
        "GET http://camd/v1/cameras/front/snapshot HTTP/1.1\r\nHost: camd\r\n\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\n" + String(repeating: "X-Pad: \(String(repeating: "p", count: 100))\r\n", count: 90) + "\r\n",
        "GET /v1/cameras/front/snapshot HTTP/1.1\r\n" + String(repeating: "X: 1\r\n", count: 100) + "\r\n",
    ]

    /// The limits `ConnectionSetup` gives the reader and the decoder.
    static let limits = ConnectionSetup.limits(HTTPListener.headerLimits)

    /// What NIO's decoder makes of `bytes` sent at once: the head, if it gave one (and its end).
    static func decoded(_ bytes: [UInt8]) -> HTTPRequestHead? {
        let channel = EmbeddedChannel(handler: PollHeadReader.decoder(limits))
        defer { _ = try? channel.finish() }
        guard (try? channel.writeInbound(ByteBuffer(bytes: bytes))) != nil,
              case .head(let head) = try? channel.readInbound(as: HTTPServerRequestPart.self) else { return nil }
        return head
    }

    static func read(_ bytes: [UInt8]) -> HTTPRequestHead? {
        PollHead.read(ByteBuffer(bytes: bytes), limits: limits)
    }

    /// Equal as the router and the access rules see a head: method, target, version, every field
    /// in order with its case, and whether the connection stays open.
    static func same(_ one: HTTPRequestHead, _ other: HTTPRequestHead) -> Bool {
        one.method == other.method && one.uri == other.uri && one.version == other.version
            && one.headers.map { "\($0.name): \($0.value)" } == other.headers.map { "\($0.name): \($0.value)" }
            && one.isKeepAlive == other.isKeepAlive
    }

    @Test(arguments: polls)
    func aRealClientsPollIsReadAsTheDecoderReadsIt(_ poll: String) throws {
        let read = try #require(Self.read(Array(poll.utf8)), "the reader left a real client's poll to the decoder")
        let decoded = try #require(Self.decoded(Array(poll.utf8)))
        #expect(Self.same(read, decoded), "\(read) against the decoder's \(decoded)")
    }

    @Test(arguments: declined)
    func anythingElseIsTheDecoders(_ head: String) {
        #expect(Self.read(Array(head.utf8)) == nil)
    }

    /// Real clients' polls changed a byte or a line at a time, thousands of ways: the reader
    /// declines most, and every head it takes the decoder reads the same.
    @Test func everyVariationTheReaderTakesTheDecoderReadsTheSame() {
        var random = SplitMix64(seed: 0x5eed_cafe)
        let bytes: [UInt8] = Array(" \t\r\n:;,\"#%/?=\u{7F}aZ0-".utf8) + [0, 0x80, 0xC3, 0xA9, 0xFF]
        var taken = 0, differed: [String] = []
        for round in 0..<6000 {
            var head = Array(Self.polls[round % Self.polls.count].utf8)
            for _ in 0...(random.next() % 3) { Self.vary(&head, bytes, &random) }
            guard let read = Self.read(head) else { continue }
            taken += 1
            if let decoded = Self.decoded(head), Self.same(read, decoded) { continue }
            differed.append(String(decoding: head, as: UTF8.self).debugDescription)
        }
        #expect(differed.isEmpty, "read unlike the decoder: \(differed.prefix(5))")
        // Not a test that takes nothing: the case, spaces and tokens a head may vary in are taken.
        #expect(taken > 600, "only \(taken) variations taken")
    }

    /// One change: a byte put in, changed or taken out, a field's name's case flipped, or a line
    /// repeated or taken out.
    static func vary(_ head: inout [UInt8], _ bytes: [UInt8], _ random: inout SplitMix64) {
        let at = Int(random.next() % UInt64(head.count))
        switch random.next() % 6 {
        case 0: head.insert(bytes[Int(random.next() % UInt64(bytes.count))], at: at)
        case 1: head[at] = bytes[Int(random.next() % UInt64(bytes.count))]
        case 2: head.remove(at: at)
        case 3: if head[at] >= UInt8(ascii: "A") && head[at] <= UInt8(ascii: "z") { head[at] ^= 0x20 }
        default:
            // Lines: the request line, the fields, the empty line (each but the last with its CRLF).
            var lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
            guard lines.count > 3 else { return }
            let field = 1 + Int(random.next() % UInt64(lines.count - 3))
            if random.next() % 2 == 0 { lines.insert(lines[field], at: field) } else { lines.remove(at: field) }
            head = Array(lines.joined(separator: "\r\n").utf8)
        }
    }

    /// A poll is read with no decoder; the first read that is not one adds the decoder, which from
    /// then on reads everything, polls too.
    @Test func theDecoderComesAtTheFirstReadThatIsNotAPoll() throws {
        let channel = EmbeddedChannel(handler: PollHeadReader(limits: Self.limits))
        defer { _ = try? channel.finish() }
        func hasDecoder() -> Bool { (try? channel.pipeline.syncOperations.context(name: "request-decoder")) != nil }
        func parts() throws -> [HTTPServerRequestPart] {
            var parts: [HTTPServerRequestPart] = []
            while let part = try channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
            return parts
        }
        func decodedParts(_ poll: String) throws -> [HTTPServerRequestPart] {
            [.head(try #require(Self.decoded(Array(poll.utf8)))), .end(nil)]
        }
        try channel.writeInbound(ByteBuffer(string: Self.polls[0]))
        var read = try parts()
        #expect(read == (try decodedParts(Self.polls[0])))
        #expect(!hasDecoder())
        // Half a head: the decoder has it, and reads the rest.
        let split = Self.polls[1].index(Self.polls[1].startIndex, offsetBy: 30)
        try channel.writeInbound(ByteBuffer(string: String(Self.polls[1][..<split])))
        read = try parts()
        #expect(hasDecoder() && read.isEmpty)
        try channel.writeInbound(ByteBuffer(string: String(Self.polls[1][split...])))
        read = try parts()
        #expect(read == (try decodedParts(Self.polls[1])))
        // A whole poll after that is the decoder's too: it reads the same.
        try channel.writeInbound(ByteBuffer(string: Self.polls[5]))
        read = try parts()
        #expect(read == (try decodedParts(Self.polls[5])))
    }

    /// A first request that is not a poll, and one the decoder cannot read, reach the handler after
    /// as they would from the decoder: its head and body, and its error.
    @Test func anotherRequestAndABadOneAreTheDecoders() throws {
        let channel = EmbeddedChannel(handler: PollHeadReader(limits: Self.limits))
        try channel.writeInbound(ByteBuffer(string: "PUT /v1/cameras/front HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"))
        guard case .head(let head) = try channel.readInbound(as: HTTPServerRequestPart.self) else { Issue.record("no head"); return }
        #expect(head.method == .PUT && head.uri == "/v1/cameras/front")
        guard case .body(let body) = try channel.readInbound(as: HTTPServerRequestPart.self) else { Issue.record("no body"); return }
        #expect(String(buffer: body) == "{}")
        _ = try channel.finish()

        let bad = EmbeddedChannel(handler: PollHeadReader(limits: Self.limits))
        #expect(throws: HTTPParserError.self) { try bad.writeInbound(ByteBuffer(string: "GET /v1/cameras/front/snapshot HTTP/1.1\r\nHost : x\r\n\r\n")) }
        _ = try? bad.finish()
    }
}
