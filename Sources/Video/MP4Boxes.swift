import SystemPackage

/// Where a fragmented MP4 cut short stops being whole.
///
/// Written by hand because libavformat reads such a file (up to its last whole fragment)
/// but has no call that says where that is; what is needed is only the top-level box
/// headers (a 32-bit size and a type, or a 64-bit size after `size == 1`), not their
/// contents, so this reads a few bytes per fragment and interprets nothing else.
public enum MP4Boxes {
    /// The length of the longest prefix of the file at `path` made of whole top-level boxes
    /// that ends after the header (`moov`) or after a whole fragment (`moof` then its `mdat`),
    /// or after the index (`mfra`) of a finished file; 0 if there is no whole header.
    public static func wholeLength(ofFileAt path: String) -> Int {
        guard let file = try? FileDescriptor.open(path, .readOnly, options: [.closeOnExec], retryOnInterrupt: true) else { return 0 }
        defer { try? file.close() }
        var offset = 0, whole = 0
        var header = [UInt8](repeating: 0, count: 16)
        while true {
            let got = (try? header.withUnsafeMutableBytes {
                try file.read(fromAbsoluteOffset: Int64(offset), into: $0, retryOnInterrupt: true)
            }) ?? 0
            guard got >= 8 else { return whole }
            var size = header[0..<4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if size == 1 {
                guard got >= 16 else { return whole }
                size = header[8..<16].reduce(0) { $0 << 8 | Int($1) }
            }
            // Size 0 means "to the end of the file": a box still being written.
            guard size >= 8, let end = Optional(offset + size), end > offset,
                  let fileSize = try? file.seek(offset: 0, from: .end), end <= Int(fileSize) else { return whole }
            if type == "moov" || type == "mdat" || type == "mfra" { whole = end }
            offset = end
        }
    }
}
