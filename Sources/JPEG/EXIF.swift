#if canImport(Glibc)
import Glibc
#endif

/// Builds the EXIF (APP1) segment camd writes into every JPEG: when the frame
/// was captured (to the microsecond, with the UTC offset), which camera, which program.
public struct EXIF: Hashable, Sendable {
    /// Seconds since 1970 when the frame was captured.
    public var captureTime: Double
    public var make: String?
    public var model: String?
    public var software: String = "camd"
    public var pixelWidth: Int?
    public var pixelHeight: Int?
    /// How a viewer should turn the pixels (tag 0x0112, for `rotate=exif`); nil leaves the tag out.
    public var orientation: Orientation?
    /// Where the camera stands (the GPS IFD); nil leaves it out.
    public var gps: GPSPosition?

    public init(captureTime: Double, make: String? = nil, model: String? = nil, pixelWidth: Int? = nil, pixelHeight: Int? = nil) {
        self.captureTime = captureTime
        self.make = make
        self.model = model
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
    }

    /// The capture time in EXIF's forms, in local time: "2026:11:22 06:07:20", "123456", "+01:00".
    public var timestamps: (dateTime: String, subSeconds: String, offset: String) {
        var seconds = time_t(captureTime.rounded(.down))
        let micros = Int(((captureTime - Double(seconds)) * 1_000_000).rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let date = "\(parts.tm_year + 1900):\(two(parts.tm_mon + 1)):\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
        let offsetMinutes = Int(parts.tm_gmtoff) / 60
        let sign = offsetMinutes < 0 ? "-" : "+"
        let offset = "\(sign)\(two(Int32(abs(offsetMinutes) / 60))):\(two(Int32(abs(offsetMinutes) % 60)))"
        var sub = String(micros)
        while sub.count < 6 { sub = "0" + sub }
        return (date, sub, offset)
    }

    /// The whole APP1 segment, marker included.
    public var segment: [UInt8] {
        let (dateTime, subSeconds, offset) = timestamps
        var ifd0: [Entry] = []
        if let make { ifd0.append(.ascii(0x010F, make)) }
        if let model { ifd0.append(.ascii(0x0110, model)) }
        ifd0.append(.ascii(0x0131, software))
        ifd0.append(.ascii(0x0132, dateTime))
        var exif: [Entry] = [
            .undefined(0x9000, Array("0232".utf8)),
            .ascii(0x9003, dateTime),
            .ascii(0x9011, offset),
            .ascii(0x9291, subSeconds),
        ]
        if let pixelWidth { exif.append(.long(0xA002, UInt32(pixelWidth))) }
        if let pixelHeight { exif.append(.long(0xA003, UInt32(pixelHeight))) }

        if let orientation { ifd0.append(Self.short(0x0112, orientation.rawValue)) }
        let gpsIFD = gps?.entries ?? []

        // TIFF header, then IFD0 (with pointers to the Exif and GPS IFDs), then the Exif IFD, then the GPS IFD.
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00]
        let pointers = gpsIFD.isEmpty ? 1 : 2
        let ifd0Size = 2 + (ifd0.count + pointers) * 12 + 4 + ifd0.reduce(0) { $0 + $1.overflow.count }
        ifd0.append(.long(0x8769, UInt32(8 + ifd0Size)))
        if !gpsIFD.isEmpty { ifd0.append(.long(0x8825, UInt32(8 + ifd0Size + Self.ifdSize(exif)))) }
        Self.write(ifd0, at: 8, into: &tiff)
        Self.write(exif, at: tiff.count, into: &tiff)
        if !gpsIFD.isEmpty { Self.write(gpsIFD, at: tiff.count, into: &tiff) }
        return [0xFF, 0xE1] + Self.be16(2 + 6 + tiff.count) + Array("Exif".utf8) + [0, 0] + tiff
    }

    /// Inserts the segment after SOI and any JFIF APP0, where readers look for it.
    public func inserted(into jpeg: [UInt8]) -> [UInt8] {
        guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return jpeg }
        var at = 2
        if jpeg.count > 6, jpeg[2] == 0xFF, jpeg[3] == 0xE0 {
            at = 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5]))
        }
        guard at <= jpeg.count else { return jpeg }
        var output = [UInt8]()
        output.reserveCapacity(jpeg.count + 256)
        output.append(contentsOf: jpeg[0..<at])
        output.append(contentsOf: segment)
        output.append(contentsOf: jpeg[at...])
        return output
    }

    enum Entry {
        case ascii(UInt16, String), long(UInt16, UInt32), undefined(UInt16, [UInt8])
        /// Any other TIFF type, already encoded (SHORT, RATIONAL, BYTE: see EXIF+Orientation.swift).
        case raw(UInt16, type: UInt16, count: UInt32, bytes: [UInt8])
        var tag: UInt16 {
            switch self { case .ascii(let t, _), .long(let t, _), .undefined(let t, _), .raw(let t, _, _, _): return t }
        }
        /// Type, count and the value bytes (inline when four or fewer).
        var encoded: (type: UInt16, count: UInt32, bytes: [UInt8]) {
            switch self {
            case .ascii(_, let text):
                let bytes = Array(text.utf8.filter { $0 < 0x80 }) + [0]
                return (2, UInt32(bytes.count), bytes)
            case .long(_, let value): return (4, 1, EXIF.le32(value))
            case .undefined(_, let bytes): return (7, UInt32(bytes.count), bytes)
            case .raw(_, let type, let count, let bytes): return (type, count, bytes)
            }
        }
        var overflow: [UInt8] {
            let bytes = encoded.bytes
            return bytes.count > 4 ? bytes + (bytes.count % 2 == 1 ? [0] : []) : []
        }
    }

    private static func write(_ entries: [Entry], at start: Int, into tiff: inout [UInt8]) {
        let sorted = entries.sorted { $0.tag < $1.tag }
        var dataOffset = start + 2 + sorted.count * 12 + 4
        var table = le16(sorted.count), data: [UInt8] = []
        for entry in sorted {
            let (type, count, bytes) = entry.encoded
            table += le16(Int(entry.tag)) + le16(Int(type)) + le32(count)
            if bytes.count <= 4 {
                table += bytes + [UInt8](repeating: 0, count: 4 - bytes.count)
            } else {
                table += le32(UInt32(dataOffset))
                data += entry.overflow
                dataOffset += entry.overflow.count
            }
        }
        table += le32(0)  // no next IFD
        tiff += table + data
    }

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> ($0 * 8)) & 0xFF) } }
    static func be16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
}
