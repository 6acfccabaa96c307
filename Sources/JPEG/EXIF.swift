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
        let exifFields = exif.map(\.field), gpsFields = (gps?.entries ?? []).map(\.field)
        var ifd0Fields = ifd0.map(\.field)

        // IFD0 (with pointers to the Exif and GPS IFDs), then the Exif IFD, then the GPS IFD.
        let pointers = gpsFields.isEmpty ? 1 : 2
        let ifd0Size = Self.ifdSize(ifd0Fields) + pointers * 12
        ifd0Fields.append(Entry.long(0x8769, UInt32(8 + ifd0Size)).field)
        if !gpsFields.isEmpty { ifd0Fields.append(Entry.long(0x8825, UInt32(8 + ifd0Size + Self.ifdSize(exifFields))).field) }
        // APP1 marker, its length (filled in last), "Exif\0\0", then the TIFF header: little-endian, IFD0 at 8.
        var segment: [UInt8] = [0xFF, 0xE1, 0, 0, 0x45, 0x78, 0x69, 0x66, 0, 0]
        segment.reserveCapacity(512)
        let tiffStart = segment.count
        segment += [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00]
        Self.write(ifd0Fields, tiffStart: tiffStart, into: &segment)
        Self.write(exifFields, tiffStart: tiffStart, into: &segment)
        if !gpsFields.isEmpty { Self.write(gpsFields, tiffStart: tiffStart, into: &segment) }
        let length = segment.count - 2
        segment[2] = UInt8(length >> 8)
        segment[3] = UInt8(length & 0xFF)
        return segment
    }

    /// Inserts the segment after SOI and any JFIF APP0, where readers look for it.
    public func inserted(into jpeg: [UInt8]) -> [UInt8] {
        guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return jpeg }
        var at = 2
        if jpeg[2] == 0xFF, jpeg[3] == 0xE0 {
            var segments = JPEGSegments(jpeg)
            guard let app0 = segments.next() else { return jpeg }  // an APP0 that runs past the end
            at = app0.end
        }
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
        /// The entry encoded once: type, count and the value bytes (inline when four or fewer).
        var field: Field {
            switch self {
            case .ascii(let tag, let text):
                // A plain loop: the lazy filter it replaces ran unspecialized, about 2,000
                // instructions a field on every snapshot answer (callgrind).
                var bytes: [UInt8] = []
                bytes.reserveCapacity(text.utf8.count + 1)
                for byte in text.utf8 where byte < 0x80 { bytes.append(byte) }
                bytes.append(0)
                return Field(tag: tag, type: 2, count: UInt32(bytes.count), bytes: bytes)
            case .long(let tag, let value): return Field(tag: tag, type: 4, count: 1, bytes: EXIF.le32(value))
            case .undefined(let tag, let bytes): return Field(tag: tag, type: 7, count: UInt32(bytes.count), bytes: bytes)
            case .raw(let tag, let type, let count, let bytes): return Field(tag: tag, type: type, count: count, bytes: bytes)
            }
        }
    }

    /// An IFD entry ready to write.
    struct Field {
        var tag: UInt16, type: UInt16, count: UInt32, bytes: [UInt8]
        /// Bytes stored after the IFD's table: values over four bytes, padded to an even length.
        var overflowSize: Int { bytes.count > 4 ? bytes.count + bytes.count % 2 : 0 }
    }

    /// Appends an IFD, in tag order: count, entries, no next IFD, then the values too big
    /// to sit inline. Offsets count from the TIFF header at `tiffStart`.
    private static func write(_ fields: [Field], tiffStart: Int, into out: inout [UInt8]) {
        let sorted = fields.sorted { $0.tag < $1.tag }
        var dataOffset = out.count - tiffStart + 2 + sorted.count * 12 + 4
        appendLE16(sorted.count, to: &out)
        for field in sorted {
            appendLE16(Int(field.tag), to: &out)
            appendLE16(Int(field.type), to: &out)
            appendLE32(field.count, to: &out)
            if field.bytes.count <= 4 {
                out += field.bytes
                for _ in field.bytes.count..<4 { out.append(0) }
            } else {
                appendLE32(UInt32(dataOffset), to: &out)
                dataOffset += field.overflowSize
            }
        }
        appendLE32(0, to: &out)  // no next IFD
        for field in sorted where field.bytes.count > 4 {
            out += field.bytes
            if field.bytes.count % 2 == 1 { out.append(0) }
        }
    }

    private static func appendLE16(_ v: Int, to out: inout [UInt8]) {
        out.append(UInt8(v & 0xFF))
        out.append(UInt8((v >> 8) & 0xFF))
    }

    private static func appendLE32(_ v: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((v >> UInt32(shift)) & 0xFF)) }
    }

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    static func be16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> ($0 * 8)) & 0xFF) } }
}
