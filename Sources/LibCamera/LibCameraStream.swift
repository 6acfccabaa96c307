import CLibCamera
import Dispatch
import Synchronization
import V4L2
import VideoCore
#if canImport(Glibc)
import Glibc
#endif

/// A running libcamera stream: every request queued, completed ones handed over by
/// libcamera's thread and requeued by the owner's, as `CaptureStream`'s ring of V4L2
/// buffers is: the freshest frame is read, older ones go back at once.
public final class LibCameraStream {
    public let device: LibCameraDevice
    public let configuration: CaptureConfiguration
    private let completions = Completions()
    private var running = false
    /// A device error was seen: stopping waits for libcamera to learn that the camera is gone.
    private var failed = false
    /// When a request last came back; requests that stop coming back mean the device went away.
    private var lastCompletion = ContinuousClock.now
    /// Controls to set with the next request that goes back to the camera.
    var pendingControls: [clibcamera_control_value] = []
    public var recycler = FrameRecycler()
    /// Frames the camera failed (errors) and frames it never sent (sequence gaps).
    public private(set) var broken = 0
    public private(set) var lost = 0
    private var lastSequence: UInt32?

    /// Starts streaming `configuration` (from `device.configure`), with `controls` (from
    /// `device.plan`) set from the first frame.
    public init(device: LibCameraDevice, configuration: CaptureConfiguration, controls: [DeviceControl] = []) throws(DeviceError) {
        self.device = device
        self.configuration = configuration
        let controls = controls.map(Self.value)
        let context = Unmanaged.passUnretained(completions).toOpaque()
        let status = controls.withUnsafeBufferPointer { values in
            device.api.start!(device.handle, values.baseAddress, Int32(values.count), { context, frame in
                guard let context, let frame else { return }
                Unmanaged<Completions>.fromOpaque(context).takeUnretainedValue().add(frame.pointee)
            }, { context in
                guard let context else { return }
                Unmanaged<Completions>.fromOpaque(context).takeUnretainedValue().disconnect()
            }, context)
        }
        guard status == 0 else { throw LibCameraDevice.error(status, camera: device.info, during: "starting the stream") }
        running = true
    }

    deinit { stop() }

    /// Stops streaming; libcamera cancels what is queued before this returns.
    public func stop() {
        guard running else { return }
        running = false
        // The capture thread calls a camera stalled after 5 s without a frame.
        let stalled = ContinuousClock.now - lastCompletion > .milliseconds(4500)
        if (failed || stalled) && !completions.waitForDisconnect(seconds: 3) {
            // libcamera 0.0.3 aborts the process (assertion "queuedRequests_.empty()" in
            // PipelineHandler::stop) when a camera whose nodes vanished (unbound, unplugged)
            // is stopped with requests that never came back, and its manager does not always
            // mark it disconnected. Leave it, acquired, rather than crash camd.
            device.abandoned = true
            device.library.abandon(device.info.id)
            return
        }
        _ = device.api.stop!(device.handle)
    }

    /// Waits for the freshest good frame and copies it out; throws `.timeout` after `timeout`.
    public func nextFrame(timeout: Duration) throws(DeviceError) -> Frame {
        try read(try waitForFrame(timeout: timeout))
    }

    /// As `nextFrame`, asking `wanted` once the frame has come: a frame nobody wants goes back
    /// to libcamera uncopied, and only when it was captured is returned.
    public func nextFrame(timeout: Duration, ifWanted wanted: () -> Bool) throws(DeviceError) -> SourcedFrame {
        let completed = try waitForFrame(timeout: timeout)
        guard wanted() else {
            try requeue(completed.cookie)
            return .unread(monotonicTime: Self.times(completed.timestampNanoseconds).monotonic)
        }
        return .read(try read(completed))
    }

    /// A completed request's planes copied into one frame; the request goes back to libcamera.
    private func read(_ completed: Completions.Completed) throws(DeviceError) -> Frame {
        let total = completed.planes.reduce(0) { $0 + $1.count }
        let storage = recycler.storage(count: total) { target in
            var offset = 0
            for plane in completed.planes {
                target.baseAddress!.advanced(by: offset).copyMemory(from: plane.baseAddress!, byteCount: plane.count)
                offset += plane.count
            }
        }
        try requeue(completed.cookie)
        let (monotonic, wallClock) = Self.times(completed.timestampNanoseconds)
        return Frame(layout: configuration.layout, storage: storage, sequence: completed.sequence,
                     monotonicTime: monotonic, captureTime: wallClock)
    }

