import SystemPackage
import Video
#if canImport(Glibc)
import Glibc
#endif

/// Movies in the media library: recordings and timelapse movies are written under a
/// hidden temporary name in the camera's folder while they grow, and take their final
/// name only when finished (`adoptVideo`), so a final name never holds a half-written
/// file. A recording cut short by a crash is still playable up to its last fragment
/// (fragmented MP4), and the next start gives it its name (`recoverInterruptedRecordings`).
extension PhotoOutput {
    /// The prefix of a recording still being written: `.camd-rec-<final name>`. A killed
    /// run's are adopted at the next start; a timelapse render's temporary files use
    /// `AtomicFile.temporaryPrefix` and are removed instead, since half a render is no movie.
    public static let recordingPrefix = ".camd-rec-"

    /// Gives a finished movie its final name in the camera's folder and lists it: picks a
    /// free name as photos do (`-2`, `-3`…), makes the file and the rename durable, sets
    /// the file's time to `captureTime` (the movie's start), reads its length and size,
    /// then applies `retention` to the camera's movies (never deleting this one).
    /// A file with no frame in it is removed instead, and `.notFound` thrown.
    public func adoptVideo(at temporaryPath: String, camera: String, name wanted: String, captureTime: Double,
                           retention: (any RetentionLimits)? = nil) async throws(PhotoError) -> PhotoRecord {
        try Self.checkCamera(camera)
        guard MediaKind(fileName: wanted) == .video, Self.nameProblem(wanted) == nil else {
            throw .invalidName("\(wanted) is not a movie name: it must end in .mp4 and not start with '.'")
        }
        await loadIndex()
        let root = self.root
        let record = try await writer.run { () throws(PhotoError) -> PhotoRecord in
            try Self.adopt(temporaryPath, root: root, camera: camera, wanted: wanted, captureTime: captureTime)
        }
        index[camera, default: CameraPhotos()].insert(record)
        counters.moviesSaved += 1
        counters.bytesWritten += record.bytes
        if let retention {
            await retain(camera: camera, settings: retention, kind: .video, now: Self.currentTime(), protecting: record.name)
        }
        return record
    }

    /// Runs on the writer queue.
    private static func adopt(_ temporary: String, root: String, camera: String, wanted: String,
                              captureTime: Double) throws(PhotoError) -> PhotoRecord {
        let info: VideoFile.Info
        do {
            info = try VideoFile(path: temporary).info
        } catch {
            unlink(temporary)
            throw .notFound("The movie \(wanted) holds no frame (\(error)); nothing was kept.")
        }
        let fd = open(temporary, O_RDONLY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
        let folder = join(root, camera)
        let name = try freeName(wanted, in: subfolders(of: root).map { join(root, $0) })
        let path = join(folder, name)
        guard rename(temporary, path) == 0 else {
            let cause = Errno(rawValue: errno)
            throw PhotoError(cause, path: path, doing: "giving the finished movie its name",
                             advice: "Check the disk the photo folder is on.")
        }
        let dir = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 { fsync(dir); close(dir) }
        setModificationTime(path, to: captureTime)
        var status = stat()
        let bytes = lstat(path, &status) == 0 ? Int(status.st_size) : 0
        return PhotoRecord(name: name, camera: camera, bytes: bytes, captureTime: captureTime,
                           width: info.displaySize.width, height: info.displaySize.height, sequence: nil,
                           kind: .video, duration: info.duration, rotate: info.rotate)
    }

    /// Gives the recordings a killed run left (`recordingPrefix`) their names: each plays
    /// up to its last whole fragment. One without a whole fragment is removed. Call once
    /// at start-up, before any recording starts.
    /// - Returns: the movies recovered.
    public func recoverInterruptedRecordings() async -> [PhotoRecord] {
        let root = self.root
        let found = await writer.run { () -> [(camera: String, path: String, name: String, time: Double)] in
            Self.subfolders(of: root).filter(CameraSettings.isValidID).flatMap { camera in
                let folder = Self.join(root, camera)
                return Self.entries(of: folder).compactMap { entry -> (camera: String, path: String, name: String, time: Double)? in
                    guard entry.name.hasPrefix(Self.recordingPrefix), entry.status.st_mode & S_IFMT == S_IFREG else { return nil }
                    let name = String(entry.name.dropFirst(Self.recordingPrefix.count))
                    // When the file last grew: the recording started its length before that.
                    let time = Double(entry.status.st_ctim.tv_sec)
                    return (camera, Self.join(folder, entry.name), name, time)
                }
            }
        }
        var recovered: [PhotoRecord] = []
        for movie in found {
            // A kill between the writes of one fragment leaves part of it: cut back to the last
            // whole one. Read, cut and probed off the actor: an hour's file is thousands of reads.
            let start = await writer.run { () -> Double in
                let whole = MP4Boxes.wholeLength(ofFileAt: movie.path)
                _ = truncate(movie.path, off_t(whole))
                return (try? VideoFile(path: movie.path).info.duration).map { movie.time - $0 } ?? movie.time
            }
            if let record = try? await adoptVideo(at: movie.path, camera: movie.camera, name: movie.name, captureTime: start) {
                recovered.append(record)
            }
        }
        counters.moviesRecovered += recovered.count
        return recovered
    }

    /// Free bytes on the disk of `path` (for an unprivileged user), or nil if unknown.
    public static func freeBytes(onDiskOf path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }
}
