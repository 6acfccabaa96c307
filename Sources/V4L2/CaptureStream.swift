import CV4L2
import Synchronization
import SystemPackage
import VideoCore
#if canImport(Glibc)
import Glibc
#endif

/// A running V4L2 stream: a ring of mmap'd buffers, STREAMON until stopped.
///
/// `nextFrame` waits with poll and a timeout, drains every ready buffer so the
/// caller gets the freshest frame, and requeues the rest at once. Broken frames
/// (`V4L2_BUF_FLAG_ERROR`, empty, or shorter than an uncompressed frame must be)
/// are dropped and counted, never returned.
///
/// A frame is the driver's buffer itself, lent without a copy, while the driver keeps
/// `reserve` others to fill; the buffer is requeued once no frame refers to it. Past that
/// (consumers holding frames longer than a frame interval) frames are copied into the
/// recycler's boxes and their buffers requeued at once, so capture never waits for them.
public final class CaptureStream {
    public let device: VideoDevice
    public let configuration: CaptureConfiguration
    public private(set) var statistics = Statistics()
    private var buffers: [MappedBuffer] = []
    /// The buffers lent out as frames, by index: the driver is without them until they come back.
    private var lent: Set<UInt32> = []
    /// Where frames give their buffers back, from whichever thread let go of the last one.
    private let returns = BufferReturns()
    /// Frames lent their buffer since the last one copied, for `boxesKeptFor`.
    private var lentInARow = 0
    private var streaming = false
    private var lastSequence: UInt32?

    /// Counters since STREAMON.
    public struct Statistics: Hashable, Sendable {
        /// Frames handed to the caller.
        public var delivered = 0
        /// Good frames skipped because a fresher one was ready.
        public var superseded = 0
        /// Frames the driver flagged as broken, or that were empty or truncated.
        public var broken = 0
        /// Frames never seen at all, from gaps in the driver's sequence numbers.
        public var lost = 0
        /// Frames copied out because the driver had no buffer to spare for lending.
        public var copied = 0
    }

    /// Maps `count` buffers and starts streaming.
    /// Buffers asked of the driver: one being filled, one being read, two in reserve.
    public static let defaultBufferCount = 4
    /// Buffers the driver keeps to fill whatever is lent: one being filled and one ready, so
    /// a frame is never dropped for want of a buffer.
    public static let reserve = 2
    /// Frames lent in a row after which the recycler's boxes are let go (about 4 s at 25 fps).
    public static let boxesKeptFor = 100

    public init(device: VideoDevice, configuration: CaptureConfiguration, bufferCount: Int = CaptureStream.defaultBufferCount) throws(DeviceError) {
        self.device = device
        self.configuration = configuration
        var request = v4l2_requestbuffers()
        request.count = UInt32(bufferCount)
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        try Self.starting(device, CV4L2_VIDIOC_REQBUFS, &request, "allocating \(bufferCount) buffers (REQBUFS)")
        guard request.count >= 2 else {
            throw DeviceError(.unsupported, path: device.path, "\(device.path) gave only \(request.count) buffer(s); streaming needs at least 2")
        }
        for index in 0..<request.count {
            var buffer = Self.emptyBuffer(index: index)
            try Self.starting(device, CV4L2_VIDIOC_QUERYBUF, &buffer, "querying buffer \(index)")
            switch Syscall.mapBuffer(device.fd, length: Int(buffer.length), offset: Int(buffer.m.offset)) {
            case .success(let address): buffers.append(MappedBuffer(UnsafeRawBufferPointer(start: address, count: Int(buffer.length))))
            case .failure(let error):
                throw DeviceError(.streamFailed, path: device.path, "\(device.path): mapping buffer \(index) failed: \(error)", errno: error)
            }
            try Self.starting(device, CV4L2_VIDIOC_QBUF, &buffer, "queueing buffer \(index) (QBUF)")
        }
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        try Self.starting(device, CV4L2_VIDIOC_STREAMON, &type, "starting the stream (STREAMON)")
        streaming = true
    }