    /// The newest successful completion; the others are requeued at once.
    private func waitForFrame(timeout: Duration) throws(DeviceError) -> Completions.Completed {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (ready, disconnected) = completions.takeAll()
            if !ready.isEmpty { lastCompletion = .now }
            if disconnected {
                failed = true
                throw DeviceError(.disconnected, path: device.name, "\(device.name) disconnected: the camera was removed or its driver unloaded")
            }
            // Cancelled requests come back only while stopping; they are not requeued.
            let done = ready.filter { !$0.cancelled }
            let newest = done.last { $0.status == 0 }
            for completion in done {
                if completion.status != 0 { broken += 1 }
                if let last = lastSequence, completion.status == 0, completion.sequence > last &+ 1 {
                    lost += Int(completion.sequence - last - 1)
                }
                if completion.status == 0 { lastSequence = completion.sequence }
                if completion.cookie != newest?.cookie { try requeue(completion.cookie) }
            }
            if let newest { return newest }
            if ContinuousClock.now - lastCompletion > quietLimit, Self.holdsRemovedNodes() {
                failed = true
                throw DeviceError(.disconnected, path: device.name,
                                  "\(device.name) disconnected: its device nodes are gone (the camera was removed or its driver unbound)")
            }
            let remaining = deadline - .now
            guard remaining > .zero else {
                throw DeviceError(.timeout, path: device.name, "\(device.name) sent no frame within \(timeout)")
            }
            let nanoseconds = remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000
            _ = completions.signal.wait(timeout: .now() + .nanoseconds(Int(nanoseconds)))
        }
    }

    /// How long without a completed request before camd looks for removed nodes: libcamera
    /// does not always tell that a camera went away, and the stall bound is seconds.
    private var quietLimit: Duration {
        max(.seconds(1), .milliseconds(Int64(3000 * (configuration.interval?.seconds ?? 0))))
    }

    /// Whether this process holds a media-graph node whose device file was removed: the
    /// kernel names it "/dev/video0 (deleted)" once its device is gone while libcamera
    /// still has it open. Which camera's it is cannot be told, so it is asked only by a
    /// camera that has stopped sending frames.
    static func holdsRemovedNodes(fdFolder: String = "/proc/self/fd") -> Bool {
        guard let folder = opendir(fdFolder) else { return false }
        defer { closedir(folder) }
        var target = [CChar](repeating: 0, count: 512)
        while let entry = readdir(folder) {
            let name = cString(entry.pointee.d_name)
            guard name.first?.isNumber == true else { continue }
            let count = readlink("\(fdFolder)/\(name)", &target, target.count - 1)
            guard count > 0 else { continue }
            let path = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if Self.isRemovedNode(path) { return true }
        }
        return false
    }

    static func isRemovedNode(_ path: String) -> Bool {
        guard path.hasSuffix(" (deleted)") else { return false }
        return ["/dev/media", "/dev/video", "/dev/v4l-subdev"].contains { path.hasPrefix($0) }
    }

    /// Sends controls (from `device.plan`) with the next request that goes back to the camera.
    public func setControls(_ controls: [DeviceControl]) {
        pendingControls.removeAll { pending in controls.contains { $0.id == pending.id } }
        pendingControls += controls.map(Self.value)
    }

    static func value(_ control: DeviceControl) -> clibcamera_control_value {
        clibcamera_control_value(id: control.id, value: control.number)
    }

    private func requeue(_ cookie: UInt64) throws(DeviceError) {
        let controls = pendingControls
        pendingControls.removeAll()
        let status = controls.withUnsafeBufferPointer { values in
            device.api.requeue!(device.handle, cookie, values.baseAddress, Int32(values.count))
        }
        guard status == 0 else {
            failed = true
            throw LibCameraDevice.error(status, camera: device.info, during: "queueing a request")
        }
    }

    /// A CLOCK_MONOTONIC timestamp in nanoseconds as monotonic seconds and wall-clock seconds.
    static func times(_ nanoseconds: UInt64) -> (monotonic: Double, wallClock: Double) {
        var mono = timespec(), real = timespec()
        clock_gettime(CLOCK_MONOTONIC, &mono)
        clock_gettime(CLOCK_REALTIME, &real)
        let captured = Double(nanoseconds) / 1e9
        let now = Double(mono.tv_sec) + Double(mono.tv_nsec) / 1e9
        return (captured, Double(real.tv_sec) + Double(real.tv_nsec) / 1e9 - (now - captured))
    }

    /// The hand-off from libcamera's thread, which calls `add` and `disconnect`, to the owner's.
    final class Completions: Sendable {
        struct Completed: @unchecked Sendable {  // the planes stay mapped and unwritten until the owner requeues the request
            var cookie: UInt64
            var cancelled: Bool
            var status: Int32
            var sequence: UInt32
            var timestampNanoseconds: UInt64
            var planes: [UnsafeRawBufferPointer]
        }

        private let state = Mutex<(ready: [Completed], disconnected: Bool)>(([], false))
        let signal = DispatchSemaphore(value: 0)

        func add(_ frame: clibcamera_frame) {
            let planes = withUnsafeBytes(of: frame.planes) { raw in
                Array(raw.bindMemory(to: clibcamera_plane.self).prefix(Int(frame.plane_count)))
            }.map { plane in
                UnsafeRawBufferPointer(start: plane.data, count: Int(plane.bytes_used > 0 ? plane.bytes_used : plane.length))
            }
            let completed = Completed(cookie: frame.cookie, cancelled: frame.cancelled != 0, status: frame.frame_status,
                                      sequence: frame.sequence, timestampNanoseconds: frame.timestamp_ns, planes: planes)
            state.withLock { $0.ready.append(completed) }
            signal.signal()
        }

        func disconnect() {
            state.withLock { $0.disconnected = true }
            signal.signal()
        }

        /// Waits up to `seconds` for libcamera's disconnected signal; whether it came.
        func waitForDisconnect(seconds: Double) -> Bool {
            let deadline = DispatchTime.now() + seconds
            while !state.withLock({ $0.disconnected }) {
                if signal.wait(timeout: deadline) == .timedOut { return state.withLock { $0.disconnected } }
            }
            return true
        }

        func takeAll() -> (ready: [Completed], disconnected: Bool) {
            state.withLock { state in
                defer { state.ready.removeAll() }
                return (state.ready, state.disconnected)
            }
        }
    }
}
