import CV4L2
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
public final class CaptureStream {
    public let device: VideoDevice
    public let configuration: CaptureConfiguration
    public private(set) var statistics = Statistics()
    private var buffers: [(address: UnsafeRawPointer, length: Int)] = []
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
    }

    /// Maps `count` buffers and starts streaming.
    /// Buffers asked of the driver: one being filled, one being read, two in reserve.
    public static let defaultBufferCount = 4

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
            case .success(let address): buffers.append((address, Int(buffer.length)))
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

    /// Stops streaming and releases the buffers; the device stays open.
    public func stop() {
        if streaming {
            var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            _ = Syscall.ioctl(device.fd, CV4L2_VIDIOC_STREAMOFF, &type)
            streaming = false
        }
        for buffer in buffers { Syscall.unmapBuffer(buffer.address, length: buffer.length) }
        if !buffers.isEmpty {
            buffers.removeAll()
            var release = v4l2_requestbuffers()
            release.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            release.memory = V4L2_MEMORY_MMAP.rawValue
            _ = Syscall.ioctl(device.fd, CV4L2_VIDIOC_REQBUFS, &release)
        }
    }

    /// Waits for the freshest good frame and copies it out.
    ///
    /// - Parameter timeout: how long to wait for a good frame before throwing `.timeout`
    ///   (a stalled device is an error, never a hang).
    public func nextFrame(timeout: Duration) throws(DeviceError) -> Frame {
        let layout = configuration.layout
        return try withNextFrame(timeout: timeout) { bytes, metadata in
            let storage = recycler.storage(count: bytes.count) { $0.copyMemory(from: bytes) }
            return Frame(layout: layout, storage: storage, sequence: metadata.sequence,
                         monotonicTime: metadata.monotonicTime, captureTime: metadata.captureTime)
        }
    }

    /// The buffers frames are copied into, reused once no frame refers to them.
    public var recycler = FrameRecycler()

    /// Where a frame came from, for a caller that reads the mapped bytes in place.
    public struct FrameMetadata: Sendable {
        public var sequence: UInt32
        public var monotonicTime: Double
        public var captureTime: Double
    }

    /// Waits for the freshest good frame and lends its mapped bytes to `body`,
    /// which must not keep them: the buffer goes back to the driver when it returns.
    public func withNextFrame<T>(timeout: Duration,
                                 _ body: (UnsafeRawBufferPointer, FrameMetadata) throws(DeviceError) -> T) throws(DeviceError) -> T {
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
            if let frame = try drainToFreshest() {
                defer { var done = frame; try? requeue(&done) }
                let metadata = metadata(of: frame)
                statistics.delivered += 1
                let bytes = UnsafeRawBufferPointer(start: buffers[Int(frame.index)].address, count: Int(frame.bytesused))
                return try body(bytes, metadata)
            }
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
        if Int(buffer.index) >= buffers.count || Int(buffer.bytesused) > buffers[Int(buffer.index)].length { return true }
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
