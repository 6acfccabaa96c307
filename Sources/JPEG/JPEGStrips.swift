import VideoCore

/// One frame encoded as horizontal strips on several threads at once, joined into one
/// baseline JPEG with a restart marker between strips: a snapshot is ready in about
/// 1/n of one encode, which is most of a snapshot's age on a slow board.
///
/// Written by hand because neither TurboJPEG 2.1 nor libjpeg-turbo 3 encodes one image
/// on several threads. It is exact, not an approximation: a restart marker resets the
/// entropy coder's DC predictions, so a strip encoded on its own with the same tables
/// is byte for byte the interval a decoder reads after the marker, and the decoded
/// image equals the one encoded whole.
public enum JPEGStrips {
    /// Each strip at least this many pixels: below it the hand-off costs more than it saves.
    public static let minimumPixelsPerStrip = 100_000

    /// The rows of each strip a frame of `size` is cut into with `threads` to encode them:
    /// one strip per thread where each holds at least `minimumPixelsPerStrip`, else fewer.
    /// Where one strip's MCUs would not fit the 16-bit restart interval (a frame over 4096
    /// wide in gray), more strips than threads; the runner encodes the rest in turn. An odd
    /// size is cut too: each strip's encoder pads its own luma rows (`JPEGEncoder`), so none
    /// reads into the next strip's.
    public static func rows(for size: FrameSize, subsampling: ChromaSubsampling, threads: Int) -> [Range<Int>] {
        let whole = [0..<size.height]
        var count = max(1, min(threads, size.area / minimumPixelsPerStrip))
        guard count > 1 else { return whole }
        var strips = rows(height: size.height, subsampling: subsampling, count: count)
        while strips.count > 1, restartInterval(strips, width: size.width, subsampling: subsampling) > 0xFFFF {
            count += 1
            strips = rows(height: size.height, subsampling: subsampling, count: count)
        }
        return strips.count > 1 ? strips : whole
    }

    /// The rows of each of `count` strips of an image: every strip but the last the same
    /// whole number of MCU rows, since every restart interval but the last holds the same
    /// number of MCUs; the last takes what is left. Fewer strips where there are too few
    /// MCU rows for `count`.
    static func rows(height: Int, subsampling: ChromaSubsampling, count: Int) -> [Range<Int>] {
        let mcuHeight = subsampling.mcuSize.height
        let mcuRows = (height + mcuHeight - 1) / mcuHeight
        let perStrip = (mcuRows + max(count, 1) - 1) / max(count, 1)
        guard perStrip > 0 else { return [0..<height] }
        return stride(from: 0, to: mcuRows, by: perStrip).map { first in
            (first * mcuHeight)..<min((first + perStrip) * mcuHeight, height)
        }
    }

    /// The MCUs in one strip but the last: the restart interval of the joined JPEG.
    static func restartInterval(_ strips: [Range<Int>], width: Int, subsampling: ChromaSubsampling) -> Int {
        let mcu = subsampling.mcuSize
        return (width + mcu.width - 1) / mcu.width * (strips[0].count / mcu.height)
    }

    /// Joins strips, each a whole JPEG of its `rows` (as `rows(for:subsampling:threads:)` cut
    /// them) encoded with the same settings, into one JPEG of `size`. Nil when they cannot
    /// be joined: different tables (TurboJPEG's `TJ_OPTIMIZE` makes Huffman tables per
    /// image), restart markers of their own (`TJ_RESTART`), or a frame header that is not
    /// baseline; the caller encodes whole.
    public static func join(_ strips: [[UInt8]], rows: [Range<Int>], size: FrameSize, subsampling: ChromaSubsampling) -> [UInt8]? {
        guard let first = strips.first, strips.count > 1, rows.count == strips.count, let layout = Layout(first) else { return nil }
        let interval = restartInterval(rows, width: size.width, subsampling: subsampling)
        guard interval > 0, interval <= 0xFFFF, size.height <= 0xFFFF else { return nil }

        var joined = Array(first[..<layout.scan.offset])
        // The frame header's height (SOF0: precision, height, width) becomes the whole image's.
        joined[layout.frameHeader.payload.lowerBound + 1] = UInt8(size.height >> 8)
        joined[layout.frameHeader.payload.lowerBound + 2] = UInt8(size.height & 0xFF)
        joined += [0xFF, 0xDD, 0x00, 0x04, UInt8(interval >> 8), UInt8(interval & 0xFF)]  // DRI
        joined += first[layout.scan.offset..<layout.scan.end]
        joined.reserveCapacity(strips.reduce(joined.count) { $0 + $1.count + 2 })
        for (index, strip) in strips.enumerated() {
            let data: Range<Int>
            if index == 0 {
                data = layout.entropyData
            } else {
                guard let other = Layout(strip), layout.sameTables(first, as: other, in: strip) else { return nil }
                data = other.entropyData
            }
            joined += strip[data]
            if index < strips.count - 1 { joined += [0xFF, 0xD0 + UInt8(index % 8)] }  // RSTn
        }
        joined += [0xFF, 0xD9]
        return joined
    }

    /// Where the parts of one strip's JPEG lie.
    private struct Layout {
        var frameHeader: JPEGSegment
        var scan: JPEGSegment
        /// The tables (DQT, DHT) and the scan header, each as its bytes' range.
        var tables: [Range<Int>]
        var entropyData: Range<Int>

        init?(_ bytes: [UInt8]) {
            var frameHeader: JPEGSegment?, tables: [Range<Int>] = []
            var segments = JPEGSegments(bytes)
            while let segment = segments.next() {
                switch segment.marker {
                case 0xC0: frameHeader = segment
                case 0xDB, 0xC4, 0xDA: tables.append(segment.offset..<segment.end)
                case 0xDD: return nil  // restart markers of its own
                default: if segment.isFrameHeader { return nil }  // not baseline
                }
                if segment.marker == 0xDA {
                    // TurboJPEG ends its output with the end-of-image marker and nothing after it.
                    guard let frameHeader, frameHeader.payload.count >= 5, bytes.count >= segment.end + 2,
                          bytes[bytes.count - 2] == 0xFF, bytes[bytes.count - 1] == 0xD9 else { return nil }
                    self.frameHeader = frameHeader
                    self.scan = segment
                    self.tables = tables
                    self.entropyData = segment.end..<(bytes.count - 2)
                    return
                }
            }
            return nil
        }

        /// Whether `other` (in `strip`) was coded with the same tables as this one (in `bytes`),
        /// and has the same width and components: only its height may differ.
        func sameTables(_ bytes: [UInt8], as other: Layout, in strip: [UInt8]) -> Bool {
            guard tables.count == other.tables.count,
                  zip(tables, other.tables).allSatisfy({ bytes[$0].elementsEqual(strip[$1]) }) else { return false }
            let mine = frameHeader.payload, theirs = other.frameHeader.payload
            return bytes[mine.lowerBound] == strip[theirs.lowerBound]
                && bytes[(mine.lowerBound + 3)..<mine.upperBound].elementsEqual(strip[(theirs.lowerBound + 3)..<theirs.upperBound])
        }
    }
}
