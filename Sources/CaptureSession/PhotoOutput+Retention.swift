import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A camera's retention limits for one kind of media: `[camera.photos]` for photos,
/// `[camera.video]` for movies. Each kind is counted and trimmed on its own.
public protocol RetentionLimits: Sendable {
    /// Keep at most this many files of the kind.
    var keepCount: Int? { get }
    /// Keep at most this many bytes of the kind.
    var keepBytes: Int64? { get }
    /// Delete files of the kind older than this.
    var keepSeconds: Double? { get }
}

extension PhotoSettings: RetentionLimits {}

extension PhotoOutput {
    /// What one retention pass removed, for logs and metrics.
    public struct RetentionResult: Sendable, Hashable {
        public var removedFiles = 0
        public var removedBytes = 0
        /// Photos that should have gone but could not be deleted; they stay listed.
        public var failures: [PhotoError] = []

        public init() {}
    }

    /// Deletes `camera`'s photos that break its limits, oldest first: everything
    /// captured more than `keepSeconds` before `now`, then the oldest until at most
    /// `keepCount` remain and their total is at most `keepBytes`. The newest photo
    /// is never deleted for the bytes limit, even if it alone exceeds it.
    /// `save` runs this after every photo.
    @discardableResult
    public func applyRetention(camera: String, settings: some RetentionLimits, kind: MediaKind = .photo,
                               now: Double = PhotoOutput.currentTime()) async -> RetentionResult {
        await retain(camera: camera, settings: settings, kind: kind, now: now, protecting: nil)
    }

    /// - Parameter protecting: a file to keep whatever the limits say: the one just saved.
    @discardableResult
    func retain(camera: String, settings: some RetentionLimits, kind: MediaKind = .photo, now: Double,
                protecting: String?) async -> RetentionResult {
        var result = RetentionResult()
        guard settings.keepCount != nil || settings.keepBytes != nil || settings.keepSeconds != nil else { return result }
        await loadIndex()
        guard let photos = index[camera] else { return result }
        let victims = Self.retentionVictims(photos.ascending.filter { $0.kind == kind }, settings: settings, now: now,
                                            protecting: protecting)
        guard !victims.isEmpty else { return result }

        let root = self.root
        let outcomes = await writer.run { () -> [Errno?] in
            victims.map { record in
                // unlink removes a symbolic link itself, never what it points to.
                unlink(Self.join(Self.join(root, record.camera), record.name)) == 0 ? nil : Errno(rawValue: errno)
            }
        }
        for (record, failure) in zip(victims, outcomes) {
            switch failure {
            case nil:
                result.removedFiles += 1
                result.removedBytes += record.bytes
                index[camera]?.remove(record)
                events.publish(.photoDeleted(.init(name: record.name, why: .retention, camera: camera)))
            case .noSuchFileOrDirectory?:
                index[camera]?.remove(record)  // already gone: only the list was out of date
            case let cause?:
                result.failures.append(PhotoError(cause, path: Self.join(Self.join(root, record.camera), record.name),
                                                  doing: "deleting an old photo for retention",
                                                  advice: "Check the disk the photo folder is on."))
            }
        }
        counters.retentionDeletions += result.removedFiles
        perCamera[camera, default: CameraTotals()].retentionDeletions += result.removedFiles
        counters.retentionBytesRemoved += result.removedBytes
        counters.retentionFailures += result.failures.count
        return result
    }

    /// The photos to delete, oldest first, from one camera's photos sorted oldest first.
    static func retentionVictims(_ ascending: [PhotoRecord], settings: some RetentionLimits, now: Double,
                                 protecting: String?) -> [PhotoRecord] {
        var victims: [PhotoRecord] = []
        var kept: [PhotoRecord] = []
        for record in ascending {
            if let keepSeconds = settings.keepSeconds, record.captureTime < now - keepSeconds, record.name != protecting {
                victims.append(record)
            } else {
                kept.append(record)
            }
        }
        var count = kept.count
        var bytes = kept.reduce(Int64(0)) { $0 + Int64($1.bytes) }
        for (position, record) in kept.enumerated() where record.name != protecting {
            let overCount = settings.keepCount.map { count > max($0, 0) } ?? false
            let isNewest = position == kept.count - 1
            let overBytes = !isNewest && (settings.keepBytes.map { bytes > $0 } ?? false)
            guard overCount || overBytes else { continue }
            victims.append(record)
            count -= 1
            bytes -= Int64(record.bytes)
        }
        return victims
    }

    /// Deletes the temporary files (`AtomicFile.temporaryPrefix`) a killed run left
    /// in the camera folders. Call it once at start-up.
    /// - Returns: how many were deleted.
    public func removeStaleTemporaryFiles() async -> Int {
        let root = self.root
        // On the writer queue, so no save of this run is between write and rename.
        let removed = await writer.run { () -> Int in
            var removed = 0
            for camera in Self.subfolders(of: root) {
                let folder = Self.join(root, camera)
                for entry in Self.entries(of: folder)
                where entry.name.hasPrefix(AtomicFile.temporaryPrefix) && entry.status.st_mode & S_IFMT == S_IFREG {
                    if unlink(Self.join(folder, entry.name)) == 0 { removed += 1 }
                }
            }
            return removed
        }
        counters.staleTemporaryFilesRemoved += removed
        return removed
    }
}
