import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension FileHandle {
    /// Everything the pipe delivers until its writer closes it.
    ///
    /// Written by hand because Foundation's `readDataToEndOfFile()` traps (`try!`) on any
    /// read error, EINTR included: the whole test process died when a signal reached the
    /// reading thread while the suite ran tools in parallel. Retries EINTR, and waits in
    /// `poll` where the descriptor is non-blocking.
    public func readAll() -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let fd = fileDescriptor
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
            } else if count == 0 {
                return data
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN {
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, 1000)
            } else {
                return data
            }
        }
    }
}
