import NIOCore
import NIOHTTP1

/// Reads a connection's snapshot polls ahead of NIO's HTTP/1 request decoder, and adds that
/// decoder at the first read that is anything else (issue 16).
///
/// Why by hand, beside NIO's decoder: for a poll answered on the loop, the decoder was about a
/// fifth of the instructions between the client's connect and its answer (its handler set up
/// for each connection, about 8,000; llhttp and the decoder's machinery reading the head, about
/// 12,000), and most of what the connection's close cost. A poll is one short `GET` that one
/// read holds whole. `PollHead.read` takes only heads that are as plain as a poll's, and gives
/// the `HTTPRequestHead` NIO's decoder gives for them (`PollHeadReaderTests` holds the two equal,
/// field for field and in order, over real clients' heads and their variations); anything else
/// goes to the decoder unread, which from then on reads everything the connection sends.
/// `ReadySnapshotHandler`, after both, cannot tell who read a head.
final class PollHeadReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = HTTPServerRequestPart

    private let limits: NIOHTTPDecoderLimitConfiguration
    /// NIO's decoder has the connection: what comes is passed to it.
    private var decoding = false

    init(limits: NIOHTTPDecoderLimitConfiguration) {
        self.limits = limits
    }

    /// NIO's decoder as the connection's requests need it: the limits on heads Hummingbird
    /// gives it, and the bytes left after an upgrade dropped.
    static func decoder(_ limits: NIOHTTPDecoderLimitConfiguration) -> ByteToMessageHandler<HTTPRequestDecoder> {
        ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: limits))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !decoding {
            if let head = PollHead.read(unwrapInboundIn(data), limits: limits) {
                context.fireChannelRead(wrapInboundOut(.head(head)))
                return context.fireChannelRead(wrapInboundOut(.end(nil)))
            }
            decoding = true
            do {
                // Named: a handler without a name gets one made by string interpolation.
                try context.pipeline.syncOperations.addHandler(Self.decoder(limits), name: "request-decoder", position: .after(self))
            } catch {
                context.fireErrorCaught(error)
                return context.close(promise: nil)
            }
        }
        context.fireChannelRead(data)
    }
}
