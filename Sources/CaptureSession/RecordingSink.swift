import Foundation
import SystemPackage
import Video
import VideoCore

/// Writes one recording's H.264 to MP4 files: a consumer of the camera's video stage.
///
/// Each file is written under a hidden name (`PhotoOutput.recordingPrefix`) in the
/// camera's folder and handed to `finished` when it is complete, to be given its name.
/// The files are fragmented MP4: at most a second of video is in memory, the rest is on
/// disk in whole fragments, synced every few seconds, so a crash or a power loss leaves
/// a file that plays up to its last fragment. A write that fails (a full disk) cuts the
/// file back to its last whole fragment, so even then nothing unplayable is kept.
///
/// The file work runs on a serial queue of the sink's own: the video stage's thread only
/// queues packets and never waits for the disk. A disk too slow to keep up (more than
/// `backlogLimit` bytes queued) ends the file as a failure rather than grow memory.
final class RecordingSink: VideoConsumer, @unchecked Sendable {  // queue state on `queue`; `backlog` under `lock`
    /// What to record and where.
    struct Plan: Sendable {
        var camera: String
        var root: String
        var transform: FragmentedMP4Writer.DisplayTransform
        /// Stop after this many seconds of video; nil to run until stopped.
        var duration: Double?
        /// Start a new file at the first keyframe after this many seconds; nil for one file.
        var segmentSeconds: Double?
        /// Free bytes the disk must have before a file is started (again).
        var minimumFreeBytes: Int64
    }

    /// A file that is complete (or cut short by `error`) and waits for its name.
    struct FinishedFile: Sendable {
        var temporaryPath: String
        var name: String
        var startTime: Double
        var error: VideoError?
    }

    /// What happened to the recording, as it happens.
    enum Event: Sendable {
        /// A file was opened for the recording; `name` is the name it is written for.
        case fileStarted(name: String)
        /// It stopped taking packets on its own (its `duration`, a write that failed for good)
        /// and is finishing its file: the stage can let it go now. `durationReached` or
        /// `failed` follows once the file is handed over.
        case stopping
        /// It has run for its `duration` and stopped.
        case durationReached
        /// A write failed and it stopped for good.
        case failed(VideoError)
        /// A continuous recording filled the disk: it goes on once there is room.
        case waitingForSpace(VideoError)
        /// There is room again and a new file has started.
        case resumed
    }

    static let backlogLimit = 64 << 20
    /// How often a file is synced to the disk while it grows (fdatasync).
    static let syncSeconds = 5.0
    /// How often a continuous recording stopped by a full disk looks for space again.
    static let spaceCheckSeconds = 5.0

    private let plan: Plan
    private let queue: DispatchQueue
    private let finished: @Sendable (FinishedFile) -> Void
    private let event: @Sendable (Event) -> Void
    private let lock = NSLock()
    private var backlog = 0

    // On `queue` only:
    private var format: VideoStreamFormat?
    private var file: OpenFile?
    private var stopped = false
    /// A continuous recording filled the disk and starts a file again only once there is room.
    private var waitingForSpace = false
    private var lastSpaceCheck = 0.0
    /// The first packet's time of the whole recording, for `duration`.
    private var recordingStartPTS: Int64?

    private final class OpenFile {
        let descriptor: FileDescriptor
        let path: String
        let name: String
        let startTime: Double
        let startPTS: Int64
        var writer: FragmentedMP4Writer?
        var lastSync: Double

        init(descriptor: FileDescriptor, path: String, name: String, startTime: Double, startPTS: Int64, now: Double) {
            self.descriptor = descriptor
            self.path = path
            self.name = name
            self.startTime = startTime
            self.startPTS = startPTS
            lastSync = now
        }
    }

    init(plan: Plan, finished: @escaping @Sendable (FinishedFile) -> Void, event: @escaping @Sendable (Event) -> Void) {
        self.plan = plan
        self.finished = finished
        self.event = event
        queue = DispatchQueue(label: "camd.recording.\(plan.camera)")
    }

    // MARK: VideoConsumer (the video stage's thread)

    func begin(_ format: VideoStreamFormat) {
        queue.async { [self] in
            closeFile()
            self.format = format
        }
    }

    func receive(_ packet: VideoPacket) {
        lock.lock()
        let over = backlog > Self.backlogLimit
        if !over { backlog += packet.data.count }
        lock.unlock()
        guard !over else {
            queue.async { [self] in
                fail(VideoError(.write(errno: EIO), "the disk cannot keep up with the recording (\(Self.backlogLimit >> 20) MiB waiting to be written)"))
            }
            return
        }
        queue.async { [self] in
            lock.lock()
            backlog -= packet.data.count
            lock.unlock()
            write(packet)
        }
    }

    func end() {
        queue.async { [self] in
            closeFile()
            format = nil
        }
    }

    func failed(_ error: VideoError) {
        queue.async { [self] in
            guard !stopped else { return }
            fail(error)
        }
    }