    deinit {
        stop()
    }

    /// An ioctl of stream start-up. The device accepted the format and says it streams,
    /// so a refusal here is the device failing to start (whatever errno it uses, often
    /// EINVAL), which a retry may fix, not something camd asked wrongly.
    private static func starting<Argument>(_ device: VideoDevice, _ request: UInt, _ argument: inout Argument,
                                           _ what: String) throws(DeviceError) {
        guard case .failure(let error) = Syscall.ioctl(device.fd, request, &argument) else { return }
        if error == .brokenPipe {
            // EPIPE at STREAMON: the links and formats of the node's media pipeline do not match.
            throw DeviceError(.unsupported, path: device.path,
                              "\(device.path) refused \(what) (\(error)): it is one node of a media pipeline (driver \(device.info.driver)) "
                              + "whose links and formats are not configured, so it is not a camera on its own. "
                              + "Use the libcamera camera that drives the pipeline (`camctl devices` lists it as libcamera:N), or configure the pipeline with media-ctl first",
                              errno: error)
        }
        let failure = DeviceError.from(error, path: device.path, during: what)
        guard failure.kind == .unsupported else { throw failure }
        throw DeviceError(.streamFailed, path: device.path,
                          "\(device.path) failed \(what): \(error); try again, and if it persists replug the camera or look at `dmesg`",
                          errno: error)
    }

    /// Stops streaming and releases the buffers; the device stays open. A frame lent a buffer
    /// stays readable: its mapping goes with the last frame (the driver orphans such buffers).
    public func stop() {
        if streaming {
            var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            _ = Syscall.ioctl(device.fd, CV4L2_VIDIOC_STREAMOFF, &type)
            streaming = false
        }
        returns.close()
        lent.removeAll()
        if !buffers.isEmpty {
            buffers.removeAll()
            var release = v4l2_requestbuffers()
            release.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            release.memory = V4L2_MEMORY_MMAP.rawValue
            _ = Syscall.ioctl(device.fd, CV4L2_VIDIOC_REQBUFS, &release)
        }
    }

    /// Waits for the freshest good frame: its buffer lent, or a copy (see the type's comment).
    ///
    /// - Parameter timeout: how long to wait for a good frame before throwing `.timeout`
    ///   (a stalled device is an error, never a hang).
    public func nextFrame(timeout: Duration) throws(DeviceError) -> Frame {
        var buffer = try nextBuffer(timeout: timeout)
        return try frame(of: &buffer)
    }

    /// As `nextFrame`, asking `wanted` once the frame has come. Asked before the wait, a
    /// snapshot requested during it would find the frame it waited for skipped, and wait for
    /// the next one.
    ///
    /// A frame nobody wants is kept where the driver wrote it, its buffer lent, as long as
    /// that leaves the driver `reserve` (`.kept`): no pixel is read or copied, and the newest
    /// frame is there for the first snapshot after a rest, which otherwise waited for the next
    /// frame, half a frame interval on average (about 20 ms at 25 fps, 100 ms at 5 fps).
    /// The buffer before it goes back to the driver as the frame replaces it. Otherwise the
    /// frame goes back unread (`.unread`): one is never copied, or taken back from a consumer,
    /// for nobody.
    public func nextFrame(timeout: Duration, ifWanted wanted: () -> Bool) throws(DeviceError) -> SourcedFrame {
        var buffer = try nextBuffer(timeout: timeout)
        if wanted() { return .read(try frame(of: &buffer)) }
        if leavesReserve { return .kept(lend(buffer)) }
        let captured = metadata(of: buffer).monotonicTime
        try? requeue(&buffer)
        return .unread(monotonicTime: captured)
    }

    /// The frame in a buffer just dequeued: the buffer lent, or its bytes copied and the buffer requeued.
    private func frame(of buffer: inout v4l2_buffer) throws(DeviceError) -> Frame {
        if try mayLend() { return lend(buffer) }
        let bytes = bytes(of: buffer)
        let copy = frame(of: buffer, in: recycler.storage(count: bytes.count) { $0.copyMemory(from: bytes) })
        try? requeue(&buffer)
        lentInARow = 0
        statistics.copied += 1
        return copy
    }

