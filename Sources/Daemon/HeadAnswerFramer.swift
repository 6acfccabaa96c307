import NIOCore
import NIOHTTP1

/// Keeps an answer to `HEAD` without a body on a connection `ReadySnapshotHandler` handed to
/// Hummingbird, whose `HTTPResponseEncoder` it adds then, unpaired.
///
/// `configureHTTPServerPipeline` pairs the encoder with its request decoder, which tells it each
/// request's method (an internal API), so that it sends no body for `HEAD`, not even the end of
/// a chunked one: camd's `HEAD` answers for snapshots and streams have no `Content-Length` (the
/// length of GET's body is not known), the encoder then advertises chunked framing as for GET,
/// and a lone encoder would end the answer with `0\r\n\r\n`, which a keep-alive client reads
/// as the start of the next answer. A connection that only polls snapshots is answered without
/// the encoder (`ByteBuffer.writeAnswerHead`), and the decoder cannot be paired with one added
/// later; so this handler, between Hummingbird's codec and the encoder, notes which requests
/// were `HEAD`s and ends their answers with an empty body part, which the encoder writes as
/// nothing (it frames no empty chunk) while its promise completes in order.
final class HeadAnswerFramer: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Whether each request still to be answered was a `HEAD`, oldest first.
    private var heads = CircularBuffer<Bool>(initialCapacity: 4)
    /// The answer being written is to a `HEAD`.
    private var answeringHead = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data) { heads.append(request.method == .HEAD) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            // An informational answer other than 101 comes before the request's own.
            let informational = (100..<200).contains(response.status.code) && response.status.code != 101
            if !informational { answeringHead = heads.popFirst() ?? false }
            context.write(data, promise: promise)
        case .body where answeringHead:
            // camd's router sends no body for HEAD; were one written, it is dropped here, as
            // the paired encoder refuses it.
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer()))), promise: promise)
        case .end where answeringHead:
            answeringHead = false
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer()))), promise: promise)
        case .body, .end:
            context.write(data, promise: promise)
        }
    }
}
