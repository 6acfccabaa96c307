extension EXIF {
    /// The eight ways stored pixels can be turned for display: the values of the
    /// EXIF Orientation tag (0x0112), named as a viewer applies them. camd also
    /// uses them to turn pixels itself (`YUVImage.transformed(_:)`), so `rotate=90`
    /// in pixels and `rotate=exif` with 90 in the tag show the same picture.
    public enum Orientation: UInt16, Hashable, Sendable, CaseIterable {
        /// 1: as stored.
        case up = 1
        /// 2: mirrored left to right.
        case upMirrored = 2
        /// 3: turned 180°.
        case down = 3
        /// 4: mirrored top to bottom.
        case downMirrored = 4
        /// 5: transposed (mirrored across the top-left to bottom-right diagonal).
        case leftMirrored = 5
        /// 6: turned 90° clockwise.
        case right = 6
        /// 7: transversed (mirrored across the other diagonal).
        case rightMirrored = 7
        /// 8: turned 90° counter-clockwise (270° clockwise).
        case left = 8

        /// Whether width and height trade places.
        public var swapsAxes: Bool { rawValue >= 5 }

        /// Where the stored image's top-left and top-right corners are shown,
        /// on the unit square: (x0, y0, x1, y1).
        var corners: (Int, Int, Int, Int) {
            switch self {
            case .up: return (0, 0, 1, 0)
            case .upMirrored: return (1, 0, 0, 0)
            case .down: return (1, 1, 0, 1)
            case .downMirrored: return (0, 1, 1, 1)
            case .leftMirrored: return (0, 0, 0, 1)
            case .right: return (1, 0, 1, 1)
            case .rightMirrored: return (1, 1, 1, 0)
            case .left: return (0, 1, 0, 0)
            }
        }

        /// A clockwise rotation followed by a flip, as one orientation.
        public init(rotation: Geometry.Rotation, flip: Geometry.Flip) {
            // Follow two corners of the unit square through the steps and match them.
            func follow(_ point: (Int, Int)) -> (Int, Int) {
                var (x, y) = point
                for _ in 0..<(rotation.rawValue / 90) { (x, y) = (1 - y, x) }
                if flip.contains(.horizontal) { x = 1 - x }
                if flip.contains(.vertical) { y = 1 - y }
                return (x, y)
            }
            let (a, b) = (follow((0, 0)), follow((1, 0)))
            self = Self.allCases.first { $0.corners == (a.0, a.1, b.0, b.1) } ?? .up
        }

        /// For an output pixel (x, y), the source pixel is (a·x + b·y + c, d·x + e·y + f),
        /// for a source of `width`×`height` samples.
        func sourceMap(width w: Int, height h: Int) -> (a: Int, b: Int, c: Int, d: Int, e: Int, f: Int) {
            switch self {
            case .up: return (1, 0, 0, 0, 1, 0)
            case .upMirrored: return (-1, 0, w - 1, 0, 1, 0)
            case .down: return (-1, 0, w - 1, 0, -1, h - 1)
            case .downMirrored: return (1, 0, 0, 0, -1, h - 1)
            case .leftMirrored: return (0, 1, 0, 1, 0, 0)
            case .right: return (0, 1, 0, -1, 0, h - 1)
            case .rightMirrored: return (0, -1, w - 1, -1, 0, h - 1)
            case .left: return (0, -1, w - 1, 1, 0, 0)
            }
        }
    }

    /// A fixed camera position for the GPS IFD, from the camera's configuration.
    public struct GPSPosition: Hashable, Sendable {
        /// Degrees north (positive) or south (negative), -90...90.
        public var latitude: Double
        /// Degrees east (positive) or west (negative), -180...180.
        public var longitude: Double
        /// Metres above (positive) or below (negative) sea level, if known.
        public var altitude: Double?

        /// Checks the ranges, naming the configuration key that is wrong.
        public init(latitude: Double, longitude: Double, altitude: Double? = nil) throws(ImageError) {
            guard latitude.isFinite, (-90...90).contains(latitude) else {
                throw .invalidParameter(name: "latitude", message: "latitude must be between -90 and 90 degrees (south is negative); got \(latitude)")
            }
            guard longitude.isFinite, (-180...180).contains(longitude) else {
                throw .invalidParameter(name: "longitude", message: "longitude must be between -180 and 180 degrees (west is negative); got \(longitude)")
            }
            if let altitude, !altitude.isFinite || abs(altitude) > 100_000 {
                throw .invalidParameter(name: "altitude", message: "altitude must be metres above sea level, within ±100 km; got \(altitude)")
            }
            self.latitude = latitude
            self.longitude = longitude
            self.altitude = altitude
        }

        /// Degrees, minutes and seconds as three EXIF rationals (seconds to 1/10000).
        static func dms(_ degrees: Double) -> [(UInt32, UInt32)] {
            let total = (abs(degrees) * 3600 * 10_000).rounded()
            let tenThousandths = UInt64(total)
            let whole = tenThousandths / (3600 * 10_000)
            let minutes = (tenThousandths % (3600 * 10_000)) / (60 * 10_000)
            let seconds = tenThousandths % (60 * 10_000)
            return [(UInt32(whole), 1), (UInt32(minutes), 1), (UInt32(seconds), 10_000)]
        }

        /// The GPS IFD's entries (GPSVersionID 2.3, latitude, longitude, altitude).
        var entries: [Entry] {
            var entries: [Entry] = [
                .raw(0x0000, type: 1, count: 4, bytes: [2, 3, 0, 0]),
                .ascii(0x0001, latitude < 0 ? "S" : "N"),
                EXIF.rationals(0x0002, Self.dms(latitude)),
                .ascii(0x0003, longitude < 0 ? "W" : "E"),
                EXIF.rationals(0x0004, Self.dms(longitude)),
            ]
            if let altitude {
                entries.append(.raw(0x0005, type: 1, count: 1, bytes: [altitude < 0 ? 1 : 0]))
                entries.append(EXIF.rationals(0x0006, [(UInt32((abs(altitude) * 100).rounded()), 100)]))
            }
            return entries
        }
    }

    /// A SHORT (type 3) entry.
    static func short(_ tag: UInt16, _ value: UInt16) -> Entry {
        .raw(tag, type: 3, count: 1, bytes: le16(Int(value)))
    }

    /// A RATIONAL (type 5) entry: numerator/denominator pairs.
    static func rationals(_ tag: UInt16, _ values: [(UInt32, UInt32)]) -> Entry {
        .raw(tag, type: 5, count: UInt32(values.count), bytes: values.flatMap { le32($0.0) + le32($0.1) })
    }

    /// The bytes an IFD of these entries takes: count, entries, next-IFD link, then values too big to sit inline.
    static func ifdSize(_ entries: [Entry]) -> Int {
        entries.reduce(2 + entries.count * 12 + 4) { $0 + $1.overflowSize }
    }
}

