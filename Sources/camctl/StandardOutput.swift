import SystemPackage

enum StandardOutput {
    static func write(_ bytes: [UInt8]) throws {
        var written = 0
        try bytes.withUnsafeBytes { raw in
            while written < raw.count {
                written += try FileDescriptor.standardOutput.write(UnsafeRawBufferPointer(rebasing: raw[written...]), retryOnInterrupt: true)
            }
        }
    }
}