    /// Ends the recording: the open file is finished and handed over; `then` runs after.
    func stop(then: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            closeFile()
            stopped = true
            then()
        }
    }

    // MARK: on the queue

    private func write(_ packet: VideoPacket) {
        guard !stopped, let format else { return }
        let start = recordingStartPTS ?? packet.pts
        if let duration = plan.duration, Double(packet.pts - start) >= duration * Double(format.timeScale) {
            stopped = true
            event(.stopping)
            closeFile()
            event(.durationReached)
            return
        }
        if let open = file, packet.isKeyframe, let segment = plan.segmentSeconds,
           Double(packet.pts - open.startPTS) >= segment * Double(format.timeScale) {
            closeFile()
        }
        if file == nil {
            // A file starts with a keyframe, and only when the disk has room.
            guard packet.isKeyframe, hasRoom() else { return }
            guard openFile(format, first: packet) else { return }
            if recordingStartPTS == nil { recordingStartPTS = packet.pts }
        }
        guard let open = file, let writer = open.writer else { return }
        do throws(VideoError) {
            try writer.write(packet)
        } catch {
            cutShort(open, error)
            return
        }
        let now = FrameHub.monotonicNow()
        if now - open.lastSync >= Self.syncSeconds {
            _ = fdatasync(open.descriptor.rawValue)
            open.lastSync = now
        }
    }

    /// Whether a file may start: after a full disk, only once there is room again.
    private func hasRoom() -> Bool {
        guard waitingForSpace else { return true }
        let now = FrameHub.monotonicNow()
        guard now - lastSpaceCheck >= Self.spaceCheckSeconds else { return false }
        lastSpaceCheck = now
        guard let free = PhotoOutput.freeBytes(onDiskOf: plan.root), free >= plan.minimumFreeBytes else { return false }
        waitingForSpace = false
        event(.resumed)
        return true
    }

    private func openFile(_ format: VideoStreamFormat, first packet: VideoPacket) -> Bool {
        let name: String
        do {
            name = try PhotoOutput.fileName(pattern: "{camera}-{date}-{time}.mp4", camera: plan.camera,
                                            captureTime: packet.captureTime, sequence: 0)
        } catch {
            fail(VideoError(.write(errno: EINVAL), "\(error)"))
            return false
        }
        let folder = PhotoOutput.join(plan.root, plan.camera)
        do {
            try PhotoOutput.makeRoot(plan.root)
            try PhotoOutput.makeCameraFolder(folder, root: plan.root)
        } catch {
            fail(VideoError(.write(errno: EACCES), error.description))
            return false
        }
        // Two recordings of one camera in one second would share a temporary name: count on.
        var path = PhotoOutput.join(folder, PhotoOutput.recordingPrefix + name)
        var counter = 1
        var status = stat()
        while lstat(path, &status) == 0 {
            counter += 1
            path = PhotoOutput.join(folder, PhotoOutput.recordingPrefix + "\(name.dropLast(4))-\(counter).mp4")
        }
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                                                 permissions: [.ownerReadWrite, .groupRead, .otherRead], retryOnInterrupt: true)
        } catch {
            let code = (error as? Errno)?.rawValue ?? EIO
            fail(VideoError(.write(errno: code), "cannot create \(path): \(error)"))
            return false
        }
        let open = OpenFile(descriptor: descriptor, path: path, name: name, startTime: packet.captureTime,
                            startPTS: packet.pts, now: FrameHub.monotonicNow())
        do throws(VideoError) {
            open.writer = try FragmentedMP4Writer(format: format, transform: plan.transform) { bytes in
                do {
                    _ = try descriptor.writeAll(bytes)
                    return 0
                } catch {
                    return (error as? Errno)?.rawValue ?? EIO
                }
            }
        } catch {
            file = open
            cutShort(open, error)
            return false
        }
        file = open
        event(.fileStarted(name: name))
        return true
    }

    /// Finishes the open file and hands it over.
    private func closeFile() {
        guard let open = file else { return }
        file = nil
        do throws(VideoError) {
            try open.writer?.finish()
        } catch {
            return handOver(open, error: error, cutTo: open.writer?.committedBytes)
        }
        handOver(open, error: nil, cutTo: nil)
    }

    /// A write failed: keep the file up to its last whole fragment and stop writing until
    /// there is room (a continuous recording) or for good (one asked for).
    private func cutShort(_ open: OpenFile, _ error: VideoError) {
        file = nil
        let waitsForRoom = error.isDiskFull && plan.segmentSeconds != nil
        if !waitsForRoom {
            stopped = true
            event(.stopping)
        }
        handOver(open, error: error, cutTo: open.writer?.committedBytes ?? 0)
        if waitsForRoom {
            waitingForSpace = true
            lastSpaceCheck = FrameHub.monotonicNow()
            event(.waitingForSpace(error))
            return
        }
        event(.failed(error))
    }

    private func handOver(_ open: OpenFile, error: VideoError?, cutTo length: Int?) {
        if let length { _ = ftruncate(open.descriptor.rawValue, off_t(length)) }
        _ = fsync(open.descriptor.rawValue)
        try? open.descriptor.close()
        finished(FinishedFile(temporaryPath: open.path, name: open.name, startTime: open.startTime, error: error))
    }

    private func fail(_ error: VideoError) {
        if let open = file {
            cutShort(open, error)
        } else {
            stopped = true
            event(.failed(error))
        }
    }
}