extension EXIF.Orientation {
    /// The Orientation tag (0x0112) of IFD0 in a JPEG's EXIF segment, as any camera or
    /// camd itself writes it; nil when there is none or the segment cannot be read.
    /// Reads only within the bytes given: a broken or hostile file yields nil, never a trap.
    public init?(readingFrom jpeg: [UInt8]) {
        // EXIF is an APP1 that starts "Exif\0\0", before the scan.
        guard let range = JPEGSegments.exifTIFF(in: jpeg) else { return nil }
        let tiff = jpeg[range]
        let base = tiff.startIndex
        let little: Bool
        switch (tiff[base], tiff[base + 1]) {
        case (0x49, 0x49): little = true   // "II"
        case (0x4D, 0x4D): little = false  // "MM"
        default: return nil
        }
        func u16(_ offset: Int) -> Int? {
            guard offset >= 0, base + offset + 2 <= tiff.endIndex else { return nil }
            let (a, b) = (Int(tiff[base + offset]), Int(tiff[base + offset + 1]))
            return little ? a | b << 8 : a << 8 | b
        }
        func u32(_ offset: Int) -> Int? {
            guard let first = u16(offset), let second = u16(offset + 2) else { return nil }
            return little ? first | second << 16 : first << 16 | second
        }
        guard let ifd = u32(4), let count = u16(ifd) else { return nil }
        for index in 0..<count {
            let entry = ifd + 2 + index * 12
            guard let tag = u16(entry) else { return nil }
            // A SHORT: its value sits in the first two bytes of the value field.
            if tag == 0x0112, u16(entry + 2) == 3, let value = u16(entry + 8) {
                self.init(rawValue: UInt16(truncatingIfNeeded: value))
                return
            }
        }
        return nil
    }
}

extension Geometry {
    /// The rotation and flip that turn stored pixels as `orientation` tells a viewer to:
    /// rendering with them shows a tagged photo upright with no tag needed.
    public static func turn(for orientation: EXIF.Orientation) -> (rotate: Rotation, flip: Flip) {
        for rotate in Rotation.allCases {
            for flip: Flip in [[], .horizontal, .vertical] where EXIF.Orientation(rotation: rotate, flip: flip) == orientation {
                return (rotate, flip)
            }
        }
        return (.upright, [])
    }
}
