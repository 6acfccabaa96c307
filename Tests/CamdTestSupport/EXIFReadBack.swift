import JPEG

// Helpers shared by camd's test targets (not shipped).

/// Reads camd's own EXIF back: every entry of IFD0, the Exif IFD and the GPS IFD, by tag.
/// The GPS IFD's tags (0x0000 to 0x0006) do not collide with the others'. PIL reads the
/// same IFD with `Image.open(path).getexif().get_ifd(0x8825)`.
public enum EXIFReadBack {
    public static func entries(in jpeg: [UInt8]) -> [UInt16: (type: Int, count: Int, bytes: [UInt8])] {
        guard let range = JPEGSegments.exifTIFF(in: jpeg) else { return [:] }
        let tiff = Array(jpeg[range])
        func u16(_ at: Int) -> Int { Int(tiff[at]) | Int(tiff[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        let sizes = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1]
        var found: [UInt16: (Int, Int, [UInt8])] = [:]
        var ifds = [u32(4)]
        while let ifd = ifds.popLast() {
            for index in 0..<u16(ifd) {
                let entry = ifd + 2 + index * 12
                let tag = u16(entry), type = u16(entry + 2), count = u32(entry + 4)
                if tag == 0x8769 || tag == 0x8825 { ifds.append(u32(entry + 8)) }
                let length = count * (sizes[type] ?? 1)
                let start = length <= 4 ? entry + 8 : u32(entry + 8)
                found[UInt16(tag)] = (type, count, Array(tiff[start..<(start + length)]))
            }
        }
        return found
    }

    /// The GPS position written into `jpeg`, in signed degrees and metres; nil without a GPS IFD.
    public static func position(in jpeg: [UInt8]) -> (latitude: Double, longitude: Double, altitude: Double?)? {
        let found = entries(in: jpeg)
        guard found[0x8825] != nil, let lat = found[0x0002], let lon = found[0x0004],
              let north = found[0x0001]?.bytes.first, let east = found[0x0003]?.bytes.first else { return nil }
        func rationals(_ bytes: [UInt8]) -> [Double] {
            stride(from: 0, to: bytes.count, by: 8).map { at in
                func u32(_ i: Int) -> Double { Double(UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24) }
                return u32(at) / u32(at + 4)
            }
        }
        func degrees(_ dms: [Double]) -> Double { dms[0] + dms[1] / 60 + dms[2] / 3600 }
        let latitude = degrees(rationals(lat.bytes)) * (north == UInt8(ascii: "S") ? -1 : 1)
        let longitude = degrees(rationals(lon.bytes)) * (east == UInt8(ascii: "W") ? -1 : 1)
        var altitude: Double?
        if let metres = found[0x0006] {
            altitude = rationals(metres.bytes)[0] * (found[0x0005]?.bytes.first == 1 ? -1 : 1)
        }
        return (latitude, longitude, altitude)
    }
}
