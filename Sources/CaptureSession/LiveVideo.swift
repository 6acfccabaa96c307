import Foundation
import Logging
import Video

/// A camera's live H.264 for HTTP clients (`GET /v1/cameras/{id}/video`): one consumer
/// of the video stage, joined while at least one client watches, that cuts each packet
/// into an MP4 fragment once and offers it to every client's bounded queue.
///
/// A client joining a running stream asks the encoder for a keyframe, so it starts within
/// a frame or two rather than a keyframe interval. The device going away and coming back
/// with the same format keeps the clients and their timeline; another format (a configure
/// to another size, other encoder settings, another rotation) ends them, and they connect
/// again for the new init segment.
final class LiveVideo: VideoConsumer, @unchecked Sendable {  // mutable state is guarded by `lock`
    private let lock = NSLock()
    private let stage: VideoStage
    private let logger: Logger
    private var fragmenter: LiveMP4Fragmenter?
    private var start: LiveStreamStart?
    private var transform: FragmentedMP4Writer.DisplayTransform = .upright
    private var clients: [UInt64: LiveVideoClient] = [:]
    private var nextID: UInt64 = 0
    /// Whether this consumer is joined to the stage, and the stage's id for it once known.
    private var joined = false
    /// Counts the times this consumer joined the stage, so that a `join` that returns after
    /// the stage let it go and another client joined again keeps the newer join's id.
    private var joinCount: UInt64 = 0
    private var consumerID: UInt64?
    private var totals = Totals()

    /// What departed clients took, so the totals in metrics never go back.
    private struct Totals {
        var bytesSent = 0
        var framesSent = 0
        var drops = 0
        var framesDropped = 0
    }

    init(stage: VideoStage, logger: Logger) {
        self.stage = stage
        self.logger = logger
    }

    /// A new client; its stream starts at the next keyframe, which it asks for.
    func join() -> LiveVideoClient {
        lock.lock()
        nextID &+= 1
        let client = LiveVideoClient(id: nextID) { [weak self] client in self?.leave(client) }
        clients[client.id] = client
        let first = !joined
        joined = true
        if first { joinCount &+= 1 }
        let thisJoin = joinCount
        lock.unlock()
        guard first else {
            stage.requestKeyframe()
            return client
        }
        // The stage asks for a keyframe for a consumer that joins.
        let id = stage.add(self)
        lock.lock()
        let stillWanted = joined && joinCount == thisJoin
        if stillWanted { consumerID = id }
        lock.unlock()
        if !stillWanted { stage.remove(id) }  // the client left while this joined
        return client
    }

    private func leave(_ client: LiveVideoClient) {
        lock.lock()
        guard clients.removeValue(forKey: client.id) != nil else { return lock.unlock() }
        let counters = client.snapshot
        totals.bytesSent += counters.bytesSent
        totals.framesSent += counters.framesSent
        totals.drops += counters.drops
        totals.framesDropped += counters.framesDropped
        var last: UInt64?
        if clients.isEmpty && joined {
            joined = false
            last = consumerID
            consumerID = nil
        }
        lock.unlock()
        if let last { stage.remove(last) }
    }

    /// Ends every client's stream (the camera was stopped); they may connect again.
    func endClients() {
        lock.lock()
        let ending = Array(clients.values)
        lock.unlock()
        for client in ending { client.finish() }
    }

    /// The camera's `rotate` and `flip`, written into the init segment's display matrix.
    /// A change ends the clients' streams at the next keyframe, which begins a new one.
    func setTransform(_ transform: FragmentedMP4Writer.DisplayTransform) {
        lock.lock()
        self.transform = transform
        lock.unlock()
    }

    var status: LiveVideoStatus {
        lock.lock()
        defer { lock.unlock() }
        var status = LiveVideoStatus()
        status.bytesSent = totals.bytesSent
        status.framesSent = totals.framesSent
        status.drops = totals.drops
        status.framesDropped = totals.framesDropped
        for client in clients.values.sorted(by: { $0.id < $1.id }) {
            let counters = client.snapshot
            status.clients.append(LiveClientStatus(id: client.id, since: client.since, framesSent: counters.framesSent,
                                                   bytesSent: counters.bytesSent, drops: counters.drops,
                                                   framesDropped: counters.framesDropped))
            status.bytesSent += counters.bytesSent
            status.framesSent += counters.framesSent
            status.drops += counters.drops
            status.framesDropped += counters.framesDropped
        }
        return status
    }

    // MARK: VideoConsumer, on the stage's thread

    func begin(_ format: VideoStreamFormat) {
        lock.lock()
        if var same = fragmenter, same.format == format {
            same.continueTimeline()
            fragmenter = same
            return lock.unlock()
        }
        // Clients whose stream began with another init segment end; the others start with this one.
        let ending = clients.values.filter(\.hasStarted)
        fragmenter = nil
        start = nil
        let transform = self.transform
        lock.unlock()
        for client in ending { client.finish() }
        do throws(VideoError) {
            let made = try LiveMP4Fragmenter(format: format, transform: transform)
            lock.lock()
            fragmenter = made
            start = LiveStreamStart(initSegment: made.initSegment, contentType: made.contentType,
                                    width: format.size.width, height: format.size.height)
            lock.unlock()
        } catch {
            logger.error("live video: \(error.description)")
        }
    }

    func receive(_ packet: VideoPacket) {
        lock.lock()
        if packet.isKeyframe, let current = fragmenter, current.transform != transform {
            // A new rotation: the init segment changes, so the streams start anew.
            fragmenter = nil
            let format = current.format
            lock.unlock()
            begin(format)
            lock.lock()
        }
        guard var fragmenter, let start else { return lock.unlock() }
        let bytes = fragmenter.fragment(packet)
        self.fragmenter = fragmenter
        let receivers = Array(clients.values)
        lock.unlock()
        let fragment = LiveFragment(bytes: bytes, isKeyframe: packet.isKeyframe, captureTime: packet.captureTime,
                                    monotonicTime: packet.monotonicTime)
        for client in receivers { client.offer(fragment, start: start) }
    }

    func failed(_ error: VideoError) {
        // The stage let this consumer go: its clients end with the reason; the next client joins anew.
        lock.lock()
        joined = false
        consumerID = nil
        fragmenter = nil
        start = nil
        let ending = Array(clients.values)
        lock.unlock()
        for client in ending { client.finish(failure: error.description) }
    }

    func end() {
        // The encoder stopped (the device went away, the camera restarts): clients stay
        // connected; `begin` with the same format continues their timeline.
    }
}
