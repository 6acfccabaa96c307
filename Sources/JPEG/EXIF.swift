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
        let (dateTime, subSeconds, offset) = timestampValues
        func text(_ value: [UInt8]) -> String { String(decoding: value.dropLast(), as: UTF8.self) }
        return (text(dateTime), text(subSeconds), text(offset))
    }

    /// `timestamps` as the segment holds them: ASCII, each ending in its NUL. Written digit by
    /// digit: string interpolation made them at about 7,000 instructions a snapshot answer.
    var timestampValues: (dateTime: [UInt8], subSeconds: [UInt8], offset: [UInt8]) {
        var seconds = time_t(captureTime.rounded(.down))
        let micros = Int(((captureTime - Double(seconds)) * 1_000_000).rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        func append(_ value: Int, digits: Int, then separator: UInt8, to out: inout [UInt8]) {
            var unit = 1
            for _ in 1..<digits { unit *= 10 }
            while unit > 0 {
                out.append(UInt8(ascii: "0") + UInt8(value / unit % 10))
                unit /= 10
            }
            out.append(separator)
        }
        var dateTime: [UInt8] = []
        dateTime.reserveCapacity(20)
        append(Int(parts.tm_year) + 1900, digits: 4, then: UInt8(ascii: ":"), to: &dateTime)
        append(Int(parts.tm_mon) + 1, digits: 2, then: UInt8(ascii: ":"), to: &dateTime)
        append(Int(parts.tm_mday), digits: 2, then: UInt8(ascii: " "), to: &dateTime)
        append(Int(parts.tm_hour), digits: 2, then: UInt8(ascii: ":"), to: &dateTime)
        append(Int(parts.tm_min), digits: 2, then: UInt8(ascii: ":"), to: &dateTime)
        append(Int(parts.tm_sec), digits: 2, then: 0, to: &dateTime)
        var subSeconds: [UInt8] = []
        append(micros, digits: 6, then: 0, to: &subSeconds)
        let offsetMinutes = Int(parts.tm_gmtoff) / 60
        var offset: [UInt8] = [offsetMinutes < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+")]
        append(abs(offsetMinutes) / 60, digits: 2, then: UInt8(ascii: ":"), to: &offset)
        append(abs(offsetMinutes) % 60, digits: 2, then: 0, to: &offset)
        return (dateTime, subSeconds, offset)
    }

    /// The whole APP1 segment, marker included. Every snapshot answer builds one, so each
    /// entry's value is made once and written straight into the segment.
    public var segment: [UInt8] {
        let (dateTime, subSeconds, offset) = timestampValues
        // Each IFD in tag order, as TIFF wants it.
        var ifd0: [Entry] = []
        ifd0.reserveCapacity(7)
        let makeValue = make.map(Self.asciiValue)  // camd names the card as both make and model
        if let makeValue { ifd0.append(.text(0x010F, makeValue)) }
        if let model { ifd0.append(.text(0x0110, model == make ? makeValue ?? [] : Self.asciiValue(model))) }
        if let orientation { ifd0.append(Self.short(0x0112, orientation.rawValue)) }
        ifd0.append(.ascii(0x0131, software))
        ifd0.append(.text(0x0132, dateTime))
        var exif: [Entry] = [
            .undefined(0x9000, Self.exifVersion),
            .text(0x9003, dateTime),
            .text(0x9011, offset),
            .text(0x9291, subSeconds),
        ]
        if let pixelWidth { exif.append(.long(0xA002, UInt32(pixelWidth))) }
        if let pixelHeight { exif.append(.long(0xA003, UInt32(pixelHeight))) }
        let gpsEntries = gps?.entries ?? []

        // IFD0 (with pointers to the Exif and GPS IFDs), then the Exif IFD, then the GPS IFD.
        let pointers = gpsEntries.isEmpty ? 1 : 2
        let ifd0Size = Self.ifdSize(ifd0) + pointers * 12
        ifd0.append(.long(0x8769, UInt32(8 + ifd0Size)))
        if !gpsEntries.isEmpty { ifd0.append(.long(0x8825, UInt32(8 + ifd0Size + Self.ifdSize(exif)))) }
        // APP1 marker, its length (filled in last), "Exif\0\0", then the TIFF header: little-endian, IFD0 at 8.
        var segment: [UInt8] = [0xFF, 0xE1, 0, 0, 0x45, 0x78, 0x69, 0x66, 0, 0]
        segment.reserveCapacity(512)
        let tiffStart = segment.count
        segment += [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00]
        Self.write(ifd0, tiffStart: tiffStart, into: &segment)
        Self.write(exif, tiffStart: tiffStart, into: &segment)
        if !gpsEntries.isEmpty { Self.write(gpsEntries, tiffStart: tiffStart, into: &segment) }
        let length = segment.count - 2
        segment[2] = UInt8(length >> 8)
        segment[3] = UInt8(length & 0xFF)
        return segment
    }

    /// ExifVersion 2.32.
    static let exifVersion: [UInt8] = Array("0232".utf8)

    /// A text as EXIF's ASCII holds it: its 7-bit bytes, then a NUL. A plain loop: a lazy
    /// filter here ran unspecialized, about 2,000 instructions a text (callgrind).
    static func asciiValue(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 1)
        for byte in text.utf8 where byte < 0x80 { bytes.append(byte) }
        bytes.append(0)
        return bytes
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
        case long(UInt16, UInt32), undefined(UInt16, [UInt8])
        /// Any other TIFF type, already encoded (ASCII, SHORT, RATIONAL, BYTE: see EXIF+Orientation.swift).
        case raw(UInt16, type: UInt16, count: UInt32, bytes: [UInt8])
        /// ASCII already encoded, its NUL included (the timestamps, `asciiValue`).
        static func text(_ tag: UInt16, _ value: [UInt8]) -> Entry { .raw(tag, type: 2, count: UInt32(value.count), bytes: value) }
        /// A text as ASCII: its 7-bit characters and a NUL.
        static func ascii(_ tag: UInt16, _ text: String) -> Entry { .text(tag, EXIF.asciiValue(text)) }

        var tag: UInt16 {
            switch self { case .long(let t, _), .undefined(let t, _), .raw(let t, _, _, _): return t }
        }
        /// The TIFF type: LONG 4, UNDEFINED 7, or the raw entry's own.
        var type: UInt16 {
            switch self {
            case .long: return 4
            case .undefined: return 7
            case .raw(_, let type, _, _): return type
            }
        }
        /// How many values: one LONG, one a byte of UNDEFINED, or the raw entry's own count.
        var count: UInt32 {
            switch self {
            case .long: return 1
            case .undefined(_, let bytes): return UInt32(bytes.count)
            case .raw(_, _, let count, _): return count
            }
        }
        /// The bytes the value takes.
        var byteCount: Int {
            switch self {
            case .long: return 4
            case .undefined(_, let bytes), .raw(_, _, _, let bytes): return bytes.count
            }
        }
        /// Bytes stored after the IFD's table: values over four bytes, padded to an even length.
        var overflowSize: Int {
            let size = byteCount
            return size > 4 ? size + size % 2 : 0
        }
        func appendValue(to out: inout [UInt8]) {
            switch self {
            case .long(_, let value): EXIF.appendLE32(value, to: &out)
            case .undefined(_, let bytes), .raw(_, _, _, let bytes): out += bytes
            }
        }
    }

    /// Appends an IFD, in tag order: count, entries, no next IFD, then the values too big
    /// to sit inline. Offsets count from the TIFF header at `tiffStart`.
    private static func write(_ entries: [Entry], tiffStart: Int, into out: inout [UInt8]) {
        let inOrder = zip(entries, entries.dropFirst()).allSatisfy { $0.tag < $1.tag }
        let entries = inOrder ? entries : entries.sorted { $0.tag < $1.tag }
        var dataOffset = out.count - tiffStart + 2 + entries.count * 12 + 4
        appendLE16(entries.count, to: &out)
        for entry in entries {
            appendLE16(Int(entry.tag), to: &out)
            appendLE16(Int(entry.type), to: &out)
            appendLE32(entry.count, to: &out)
            let size = entry.byteCount
            if size <= 4 {
                entry.appendValue(to: &out)
                for _ in size..<4 { out.append(0) }
            } else {
                appendLE32(UInt32(dataOffset), to: &out)
                dataOffset += size + size % 2
            }
        }
        appendLE32(0, to: &out)  // no next IFD
        for entry in entries where entry.byteCount > 4 {
            entry.appendValue(to: &out)
            if entry.byteCount % 2 == 1 { out.append(0) }
        }
    }

    private static func appendLE16(_ v: Int, to out: inout [UInt8]) {
        out.append(UInt8(v & 0xFF))
        out.append(UInt8((v >> 8) & 0xFF))
    }

    static func appendLE32(_ v: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((v >> UInt32(shift)) & 0xFF)) }
    }

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    static func be16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> ($0 * 8)) & 0xFF) } }
}
