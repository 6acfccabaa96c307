import CV4L2
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Every system call the device layer makes passes through here, so EINTR is
/// retried in one place and tests have one place to look.
enum Syscall {
    /// `ioctl(fd, request, &argument)`, retried on EINTR.
    static func ioctl<Argument>(_ fd: FileDescriptor, _ request: UInt, _ argument: inout Argument) -> Result<Void, Errno> {
        while true {
            let status = withUnsafeMutablePointer(to: &argument) { CV4L2_ioctl(fd.rawValue, request, $0) }
            if status != -1 { return .success(()) }
            let error = Errno(rawValue: Glibc.errno)
            if error != .interrupted { return .failure(error) }
        }
    }

    /// `poll` on one descriptor, retried on EINTR; returns the revents.
    static func poll(_ fd: FileDescriptor, events: Int16, timeoutMilliseconds: Int32) -> Result<Int16, Errno> {
        var entry = pollfd(fd: fd.rawValue, events: events, revents: 0)
        while true {
            let count = Glibc.poll(&entry, 1, timeoutMilliseconds)
            if count >= 0 { return .success(count == 0 ? 0 : entry.revents) }
            let error = Errno(rawValue: Glibc.errno)
            if error != .interrupted { return .failure(error) }
        }
    }

    /// `mmap` a shared, read-only mapping of a device buffer.
    static func mapBuffer(_ fd: FileDescriptor, length: Int, offset: Int) -> Result<UnsafeRawPointer, Errno> {
        let address = mmap(nil, length, PROT_READ, MAP_SHARED, fd.rawValue, off_t(offset))
        guard let address, address != MAP_FAILED else { return .failure(Errno(rawValue: Glibc.errno)) }
        return .success(UnsafeRawPointer(address))
    }

    static func unmapBuffer(_ address: UnsafeRawPointer, length: Int) {
        _ = munmap(UnsafeMutableRawPointer(mutating: address), length)
    }

    /// `stat` a path, following symbolic links.
    static func stat(_ path: String) -> Result<Glibc.stat, Errno> {
        var info = Glibc.stat()
        if fstatat(AT_FDCWD, path, &info, 0) == 0 { return .success(info) }
        return .failure(Errno(rawValue: Glibc.errno))
    }
}

/// Reads a fixed-size C character array (imported as a tuple) as a String.
func string<T>(fromCArray tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
}