    /// The frame in a buffer just dequeued, the buffer lent to it until the last frame
    /// referring to it goes.
    private func lend(_ buffer: v4l2_buffer) -> Frame {
        let mapped = buffers[Int(buffer.index)]
        lent.insert(buffer.index)
        let returns = self.returns, index = buffer.index
        let storage = FrameStorage(lending: bytes(of: buffer)) { withExtendedLifetime(mapped) { returns.giveBack(index) } }
        lentInARow += 1
        if lentInARow == Self.boxesKeptFor { recycler.forgetBoxes() }
        return frame(of: buffer, in: storage)
    }

    /// A dequeued buffer's frame, its bytes in `storage`: read before the buffer is requeued.
    private func frame(of buffer: v4l2_buffer, in storage: FrameStorage) -> Frame {
        let metadata = metadata(of: buffer)
        return Frame(layout: configuration.layout, storage: storage, sequence: metadata.sequence,
                     monotonicTime: metadata.monotonicTime, captureTime: metadata.captureTime)
    }

    /// The boxes frames are copied into when none may be lent its buffer, reused once no
    /// frame refers to them. Its `takeBackNewest` also frees a buffer to lend.
    public var recycler = FrameRecycler()

    /// Whether the frame just dequeued may keep its buffer, leaving the driver `reserve`.
    /// If not, the newest frame is asked back first: the frame being read replaces it anyway.
    private func mayLend() throws(DeviceError) -> Bool {
        if leavesReserve { return true }
        guard let takeBackNewest = recycler.takeBackNewest else { return false }
        takeBackNewest()
        try requeueReturned()
        return leavesReserve
    }

    /// Whether one more buffer lent leaves the driver `reserve` to fill.
    private var leavesReserve: Bool { lent.count + 1 + Self.reserve <= buffers.count }

    /// Gives the driver back the buffers whose frames are gone.
    private func requeueReturned() throws(DeviceError) {
        for index in returns.take() where lent.remove(index) != nil {
            var buffer = Self.emptyBuffer(index: index)
            try requeue(&buffer)
        }
    }

    /// Where a frame came from.
    struct FrameMetadata {
        var sequence: UInt32
        var monotonicTime: Double
        var captureTime: Double
    }

    /// The freshest good frame's buffer, dequeued and counted, after the buffers whose frames
    /// are gone went back to the driver: the caller requeues or lends it.
    private func nextBuffer(timeout: Duration) throws(DeviceError) -> v4l2_buffer {
        try requeueReturned()
        let buffer = try dequeueFreshest(timeout: timeout)
        statistics.delivered += 1
        return buffer
    }

