@testable import CaptureSession
@testable import ControlAPI
@testable import Daemon
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Testing
import VideoCore

/// `ReadySnapshotHandler` writes its answers' heads itself (`ByteBuffer.writeAnswerHead`):
/// the bytes must be those NIO's `HTTPResponseEncoder` writes for the same response.
@Suite struct AnswerHeadTests {
    /// What NIO's encoder writes for `response` and `body`: head, body and end, as
    /// `ReadySnapshotHandler` wrote them before.
    static func nio(_ response: HTTPResponse, _ body: [UInt8]) throws -> [UInt8] {
        let channel = EmbeddedChannel(handler: HTTPResponseEncoder(configuration: .init()))
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(response)))
        try channel.writeOutbound(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: body))))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        var bytes: [UInt8] = []
        while let part = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = part else { throw TestFailure("a file region") }
            bytes += buffer.readableBytesView
        }
        _ = try channel.finish()
        return bytes
    }

    static func ours(_ response: HTTPResponse, _ body: [UInt8]) -> [UInt8] {
        var buffer = ByteBuffer()
        if buffer.writeAnswerHead(response, bodyLength: body.count) { buffer.writeBytes(body) }
        return Array(buffer.readableBytesView)
    }

    @Test func aSnapshotsHeadIsWhatNIOWrites() throws {
        let jpeg: [UInt8] = [0xFF, 0xD8] + Array(repeating: 7, count: 1000) + [0xFF, 0xD9]
        var fields: HTTPFields = [.contentType: "image/jpeg", .cacheControl: "no-store"]
        fields[HTTPField.Name("X-Capture-Time")!] = "1764400000.123"
        fields[HTTPField.Name("X-Frame-Size")!] = "640x480"
        fields[.contentLength] = String(jpeg.count)
        let response = HTTPResponse(status: .ok, headerFields: fields)
        #expect(Self.ours(response, jpeg) == (try Self.nio(response, jpeg)))
        #expect(String(decoding: Self.ours(response, []).prefix(17), as: UTF8.self) == "HTTP/1.1 200 OK\r\n")
    }

    @Test(arguments: [HTTPResponse.Status.serviceUnavailable, .notFound, .init(code: 299, reasonPhrase: "Odd")])
    func anErrorsHeadIsWhatNIOWrites(_ status: HTTPResponse.Status) throws {
        let json = Array(#"{"error":"camera_failed","message":"no"}"#.utf8)
        let response = HTTPResponse(status: status, headerFields: [.contentType: "application/json", .contentLength: String(json.count)])
        #expect(Self.ours(response, json) == (try Self.nio(response, json)))
    }

    /// Answers that have no body keep no length, as NIO frames them.
    @Test(arguments: [HTTPResponse.Status.notModified, .noContent])
    func anAnswerWithoutABodyHasNoLength(_ status: HTTPResponse.Status) throws {
        let response = HTTPResponse(status: status, headerFields: [.contentLength: "5", .eTag: "\"a\""])
        let bytes = Self.ours(response, Array("hello".utf8))
        #expect(bytes == (try Self.nio(response, [])))
        #expect(!String(decoding: bytes, as: UTF8.self).lowercased().contains("content-length"))
    }

    /// Where NIO would send a body without a length chunked, the length is added.
    @Test func aBodyWithoutALengthGetsOne() {
        let text = String(decoding: Self.ours(HTTPResponse(status: .ok, headerFields: [.contentType: "text/plain"]), Array("hello".utf8)),
                          as: UTF8.self)
        #expect(text == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello")
    }

    /// After the hand-over: a `HEAD`'s answer without a length is framed as GET's (chunked, as
    /// the paired encoder advertises it) and ends with no bytes; the next answer, to a GET, ends
    /// its chunked body as usual.
    @Test func aHeadsAnswerEndsWithoutTheChunkedEnd() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([HTTPResponseEncoder(configuration: .init()), HeadAnswerFramer()])
        for method in [HTTPMethod.HEAD, .GET] {
            try channel.writeInbound(HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: method, uri: "/v1/events")))
            try channel.writeInbound(HTTPServerRequestPart.end(nil))
        }
        let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Type": "text/event-stream"])
        var written: [EventLoopFuture<Void>] = []
        for body in [nil, "data: 1\n\n"] {
            written.append(channel.write(HTTPServerResponsePart.head(head)))
            if let body { written.append(channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: body))))) }
            written.append(channel.writeAndFlush(HTTPServerResponsePart.end(nil)))
        }
        var bytes: [UInt8] = []
        while let part = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = part else { throw TestFailure("a file region") }
            bytes += buffer.readableBytesView
        }
        let answer = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        #expect(String(decoding: bytes, as: UTF8.self) == answer + answer + "9\r\ndata: 1\n\n\r\n0\r\n\r\n")
        #expect(written.allSatisfy { future in (try? future.wait()) != nil }, "every write's promise succeeds")
        _ = try channel.finish()
    }

    /// A poll's request in Swift HTTP Types, converted without reading its target as a URL, is
    /// the request NIO's conversion gives the router; any other request is not converted.
    @Test func aPollsRequestIsTheOneTheRouterWouldGet() throws {
        let heads: [HTTPHeaders] = [
            [:],
            ["Host": "localhost"],
            ["host": "camd.local:8080", "Accept": "image/jpeg", "User-Agent": "curl/7.88.1"],
            ["Host": "a", "Host": "b", "Cookie": "camd_session=x; other=y", "Origin": "http://a"],
            ["X-Forwarded-For": "10.0.0.1", "Authorization": "Bearer token", "Bad Name": "dropped"],
        ]
        let targets = ["/v1/cameras/cam/snapshot", "/v1/cameras/cam/snapshot?max_age_ms=500",
                       "/v1/cameras/ca%20m/snapshot?a=1&b=%2F", "/v1/cameras/cam/snapshot?url=http://x/y#frag", "/"]
        for headers in heads {
            for target in targets {
                let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)
                let converted = try #require(HTTPRequest(originFormGET: head), "\(target)")
                #expect(converted == (try HTTPRequest(head, secure: false, splitCookie: false)), "\(target) \(headers)")
            }
        }
        for (method, target) in [(HTTPMethod.HEAD, "/v1/cameras/cam/snapshot"), (.POST, "/v1/cameras/cam/snapshot"),
                                 (.GET, "http://camd/v1/cameras/cam/snapshot"), (.GET, "*")] {
            #expect(HTTPRequest(originFormGET: HTTPRequestHead(version: .http1_1, method: method, uri: target)) == nil, "\(method) \(target)")
        }
    }

    /// A poll's fields are read unconverted (`UnconvertedFields`): the access rules take from
    /// them what they take from the request the router would get.
    @Test func aPollsFieldsReadAsTheRoutersRequest() throws {
        let heads: [HTTPHeaders] = [
            [:],
            ["Host": "camd.local:8080", "Origin": "http://camd.local:8080", "Sec-Fetch-Site": "same-origin"],
            ["host": "a", "origin": "http://a", "ORIGIN": "http://b", "sec-fetch-site": "cross-site", "Content-Type": "text/plain"],
            ["Host": "a", "Content-Length": "12", "Cookie": "camd_session=abc; other=y", "Authorization": "Bearer token"],
            ["Host": "a", "Content-Length": "0", "Transfer-Encoding": "chunked", "Cookie": "other=y", "cookie": "camd_session=x"],
            ["Authorization": "Basic dXNlcjpzZWNyZXQ", "Cookie": "camd_session=first", "Cookie": "camd_session=second"],
            ["Authorization": "basic OnRva2Vu", "Content-Length": "nonsense", "Bad Name": "dropped"],
        ]
        for headers in heads {
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/cameras/cam/snapshot", headers: headers)
            let request = try HTTPRequest(head, secure: false, splitCookie: false)
            let fields = UnconvertedFields(headers: headers)
            #expect(AccessMiddleware.provenance(authority: headers["Host"].first, fields) == AccessMiddleware.provenance(request), "\(headers)")
            #expect(Credentials(fields: fields) == Credentials(request.headerFields), "\(headers)")
        }
    }

    /// A poll answered on the event loop (`writeSnapshotAnswer`) is byte for byte the router's
    /// answer to it (`snapshotHeaders`, a `Content-Length`, the JPEG) as `writeAnswerHead`
    /// writes it, and as NIO's encoder writes it: the loop writes the same fields a second time.
    @Test func aPollAnsweredOnTheLoopIsTheRoutersAnswer() throws {
        let shots = [
            RenderedSnapshot(jpeg: [0xFF, 0xD8, 0xFF, 0xD9], size: FrameSize(width: 640, height: 480),
                             frameSize: FrameSize(width: 640, height: 480), sequence: 0, captureTime: 1_764_400_000.1234565,
                             fromRawFrame: false),
            RenderedSnapshot(jpeg: [0xFF, 0xD8] + Array(repeating: 9, count: 24_999) + [0xFF, 0xD9], size: FrameSize(width: 1920, height: 1080),
                             frameSize: FrameSize(width: 3840, height: 2160), sequence: .max, captureTime: 0.9999996,
                             fromRawFrame: false),
            RenderedSnapshot(jpeg: Array(repeating: 1, count: 10), size: FrameSize(width: 9, height: 10),
                             frameSize: FrameSize(width: 10, height: 9), sequence: 1_000_000, captureTime: 1e15,
                             fromRawFrame: true),
            // Microseconds with leading zeros, and none.
            RenderedSnapshot(jpeg: [0xFF, 0xD8, 0xFF, 0xD9], size: FrameSize(width: 2, height: 2), frameSize: FrameSize(width: 2, height: 2),
                             sequence: 7, captureTime: 1_764_400_000.000_012, fromRawFrame: false),
            RenderedSnapshot(jpeg: [0xFF, 0xD8, 0xFF, 0xD9], size: FrameSize(width: 2, height: 2), frameSize: FrameSize(width: 2, height: 2),
                             sequence: 8, captureTime: 12, fromRawFrame: false),
        ]
        for shot in shots {
            var loop = ByteBuffer()
            loop.writeSnapshotAnswer(shot)
            var fields = snapshotHeaders(shot)
            fields[.contentLength] = String(shot.jpeg.count)
            let router = HTTPResponse(status: .ok, headerFields: fields)
            #expect(Array(loop.readableBytesView) == Self.ours(router, shot.jpeg), "\(shot.sequence)")
            #expect(Array(loop.readableBytesView) == (try Self.nio(router, shot.jpeg)), "\(shot.sequence)")
        }
    }
}
