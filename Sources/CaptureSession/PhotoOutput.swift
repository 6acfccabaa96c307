import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Keeps photos as JPEG files under a root folder, one folder per camera
/// (`<root>/<camera>/<name>.jpg`): saves them atomically, lists, finds and
/// deletes them, and applies each camera's retention limits.
///
/// The file work (write, fsync, directory scans, unlink) runs on a serial
/// dispatch queue of its own and is awaited, so it never holds the actor's turn
/// or a thread of the cooperative pool. Because that queue runs one job at a time,
/// "find a free name, then write it" cannot race with another save.
///
/// The photo list comes from an index built by one scan of the folders on first
/// use and kept up to date by every save, delete and retention pass, so listing
/// never touches the disk. Files put into the folders by other programs appear
/// after a restart.
public actor PhotoOutput {
    /// The folder holding one subfolder per camera, e.g. `/var/lib/camd/photos`.
    public nonisolated let root: String

    /// Runs every job that changes the folders, and the first scan, in order.
    let writer = BlockingIO(label: "camd.photo-output.write")
    /// Runs read-only checks, so serving a photo does not wait behind a slow fsync.
    private let reader = BlockingIO(label: "camd.photo-output.read", concurrent: true)

    /// The photos of each camera; valid once `indexed` is true.
    var index: [String: CameraPhotos] = [:]
    private var indexed = false
    private var loading: Task<[String: CameraPhotos], Never>?
    var counters = Statistics()
    var perCamera: [String: CameraTotals] = [:]
    /// Where saves and deletions are published (`photo_saved`, `photo_deleted`, `disk_full`).
    public nonisolated let events: EventLog
    /// The last save failed for a full disk; the next one that works publishes `disk_recovered`.
    private var diskFull = false

    /// - Parameters:
    ///   - root: the photo folder; it and the camera folders in it are created on the first save if missing.
    ///   - events: the daemon's event log.
    public init(root: String, events: EventLog = EventLog()) {
        var root = root.isEmpty ? "." : root
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        self.root = root
        self.events = events
    }

    /// Totals since start, for /metrics.
    public struct Statistics: Sendable, Hashable, Codable {
        public var photosSaved = 0
        public var bytesWritten = 0
        public var saveFailures = 0
        /// Photos deleted on request (`delete(named:)`).
        public var photosDeleted = 0
        /// Photos deleted by retention limits, and their bytes.
        public var retentionDeletions = 0
        public var retentionBytesRemoved = 0
        /// Photos retention wanted to delete but could not.
        public var retentionFailures = 0
        /// Temporary files of a killed run removed by `removeStaleTemporaryFiles()`.
        public var staleTemporaryFilesRemoved = 0
        /// Movies given their names: recordings and timelapses finished, and those
        /// recovered at start-up from a killed run (`recoverInterruptedRecordings`).
        public var moviesSaved = 0
        public var moviesRecovered = 0
        /// Photos on disk now, and their bytes (0 until the folders were first scanned).
        public var photosStored = 0
        public var bytesStored = 0

        public init() {}
    }

    /// One camera's share of the totals since start, for /metrics.
    public struct CameraTotals: Sendable, Hashable, Codable {
        public var photosSaved = 0
        public var bytesWritten = 0
        public var saveFailures = 0
        public var retentionDeletions = 0

        public init() {}
    }

    /// Each camera's totals since start, by camera id (cameras that never saved are absent).
    public var cameraTotals: [String: CameraTotals] { perCamera }

    /// Totals since start and what is stored now.
    public var statistics: Statistics {
        var totals = counters
        totals.photosStored = index.values.reduce(0) { $0 + $1.ascending.count }
        totals.bytesStored = index.values.reduce(0) { $0 + $1.bytes }
        return totals
    }

    // MARK: - Saving

    /// Saves one JPEG as a new photo of `camera`, then applies the camera's retention limits.
    ///
    /// The name comes from `settings.namePattern` and the local time of `captureTime`;
    /// if a photo of any camera already has it, `-2`, `-3`… is added before `.jpg`.
    /// The camera's folder is created if missing. The file is written atomically:
    /// on any failure (a full disk included) nothing half-written is left.
    /// Retention never deletes the photo just saved.
    /// - Returns: the saved photo.
    public func save(_ jpeg: [UInt8], camera: String, settings: PhotoSettings, captureTime: Double,
                     sequence: UInt32, width: Int, height: Int) async throws(PhotoError) -> PhotoRecord {
        let record: PhotoRecord
        do throws(PhotoError) {
            record = try await store(jpeg, camera: camera, pattern: settings.namePattern,
                                     captureTime: captureTime.isFinite && abs(captureTime) < 1e11 ? captureTime : Self.currentTime(),
                                     sequence: sequence, width: width, height: height)
        } catch {
            counters.saveFailures += 1
            perCamera[camera, default: CameraTotals()].saveFailures += 1
            if case .diskFull(let message) = error, !diskFull {
                diskFull = true
                events.publish(.diskFull(.init(path: root, message: message)))
            }
            throw error
        }
        if diskFull {
            diskFull = false
            events.publish(.diskRecovered(.init(path: root, message: "photos of camera \(camera) are saved again in \(root)")))
        }
        events.publish(.photoSaved(.init(camera: camera, name: record.name, bytes: record.bytes, width: width, height: height)))
        counters.photosSaved += 1
        counters.bytesWritten += jpeg.count
        perCamera[camera, default: CameraTotals()].photosSaved += 1
        perCamera[camera, default: CameraTotals()].bytesWritten += jpeg.count
        await retain(camera: camera, settings: settings, now: Self.currentTime(), protecting: record.name)
        return record
    }

    private func store(_ jpeg: [UInt8], camera: String, pattern: String, captureTime: Double,
                       sequence: UInt32, width: Int, height: Int) async throws(PhotoError) -> PhotoRecord {
        try Self.checkCamera(camera)
        let wanted = try Self.fileName(pattern: pattern, camera: camera, captureTime: captureTime, sequence: sequence)
        await loadIndex()
        let root = self.root
        let name = try await writer.run { () throws(PhotoError) -> String in
            try Self.writeNewFile(jpeg, root: root, camera: camera, wanted: wanted, captureTime: captureTime)
        }
        let record = PhotoRecord(name: name, camera: camera, bytes: jpeg.count, captureTime: captureTime,
                                 width: width, height: height, sequence: sequence)
        index[camera, default: CameraPhotos()].insert(record)
        return record
    }

    /// Runs on the writer queue: makes the folders, picks a free name, writes the file.
    private static func writeNewFile(_ jpeg: [UInt8], root: String, camera: String, wanted: String,
                                     captureTime: Double) throws(PhotoError) -> String {
        try makeRoot(root)
        let folder = join(root, camera)
        try makeCameraFolder(folder, root: root)
        // Names are unique across cameras, so a name alone finds a photo.
        let folders = subfolders(of: root).map { join(root, $0) }
        let name = try freeName(wanted, in: folders)
        let path = join(folder, name)
        do { try AtomicFile.write(jpeg, to: path) } catch { throw PhotoError(error) }
        setModificationTime(path, to: captureTime)
        return name
    }

    /// The modification time becomes the capture time (a movie's start), so the next run's
    /// scan orders and ages the file as this run did.
    static func setModificationTime(_ path: String, to captureTime: Double) {
        let seconds = captureTime.rounded(.down)
        let stamp = timespec(tv_sec: time_t(seconds), tv_nsec: Int((captureTime - seconds) * 1e9))
        _ = utimensat(AT_FDCWD, path, [stamp, stamp], AT_SYMLINK_NOFOLLOW)
    }

    static func freeName(_ wanted: String, in folders: [String]) throws(PhotoError) -> String {
        let ending = (MediaKind(fileName: wanted) ?? .photo).fileExtension
        let stem = wanted.dropLast(ending.count)
        for counter in 1...9_999 {
            let candidate = counter == 1 ? wanted : "\(stem)-\(counter)\(ending)"
            guard candidate.utf8.count <= maximumNameBytes else {
                throw .invalidName("The photo name \(candidate) is longer than \(maximumNameBytes) bytes. Shorten the camera's photo name pattern.")
            }
            var status = stat()
            if !folders.contains(where: { lstat(join($0, candidate), &status) == 0 }) { return candidate }
        }
        throw .ioFailure("Files named \(wanted) and \(stem)-2 to -9999\(ending) all exist. Add {ms} or {seq} to the camera's photo name pattern so names differ.")
    }

    /// Creates the root folder and any missing parents; a root that is a symbolic link to a folder is fine.
    static func makeRoot(_ path: String) throws(PhotoError) {
        var status = stat()
        if stat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else {
                throw .ioFailure("The photo folder \(path) is a file, not a folder. Point camd's photo root to a folder, or move the file away.")
            }
            return
        }
        let cause = Errno(rawValue: errno)
        guard cause == .noSuchFileOrDirectory else {
            throw PhotoError(cause, path: path, doing: "opening the photo folder",
                             advice: "Check the photo root setting and the disk it is on.")
        }
        let parent = parentPath(path)
        if parent != path { try makeRoot(parent) }
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw PhotoError(Errno(rawValue: errno), path: path, doing: "creating the photo folder",
                             advice: "Create it by hand, or point the photo root somewhere else.")
        }
    }

    /// Creates a camera's folder; refuses one that exists as a file or a symbolic link.
    static func makeCameraFolder(_ folder: String, root: String) throws(PhotoError) {
        if mkdir(folder, 0o755) == 0 { return }
        let cause = Errno(rawValue: errno)
        guard cause == .fileExists else {
            throw PhotoError(cause, path: folder, doing: "creating the camera's photo folder",
                             advice: "Check that \(root) is a folder camd may write to.")
        }
        var status = stat()
        guard lstat(folder, &status) == 0 else {
            throw PhotoError(Errno(rawValue: errno), path: folder, doing: "opening the camera's photo folder",
                             advice: "Check the disk the photo folder is on.")
        }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: return
        case S_IFLNK:
            throw .ioFailure("\(folder) is a symbolic link; camd keeps photos only in real folders inside \(root). Replace the link with a folder, or point the photo root at the other disk.")
        default:
            throw .ioFailure("\(folder) is a file, not a folder, so the camera's photos cannot go there. Move the file away.")
        }
    }

    // MARK: - Listing, finding and deleting

    /// Photos newest first.
    /// - Parameters:
    ///   - camera: only this camera's photos; nil for all cameras.
    ///   - since: only photos captured at or after this time (seconds since 1970).
    ///   - until: only photos captured before this time; pass the oldest time of
    ///     one page to get the next.
    ///   - limit: at most this many.
    ///   - kind: only photos or only movies; nil for both.
    ///   - after: only records that come after this one in the list's order (older, or as old
    ///     and sorted after it): pass the last record of one page to get the next, which
    ///     neither skips nor repeats photos of equal times. Only its time, name and camera
    ///     count, and it need not exist any more.
    public func list(camera: String? = nil, since: Double? = nil, until: Double? = nil,
                     limit: Int? = nil, kind: MediaKind? = nil, after: PhotoRecord? = nil) async -> [PhotoRecord] {
        await loadIndex()
        let wanted = max(limit ?? Int.max, 0)
        let cameras = camera.map { index[$0].map { [$0] } ?? [] } ?? Array(index.values)
        var slices = cameras.map { photos in
            let slice = photos.slice(since: since, until: until, before: after)
            return kind.map { kind in ArraySlice(slice.filter { $0.kind == kind }) } ?? slice
        }
        var result: [PhotoRecord] = []
        // Merge the cameras' sorted lists from their newest ends.
        while result.count < wanted {
            var newest: Int?
            for i in slices.indices {
                guard let candidate = slices[i].last else { continue }
                if let best = newest, !CameraPhotos.precedes(slices[best].last!, candidate) { continue }
                newest = i
            }
            guard let newest else { break }
            result.append(slices[newest].removeLast())
        }
        return result
    }

    /// The photo called `name` and the path of its file, checked to be a regular
    /// file inside the photo folder.
    /// - Parameter camera: the camera, needed only if files of two cameras have
    ///   the same name (possible for files copied in by hand).
    public func file(named name: String, camera: String? = nil) async throws(PhotoError)
        -> (record: PhotoRecord, path: String) {
        let record = try await lookUp(name, camera: camera)
        let root = self.root
        do throws(PhotoError) {
            let path = try await reader.run { () throws(PhotoError) -> String in
                try Self.locate(name, camera: record?.camera ?? camera, indexed: record != nil, root: root)
            }
            guard let record else { throw PhotoError.notFound(Self.notFoundMessage(name)) }
            return (record, path)
        } catch {
            forgetIfGone(record, error)
            throw error
        }
    }

    /// Deletes the photo called `name`.
    /// - Parameter camera: the camera, needed only if files of two cameras have the same name.
    public func delete(named name: String, camera: String? = nil) async throws(PhotoError) {
        let record = try await lookUp(name, camera: camera)
        let root = self.root
        do throws(PhotoError) {
            try await writer.run { () throws(PhotoError) in
                let path = try Self.locate(name, camera: record?.camera ?? camera, indexed: record != nil, root: root)
                guard record != nil else { throw PhotoError.notFound(Self.notFoundMessage(name)) }
                guard unlink(path) == 0 else {
                    let cause = Errno(rawValue: errno)
                    if cause == .noSuchFileOrDirectory { throw PhotoError.notFound(Self.notFoundMessage(name)) }
                    throw PhotoError(cause, path: path, doing: "deleting the photo",
                                     advice: "Check the disk the photo folder is on.")
                }
            }
        } catch {
            forgetIfGone(record, error)
            throw error
        }
        if let record, index[record.camera]?.remove(record) == true {
            counters.photosDeleted += 1
            events.publish(.photoDeleted(.init(name: record.name, why: .api, camera: record.camera)))
        }
    }

    /// Checks the name and finds its record; nil if no indexed photo has it.
    private func lookUp(_ name: String, camera: String?) async throws(PhotoError) -> PhotoRecord? {
        if let problem = Self.nameProblem(name) {
            throw .invalidName("\(Self.quoted(name)) is not a photo name: \(problem). Use a name from the photo list.")
        }
        if let camera { try Self.checkCamera(camera) }
        await loadIndex()
        let holders = index.values.compactMap { $0.byName[name] }.filter { camera == nil || $0.camera == camera }
        guard holders.count <= 1 else {
            let cameras = holders.map(\.camera).sorted().joined(separator: ", ")
            throw .invalidName("Cameras \(cameras) each have a photo named \(name). Say which camera is meant.")
        }
        return holders.first
    }

    /// Drops a record whose file was removed behind camd's back.
    private func forgetIfGone(_ record: PhotoRecord?, _ error: PhotoError) {
        if let record, case .notFound = error { index[record.camera]?.remove(record) }
    }

    /// Runs on a queue: the path of `name`, checked to be a regular file inside the root.
    /// For a name not in the index, it finds out whether the name points somewhere
    /// it must not (a symbolic link, outside the root), which is worth saying, before
    /// answering "not found".
    private static func locate(_ name: String, camera: String?, indexed: Bool, root: String) throws(PhotoError) -> String {
        if indexed, let camera {
            let path = join(join(root, camera), name)
            try checkInside(path, name: name, root: root)
            return path
        }
        // Symbolic links to folders count here, so a linked folder is reported, not hidden.
        let folders = camera.map { [$0] } ?? entries(of: root).filter { !$0.name.hasPrefix(".") }.map(\.name)
        for folder in folders {
            let path = join(join(root, folder), name)
            var status = stat()
            if lstat(path, &status) == 0 { try checkInside(path, name: name, root: root) }
        }
        throw .notFound(notFoundMessage(name))
    }

    /// Refuses a path that is missing, a symbolic link, not a regular file, or resolves outside `root`.
    private static func checkInside(_ path: String, name: String, root: String) throws(PhotoError) {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            let cause = Errno(rawValue: errno)
            if cause == .noSuchFileOrDirectory || cause == .notDirectory { throw .notFound(notFoundMessage(name)) }
            throw PhotoError(cause, path: path, doing: "opening the photo", advice: "Check the disk the photo folder is on.")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK:
            throw .invalidName("\(name) is a symbolic link (\(path)); camd serves and deletes only its own photo files. Remove the link.")
        default:
            throw .invalidName("\(path) is not a regular file, so it is not a photo. Remove it from the photo folder.")
        }
        guard let real = realPath(path), let realRoot = realPath(root) else { throw .notFound(notFoundMessage(name)) }
        guard real.hasPrefix(realRoot == "/" ? "/" : realRoot + "/") else {
            throw .invalidName("\(name) resolves to \(real), outside the photo folder \(realRoot); camd refuses to serve or delete it. Replace the symbolic link on the way with a real folder.")
        }
    }

    private static func notFoundMessage(_ name: String) -> String {
        "No photo is named \(name). List the photos to see which exist; files copied into the photo folder by hand appear after camd restarts."
    }

    // MARK: - The index

    /// Scans the folders once, on first use; later calls return at once.
    func loadIndex() async {
        if indexed { return }
        let scan: Task<[String: CameraPhotos], Never>
        if let loading {
            scan = loading
        } else {
            let root = self.root, writer = self.writer
            scan = Task { await writer.run { Self.scan(root: root) } }
            loading = scan
        }
        let scanned = await scan.value
        // Another caller may have finished first and changed the index since.
        if !indexed {
            index = scanned
            indexed = true
            loading = nil
        }
    }

    /// Runs on the writer queue: every photo in every camera folder; temporary
    /// files, other names and symbolic links are left out.
    private static func scan(root: String) -> [String: CameraPhotos] {
        var found: [String: CameraPhotos] = [:]
        for camera in subfolders(of: root) where CameraSettings.isValidID(camera) {
            let folder = join(root, camera)
            let records = entries(of: folder).compactMap { entry -> PhotoRecord? in
                guard nameProblem(entry.name) == nil, entry.status.st_mode & S_IFMT == S_IFREG else { return nil }
                return PhotoRecord(foundAt: join(folder, entry.name), name: entry.name, camera: camera, status: entry.status)
            }
            found[camera] = CameraPhotos(records)
        }
        return found
    }

    /// The photos of one camera, oldest first, with a name lookup.
    struct CameraPhotos: Sendable {
        private(set) var ascending: [PhotoRecord] = []
        private(set) var byName: [String: PhotoRecord] = [:]
        private(set) var bytes = 0

        init(_ records: [PhotoRecord] = []) {
            ascending = records.sorted(by: Self.precedes)
            for record in ascending { byName[record.name] = record }
            bytes = ascending.reduce(0) { $0 + $1.bytes }
        }

        /// Oldest first; equal times by name, then camera, so every order is total.
        static func precedes(_ a: PhotoRecord, _ b: PhotoRecord) -> Bool {
            if a.captureTime != b.captureTime { return a.captureTime < b.captureTime }
            if a.name != b.name { return a.name < b.name }
            return a.camera < b.camera
        }

        /// Adds a record, replacing one with the same name.
        mutating func insert(_ record: PhotoRecord) {
            if let old = byName[record.name] { remove(old) }
            if let last = ascending.last, !Self.precedes(last, record) {
                ascending.insert(record, at: firstIndex { !Self.precedes($0, record) })
            } else {
                ascending.append(record)  // the usual case: the newest photo
            }
            byName[record.name] = record
            bytes += record.bytes
        }

        /// Removes exactly this record; a newer photo that took its name stays.
        @discardableResult
        mutating func remove(_ record: PhotoRecord) -> Bool {
            guard byName[record.name] == record else { return false }
            let position = firstIndex { !Self.precedes($0, record) }
            guard position < ascending.count, ascending[position] == record else { return false }
            ascending.remove(at: position)
            byName[record.name] = nil
            bytes -= record.bytes
            return true
        }

        /// The records captured in `since ..< until`, oldest first; with `before`, only
        /// those that precede it.
        func slice(since: Double?, until: Double?, before: PhotoRecord? = nil) -> ArraySlice<PhotoRecord> {
            let lower = since.map { time in firstIndex { $0.captureTime >= time } } ?? 0
            var upper = until.map { time in firstIndex { $0.captureTime >= time } } ?? ascending.count
            if let before { upper = min(upper, firstIndex { !Self.precedes($0, before) }) }
            return ascending[lower..<max(lower, upper)]
        }

        /// Binary search: the first position where `isAtOrAfter` holds; it must
        /// be false for a prefix of `ascending` and true for the rest.
        private func firstIndex(where isAtOrAfter: (PhotoRecord) -> Bool) -> Int {
            var low = 0, high = ascending.count
            while low < high {
                let middle = (low + high) / 2
                if isAtOrAfter(ascending[middle]) { high = middle } else { low = middle + 1 }
            }
            return low
        }
    }

    // MARK: - Names

    static let maximumNameBytes = 255

    /// The file name `pattern` gives for one photo: `{camera}`, `{date}` (YYYYMMDD),
    /// `{time}` (HHMMSS), `{ms}` (3 digits) and `{seq}` (6 digits) are replaced,
    /// in the local time of `captureTime`.
    /// - Throws: `PhotoError.invalidName` for an unknown `{token}` or a result that is not a photo name.
    public static func fileName(pattern: String, camera: String, captureTime: Double,
                                sequence: UInt32) throws(PhotoError) -> String {
        // Whole microseconds first, so 0.123 s is 123 ms and not 122.99999; times
        // past the year 5000 cannot come from a camera and would overflow.
        let time = captureTime.isFinite && abs(captureTime) < 1e11 ? captureTime : 0
        let micros = Int64((time * 1e6).rounded())
        let millis = micros >= 0 ? micros / 1000 : (micros - 999) / 1000
        var seconds = time_t(millis >= 0 ? millis / 1000 : (millis - 999) / 1000)
        let milliseconds = Int(millis - Int64(seconds) * 1000)
        var local = tm()
        localtime_r(&seconds, &local)
        let tokens = [
            "camera": camera,
            "date": padded(Int(local.tm_year) + 1900, 4) + padded(Int(local.tm_mon) + 1, 2) + padded(Int(local.tm_mday), 2),
            "time": padded(Int(local.tm_hour), 2) + padded(Int(local.tm_min), 2) + padded(Int(local.tm_sec), 2),
            "ms": padded(milliseconds, 3),
            "seq": padded(Int(sequence), 6),
        ]
        var name = ""
        var rest = Substring(pattern)
        while let open = rest.firstIndex(of: "{") {
            name += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            let token = String(rest[rest.index(after: open)..<close])
            guard let value = tokens[token] else {
                throw .invalidName("The photo name pattern \(quoted(pattern)) has an unknown token {\(token)}. Use {camera}, {date}, {time}, {ms} and {seq}.")
            }
            name += value
            rest = rest[rest.index(after: close)...]
        }
        name += rest
        if let problem = nameProblem(name) {
            throw .invalidName("The photo name pattern \(quoted(pattern)) gives \(quoted(name)), which is not a photo name: \(problem). Fix the camera's photo name pattern.")
        }
        return name
    }

    /// The naming rule `name` breaks, or nil if it may name a photo. The rules keep
    /// a name inside its folder and hide temporary files (which start with '.').
    static func nameProblem(_ name: String) -> String? {
        let bytes = name.utf8
        if bytes.isEmpty { return "it is empty" }
        if bytes.count > maximumNameBytes { return "it is longer than \(maximumNameBytes) bytes" }
        if bytes.contains(0) { return "it contains a NUL byte" }
        if bytes.contains(UInt8(ascii: "/")) { return "it contains '/'" }
        if name == "." || name == ".." { return "it names a folder" }
        if name.hasPrefix(".") { return "it starts with '.'" }
        guard let kind = MediaKind(fileName: name), bytes.count > kind.fileExtension.utf8.count else {
            return "it does not end in .jpg or .mp4"
        }
        return nil
    }

    static func checkCamera(_ camera: String) throws(PhotoError) {
        guard CameraSettings.isValidID(camera) else {
            throw .invalidName("\(quoted(camera)) is not a camera id: use 1 to 64 letters, digits, '-' and '_'.")
        }
    }

    /// A name in quotes with control characters escaped, safe to put in a message.
    private static func quoted(_ text: String) -> String {
        "\"" + text.unicodeScalars.map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }.joined() + "\""
    }

    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    // MARK: - Files

    /// Seconds since 1970, for retention's "now".
    public static func currentTime() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    private static func parentPath(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The entries of a folder, without "." and "..", with their `lstat`; empty if it cannot be read.
    static func entries(of folder: String) -> [(name: String, status: stat)] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var result: [(name: String, status: stat)] = []
        while let entry = readdir(directory) {
            // Names that are not UTF-8 cannot be photo names; skip them rather than mangle them.
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(validatingCString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            guard let name, name != ".", name != ".." else { continue }
            var status = stat()
            guard fstatat(dirfd(directory), name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            result.append((name, status))
        }
        return result
    }

    /// The real folders (not symbolic links) in `root` whose names do not start with '.'.
    static func subfolders(of root: String) -> [String] {
        entries(of: root).filter { !$0.name.hasPrefix(".") && $0.status.st_mode & S_IFMT == S_IFDIR }.map(\.name)
    }
}
