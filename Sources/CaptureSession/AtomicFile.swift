import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A file that could not be written, with the path and the cause.
public struct OutputError: Error, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable {
        case noSpace = "no_space"
        case permissionDenied = "permission_denied"
        case missingFolder = "missing_folder"
        case other = "write_failed"
    }
    public var kind: Kind
    public var path: String
    public var description: String
}

/// Writes files so that a reader sees either the old file or the whole new one:
/// a temporary file in the same folder, fsync, rename, fsync of the folder.
/// On any failure the temporary file is removed and nothing half-written stays.
public enum AtomicFile {
    /// Prefix of temporary files, so a restarted daemon can clean up after a killed one.
    public static let temporaryPrefix = ".camd-tmp-"

    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(OutputError) {
        let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let folderPath = folder.isEmpty ? "/" : folder
        let base = path.split(separator: "/").last.map(String.init) ?? path
        var template = Array("\(folderPath)/\(temporaryPrefix)\(base).XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw failure(Errno(rawValue: errno), path, "creating a temporary file in \(folderPath)") }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let descriptor = FileDescriptor(rawValue: fd)
        do {
            _ = fchmod(fd, mode)
            var written = 0
            try bytes.withUnsafeBytes { raw in
                while written < raw.count {
                    written += try descriptor.write(UnsafeRawBufferPointer(rebasing: raw[written...]), retryOnInterrupt: true)
                }
            }
            guard fsync(fd) == 0 else { throw Errno(rawValue: errno) }
            try descriptor.close()
        } catch {
            try? descriptor.close()
            unlink(temporary)
            throw failure(error as? Errno ?? .ioError, path, "writing \(bytes.count) bytes")
        }
        guard rename(temporary, path) == 0 else {
            let cause = Errno(rawValue: errno)
            unlink(temporary)
            throw failure(cause, path, "renaming the finished file into place")
        }
        // Make the rename itself durable.
        let dir = open(folderPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 { fsync(dir); close(dir) }
    }

    static func failure(_ cause: Errno, _ path: String, _ during: String) -> OutputError {
        switch cause {
        case .noSpace, .diskQuotaExceeded:
            return OutputError(kind: .noSpace, path: path, description: "Cannot write \(path): the disk is full (\(cause)) while \(during); nothing was left behind. Free some space or lower retention.")
        case .permissionDenied, .notPermitted, .readOnlyFileSystem:
            return OutputError(kind: .permissionDenied, path: path, description: "Cannot write \(path): \(cause) while \(during). Choose a folder this user may write to.")
        case .noSuchFileOrDirectory, .notDirectory:
            return OutputError(kind: .missingFolder, path: path, description: "Cannot write \(path): its folder does not exist (\(cause)). Create it first.")
        default:
            return OutputError(kind: .other, path: path, description: "Cannot write \(path): \(cause) while \(during).")
        }
    }
}
