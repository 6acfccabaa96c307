import Foundation
import VideoCore

/// Cuts a live H.264 stream into fragmented MP4 that a browser's Media Source, ffmpeg and
/// players read as it arrives: an init segment (`ftyp` + `moov`) once, then one fragment
/// (`prft` + `moof` + `mdat`) per frame, ready as soon as the frame is encoded.
///
/// The init segment is libavformat's (its `avcC`, colour and display matrix, as the
/// recordings have them). The fragments are written here, by hand, for two reasons: the
/// MP4 muxer keeps an index entry for every fragment it writes (for the `mfra` at the end
/// of a file), which grows without bound at 30 fragments a second on a stream that never
/// ends; and it writes a fragment only when the next frame arrives, a frame interval late.
/// A one-sample fragment is five fixed boxes (ISO/IEC 14496-12, 8.8).
///
/// The fragments' decode times run on one timeline however often the encoder reopens with
/// the same format (the device came back, the camera restarted): `continueTimeline()`
/// makes the next packet follow the last, so a client's player never sees time go back,
/// and the timeline has no hole longer than a frame.
public struct LiveMP4Fragmenter: Sendable {
    public let format: VideoStreamFormat
    public let initSegment: [UInt8]
    /// The display matrix written into the init segment.
    public let transform: FragmentedMP4Writer.DisplayTransform
    /// The `Content-Type` of the stream, with the codec a Media Source needs to know.
    public var contentType: String { "video/mp4; codecs=\"\(format.codecString)\"" }
    /// Ticks a second of the track's time.
    public let timeScale: Int32
    private let frameTicks: Int64
    private var sequence: UInt32 = 0
    /// Added to a packet's (rescaled) decode time to place it on the timeline.
    private var offset: Int64 = 0
    private var nextDecodeTime: Int64 = 0
    private var rebase = true

    /// The track id libavformat's MP4 muxer gives its one stream.
    static let trackID: UInt32 = 1

    public init(format: VideoStreamFormat, transform: FragmentedMP4Writer.DisplayTransform = .upright) throws(VideoError) {
        final class Collected: @unchecked Sendable {  // filled and read on this thread only
            var bytes: [UInt8] = []
        }
        let collected = Collected()
        let writer = try FragmentedMP4Writer(format: format, transform: transform) { chunk in
            collected.bytes.append(contentsOf: chunk)
            return 0
        }
        self.format = format
        self.transform = transform
        initSegment = collected.bytes
        timeScale = writer.trackTimeScale
        frameTicks = max(1, Int64((Double(writer.trackTimeScale) / max(1, format.frameRate)).rounded()))
    }

    /// The next packet goes straight after the last one written, whatever its own timestamps.
    public mutating func continueTimeline() { rebase = true }

    /// The fragment that carries `packet`, with its capture time as the `prft` wall clock.
    public mutating func fragment(_ packet: VideoPacket) -> [UInt8] {
        let dts = rescale(packet.dts)
        // A frame follows the last one by its own timing, with a hole of at most one frame
        // where frames were skipped: a browser's Media Source takes a longer hole for a break
        // and drops every frame up to the next keyframe. A longer pause moves the timeline
        // up to one frame's hole before this frame; after the device came back, to none.
        if rebase {
            offset = nextDecodeTime - dts
            rebase = false
        } else if dts + offset > nextDecodeTime + frameTicks {
            offset = nextDecodeTime + frameTicks - dts
        }
        // Rounding to the track's ticks never moves a frame before the end of the last one.
        let decodeTime = max(dts + offset, nextDecodeTime)
        nextDecodeTime = decodeTime + frameTicks
        sequence &+= 1
        let sample = AnnexB.lengthPrefixed(packet.data)
        var out = BoxWriter(capacity: sample.count + 160)
        out.box("prft") { box in
            box.fullBoxHeader(version: 1, flags: Self.prftCaptureTime)
            box.u32(Self.trackID)
            box.u64(Self.ntpTimestamp(packet.captureTime))
            box.u64(UInt64(decodeTime))
        }
        let moofStart = out.bytes.count
        var dataOffsetAt = 0
        out.box("moof") { moof in
            moof.box("mfhd") { box in
                box.fullBoxHeader(version: 0, flags: 0)
                box.u32(sequence)
            }
            moof.box("traf") { traf in
                traf.box("tfhd") { box in
                    box.fullBoxHeader(version: 0, flags: 0x020000)  // default-base-is-moof
                    box.u32(Self.trackID)
                }
                traf.box("tfdt") { box in
                    box.fullBoxHeader(version: 1, flags: 0)
                    box.u64(UInt64(decodeTime))
                }
                traf.box("trun") { box in
                    // data offset, and each sample's duration, size, flags and (signed) composition offset
                    box.fullBoxHeader(version: 1, flags: 0x000F01)
                    box.u32(1)
                    dataOffsetAt = box.bytes.count
                    box.u32(0)
                    box.u32(UInt32(frameTicks))
                    box.u32(UInt32(sample.count))
                    // sample_depends_on 2 (a keyframe), or 1 and is_non_sync_sample
                    box.u32(packet.isKeyframe ? 0x0200_0000 : 0x0101_0000)
                    box.u32(UInt32(bitPattern: Int32(truncatingIfNeeded: rescale(packet.pts) - dts)))
                }
            }
        }
        let moofSize = out.bytes.count - moofStart
        out.patch(at: dataOffsetAt, UInt32(moofSize + 8))
        out.u32(UInt32(sample.count + 8))
        out.fourCC("mdat")
        out.bytes.append(contentsOf: sample)
        return out.bytes
    }

    /// `prft` flags 8: its time is when the frame was captured (ISO/IEC 14496-12, 8.16.5).
    static let prftCaptureTime: UInt32 = 8

    /// Seconds since 1970 as an NTP timestamp (seconds since 1900, then a 32-bit fraction).
    static func ntpTimestamp(_ unixSeconds: Double) -> UInt64 {
        let seconds = unixSeconds + 2_208_988_800
        let whole = seconds.rounded(.down)
        return UInt64(whole) << 32 | UInt64((seconds - whole) * 4_294_967_296)
    }

    private func rescale(_ ticks: Int64) -> Int64 {
        ticks * Int64(timeScale) / Int64(format.timeScale)
    }
}

/// Big-endian box writing for the fragments above.
struct BoxWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func u32(_ value: UInt32) {
        bytes.append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }

    mutating func u64(_ value: UInt64) {
        u32(UInt32(value >> 32))
        u32(UInt32(value & 0xFFFF_FFFF))
    }

    mutating func fourCC(_ code: String) { bytes.append(contentsOf: Array(code.utf8)) }

    mutating func fullBoxHeader(version: UInt8, flags: UInt32) { u32(UInt32(version) << 24 | flags & 0xFF_FFFF) }

    mutating func patch(at index: Int, _ value: UInt32) {
        bytes[index] = UInt8(value >> 24)
        bytes[index + 1] = UInt8(value >> 16 & 0xFF)
        bytes[index + 2] = UInt8(value >> 8 & 0xFF)
        bytes[index + 3] = UInt8(value & 0xFF)
    }

    /// A box of `type` whose body `content` writes; its size is filled in after.
    mutating func box(_ type: String, _ content: (inout BoxWriter) -> Void) {
        let start = bytes.count
        u32(0)
        fourCC(type)
        content(&self)
        patch(at: start, UInt32(bytes.count - start))
    }
}
