/// H.264's Annex B byte stream (NAL units after `00 00 01` or `00 00 00 01` start codes),
/// as libx264 and the V4L2 encoders give it: the one reader of it in camd.
public enum AnnexB {
    /// The byte ranges of the NAL units in `bytes`, start codes excluded, in order.
    public static func nalUnits(in bytes: [UInt8]) -> [Range<Int>] {
        var units: [Range<Int>] = []
        var start: Int?
        var index = 0
        let count = bytes.count
        while index + 2 < count {
            if bytes[index] == 0 && bytes[index + 1] == 0 && bytes[index + 2] == 1 {
                // A 4-byte start code's leading zero belongs to it, not to the unit before.
                let codeStart = index > 0 && bytes[index - 1] == 0 ? index - 1 : index
                if let start, codeStart > start { units.append(start..<codeStart) }
                index += 3
                start = index
            } else {
                index += 1
            }
        }
        if let start, start < count { units.append(start..<count) }
        return units
    }

    /// The NAL unit type (`nal_unit_type`, the low 5 bits of the header): 5 an IDR slice, 7 an SPS, 8 a PPS.
    public static func unitType(_ bytes: [UInt8], _ unit: Range<Int>) -> UInt8 {
        unit.isEmpty ? 0 : bytes[unit.lowerBound] & 0x1F
    }

    /// The same units, each after its length as 4 big-endian bytes: the form an MP4 sample
    /// (`avc1`) holds. Access unit delimiters (type 9) are left out; MP4 has no use for them.
    public static func lengthPrefixed(_ bytes: [UInt8]) -> [UInt8] {
        let units = nalUnits(in: bytes).filter { unitType(bytes, $0) != 9 }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 4 * units.count)
        for unit in units {
            let length = UInt32(unit.count)
            out.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
            out.append(contentsOf: bytes[unit])
        }
        return out
    }
}