    /// The bytes the driver wrote into a dequeued buffer.
    private func bytes(of buffer: v4l2_buffer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: buffers[Int(buffer.index)].bytes[..<Int(buffer.bytesused)])
    }

    /// Waits for the freshest good frame and dequeues it: the caller requeues or lends it.
    private func dequeueFreshest(timeout: Duration) throws(DeviceError) -> v4l2_buffer {
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                throw DeviceError(.timeout, path: device.path,
                                  "\(device.path) sent no frame for \(timeout) (\(configuration.layout), \(configuration.interval.map { "\($0)" } ?? "unknown rate")); the device may be stalled")
            }
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            let revents: Int16
            switch Syscall.poll(device.fd, events: Int16(POLLIN), timeoutMilliseconds: milliseconds) {
            case .success(let value): revents = value
            case .failure(let error): throw DeviceError.from(error, path: device.path, during: "waiting for a frame")
            }
            if revents == 0 { continue }
            if revents & Int16(POLLERR | POLLHUP) != 0 && revents & Int16(POLLIN) == 0 {
                // A dequeue says why: ENODEV after a disconnect, EIO after a fatal error.
                var probe = Self.emptyBuffer(index: 0)
                if case .failure(let error) = Syscall.ioctl(device.fd, CV4L2_VIDIOC_DQBUF, &probe) {
                    throw DeviceError.from(error, path: device.path, during: "streaming")
                }
                try requeue(&probe)
                continue
            }
            if let frame = try drainToFreshest() { return frame }
        }
    }

    /// Dequeues every ready buffer, keeps the newest good one, requeues the others.
    private func drainToFreshest() throws(DeviceError) -> v4l2_buffer? {
        var freshest: v4l2_buffer?
        while true {
            var buffer = Self.emptyBuffer(index: 0)
            switch Syscall.ioctl(device.fd, CV4L2_VIDIOC_DQBUF, &buffer) {
            case .success: break
            case .failure(.resourceTemporarilyUnavailable): return freshest
            case .failure(let error): throw DeviceError.from(error, path: device.path, during: "dequeueing a frame")
            }
            countLost(upTo: buffer.sequence)
            if isBroken(buffer) {
                statistics.broken += 1
                try requeue(&buffer)
                continue
            }
            if var older = freshest {
                statistics.superseded += 1
                try requeue(&older)
            }
            freshest = buffer
        }
    }

    private func isBroken(_ buffer: v4l2_buffer) -> Bool {
        if buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0 || buffer.bytesused == 0 { return true }
        if Int(buffer.index) >= buffers.count || Int(buffer.bytesused) > buffers[Int(buffer.index)].bytes.count { return true }
        // An uncompressed frame has a known size; fewer bytes means it was cut short.
        let layout = configuration.layout
        if !layout.format.isJPEG, configuration.bufferSize > 0, Int(buffer.bytesused) < configuration.bufferSize {
            return true
        }
        return false
    }

    private func countLost(upTo sequence: UInt32) {
        if let last = lastSequence, sequence > last &+ 1 {
            statistics.lost += Int(sequence - last - 1)
        }
        lastSequence = sequence
    }

    private func requeue(_ buffer: inout v4l2_buffer) throws(DeviceError) {
        try device.control(CV4L2_VIDIOC_QBUF, &buffer, "requeueing buffer \(buffer.index)")
    }

    private func metadata(of buffer: v4l2_buffer) -> FrameMetadata {
        let stamp = Double(buffer.timestamp.tv_sec) + Double(buffer.timestamp.tv_usec) / 1_000_000
        var mono = timespec(), real = timespec()
        clock_gettime(CLOCK_MONOTONIC, &mono)
        clock_gettime(CLOCK_REALTIME, &real)
        let monoNow = Double(mono.tv_sec) + Double(mono.tv_nsec) / 1e9
        let realNow = Double(real.tv_sec) + Double(real.tv_nsec) / 1e9
        // Drivers stamp with CLOCK_MONOTONIC; a zero stamp means none was given.
        let age = stamp > 0 ? max(0, monoNow - stamp) : 0
        return FrameMetadata(sequence: buffer.sequence, monotonicTime: stamp > 0 ? stamp : monoNow, captureTime: realNow - age)
    }

    private static func emptyBuffer(index: UInt32) -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.index = index
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        return buffer
    }
}

/// One of the driver's buffers mapped into camd. It is unmapped once neither the stream nor
/// a frame lent it holds it: a frame may outlive its stream (a stop, a restart).
final class MappedBuffer: @unchecked Sendable {  // never changes; the mapping is read-only
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    deinit { Syscall.unmapBuffer(bytes.baseAddress!, length: bytes.count) }
}

/// The indices of lent buffers whose frames are gone, given back from any thread and
/// requeued by the capture thread before it next waits. A stopped stream takes none back.
final class BufferReturns: Sendable {
    private let state = Mutex<(indices: [UInt32], open: Bool)>(([], true))

    func giveBack(_ index: UInt32) {
        state.withLock { if $0.open { $0.indices.append(index) } }
    }

    func take() -> [UInt32] {
        state.withLock { state in
            defer { state.indices.removeAll(keepingCapacity: true) }
            return state.indices
        }
    }

    func close() {
        state.withLock { $0 = ([], false) }
    }
}
