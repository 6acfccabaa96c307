@testable import JPEG
import Testing
import VideoCore

/// The live stream's overlay copy: one extra encode per frame, the text only inside its box.
@Suite struct StreamOverlayEncodingTests {
    let size = FrameSize(width: 320, height: 240)

    /// Largest channel difference inside the box, and outside it beyond one 16-pixel block.
    func difference(_ plain: [UInt8], _ overlaid: [UInt8], box: Geometry.Rect) throws -> (inside: Int, outside: Int) {
        let a = try JPEGDecoder().decodeRGB(plain), b = try JPEGDecoder().decodeRGB(overlaid)
        #expect(a.size == size && b.size == size)
        var inside = 0, outside = 0
        for y in 0..<size.height {
            for x in 0..<size.width {
                let near = x >= box.x - 16 && x < box.x + box.width + 16 && y >= box.y - 16 && y < box.y + box.height + 16
                for c in 0..<3 {
                    let d = abs(Int(a.pixels[(y * size.width + x) * 3 + c]) - Int(b.pixels[(y * size.width + x) * 3 + c]))
                    if box.contains(x: x, y: y) { inside = max(inside, d) } else if !near { outside = max(outside, d) }
                }
            }
        }
        return (inside, outside)
    }

    func yuyvFrame() -> Frame {
        Frame(layout: FrameLayout(format: .yuyv, size: size, bytesPerLine: size.width * 2, range: .limited),
              bytes: yuyvBars(size), sequence: 1, monotonicTime: 1, captureTime: 1)
    }

    @Test func planeFramesGetTheOverlayOnTheirOwnPlanes() throws {
        let overlay = TextOverlay(text: "12:00:00 bench", corner: .bottomRight)
        let encoder = try FrameEncoder()
        let plainOnly = try encoder.encode(yuyvFrame())
        let (plain, overlaid) = try encoder.encode(yuyvFrame(), overlay: overlay)
        #expect(plain == plainOnly, "the snapshot JPEG is what it was without an overlay")
        let diff = try difference(plain, try #require(overlaid), box: overlay.box(in: size))
        #expect(diff.inside > 100 && diff.outside <= 6, "\(diff)")
        // Without an overlay nothing extra is made.
        #expect(try encoder.encode(yuyvFrame(), overlay: nil).overlaid == nil)
    }

    /// For stream clients alone: the overlaid picture, from one conversion and one encode.
    @Test func theOverlaidPictureAloneIsTheOverlaidCopy() throws {
        let overlay = TextOverlay(text: "12:00:00 bench", corner: .bottomRight)
        let (_, overlaid) = try FrameEncoder().encode(yuyvFrame(), overlay: overlay)
        #expect(try FrameEncoder().encodeOverlaid(yuyvFrame(), overlay: overlay) == overlaid)
        let mjpeg = Frame(layout: FrameLayout(format: .mjpeg, size: size, bytesPerLine: 0, range: .full),
                          bytes: try FrameEncoder().encode(yuyvFrame()), sequence: 2, monotonicTime: 2, captureTime: 2)
        #expect(try FrameEncoder().encodeOverlaid(mjpeg, overlay: overlay) == (try FrameEncoder().encode(mjpeg, overlay: overlay).overlaid))
    }

    @Test func jpegFramesAreDecodedOnceForTheOverlay() throws {
        let source = try FrameEncoder().encode(yuyvFrame())
        let frame = Frame(layout: FrameLayout(format: .mjpeg, size: size, bytesPerLine: 0, range: .full),
                          bytes: source, sequence: 2, monotonicTime: 2, captureTime: 2)
        let overlay = TextOverlay(text: "mjpeg", corner: .topLeft)
        let (plain, overlaid) = try FrameEncoder().encode(frame, overlay: overlay)
        #expect(plain == source, "MJPEG still passes through untouched")
        let diff = try difference(plain, try #require(overlaid), box: overlay.box(in: size))
        #expect(diff.inside > 100 && diff.outside <= 12, "\(diff)")
    }
}
