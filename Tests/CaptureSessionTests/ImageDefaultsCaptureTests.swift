import CamdTestSupport
import CaptureSession
import Foundation
import JPEG
import Testing
import VideoCore

/// A camera's `[camera.image]` defaults and `location` in the capture layer: timelapse
/// photos are shaped and geotagged, and the stream overlay is drawn once per frame.
@Suite struct ImageDefaultsCaptureTests {
    static let london = try! EXIF.GPSPosition(latitude: 51.500729, longitude: -0.124625, altitude: 12.5)

    /// Waits for the timelapse's first photo (30 s at most: a loaded machine takes longer
    /// than the interval; an assertion on a fixed sleep failed under a parallel build).
    static func untilAPhotoOf(_ camera: String, in photos: PhotoOutput) async throws {
        try await waitUntil(limit: .seconds(30), every: .milliseconds(20)) { await !photos.list(camera: camera).isEmpty }
    }

    @Test func timelapsePhotosFollowTheImageDefaultsAndCarryTheLocation() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-image-lapse-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let photos = PhotoOutput(root: root)
        let image = ImageSettings(geometry: Geometry(longestSide: 160, rotate: .clockwise90))
        let settings = CameraSettings(id: "lapse", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240),
                                      fps: 30, photos: PhotoSettings(intervalSeconds: 0.2, keepCount: 100),
                                      image: image, location: Self.london)
        let session = CaptureSession(settings: settings)
        await session.start()  // before the timelapse, which looks again only a second after finding it stopped
        let timelapse = Task { await IntervalCapture(session: session, photos: photos).run() }
        try await Self.untilAPhotoOf("lapse", in: photos)
        await session.stop()
        timelapse.cancel()
        await timelapse.value

        let first = try #require(await photos.list(camera: "lapse").first)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try await photos.file(named: first.name).path)))
        // 320x240 turned a quarter is 240x320; at most 160 on the longest side: 120x160.
        #expect(try JPEGDecoder().header(bytes).size == FrameSize(width: 120, height: 160))
        #expect(first.width == 120 && first.height == 160)
        let position = try #require(EXIFReadBack.position(in: bytes))
        #expect(abs(position.latitude - 51.500729) < 1e-6 && abs(position.longitude + 0.124625) < 1e-6)
        #expect(position.altitude == 12.5)
    }

    @Test func withoutALocationTimelapsePhotosHaveNoGPS() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-image-lapse-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let photos = PhotoOutput(root: root)
        let settings = CameraSettings(id: "plain", device: FrameSources.syntheticName, size: FrameSize(width: 320, height: 240),
                                      fps: 30, photos: PhotoSettings(intervalSeconds: 0.2, keepCount: 100))
        let session = CaptureSession(settings: settings)
        await session.start()
        let timelapse = Task { await IntervalCapture(session: session, photos: photos).run() }
        try await Self.untilAPhotoOf("plain", in: photos)
        await session.stop()
        timelapse.cancel()
        await timelapse.value
        let first = try #require(await photos.list(camera: "plain").first)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try await photos.file(named: first.name).path)))
        #expect(try JPEGDecoder().header(bytes).size == FrameSize(width: 320, height: 240))
        #expect(EXIFReadBack.entries(in: bytes)[0x8825] == nil)
        #expect(EXIFReadBack.entries(in: bytes)[0x9003] != nil, "the capture time is still written")
    }

    /// The largest difference between two same-size RGB images inside (or outside) a rectangle.
    func difference(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int, inside box: Geometry.Rect) -> (inside: Int, outside: Int) {
        var inside = 0, outside = 0
        for y in 0..<height {
            for x in 0..<width {
                // A margin of one 16-pixel block around the box, where JPEG blocks mix both.
                let near = x >= box.x - 16 && x < box.x + box.width + 16 && y >= box.y - 16 && y < box.y + box.height + 16
                for c in 0..<3 {
                    let d = abs(Int(a[(y * width + x) * 3 + c]) - Int(b[(y * width + x) * 3 + c]))
                    if box.contains(x: x, y: y) { inside = max(inside, d) } else if !near { outside = max(outside, d) }
                }
            }
        }
        return (inside, outside)
    }

    /// With only stream clients, each frame is encoded once, overlay drawn in; a snapshot is
    /// the frame as captured, and while snapshots are being asked for, frames carry both copies.
    @Test func theStreamCarriesTheOverlayAndSnapshotsStayPlain() async throws {
        let image = ImageSettings(overlay: "{camera}", overlayCorner: .topLeft, streamOverlay: true)
        let size = FrameSize(width: 320, height: 240)
        let session = CaptureSession(settings: CameraSettings(id: "live", device: FrameSources.syntheticName, size: size,
                                                              fps: 30, image: image))
        await session.start()
        let stream = try await session.subscribe()
        var frames = stream.makeAsyncIterator()
        var streamOnly: [EncodedFrame] = []
        while streamOnly.count < 3, let frame = await frames.next() { streamOnly.append(frame) }
        let shot = try await session.snapshot()
        // While snapshots keep being asked for, frames carry both copies. Frames queued for the
        // stream before (many, on a loaded machine) and the few an encoder took before the demand
        // reached it are still stream-only, so up to 30 frames are read to find 3.
        let asking = Task {
            while !Task.isCancelled {
                _ = try? await session.snapshot()
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        var skipped = 0, both: [EncodedFrame] = []
        while both.count < 3, skipped <= 30, let frame = await frames.next() {
            if frame.overlaidOnly { skipped += 1 } else { both.append(frame) }
        }
        asking.cancel()
        _ = await asking.value
        await session.stop()

        let box = TextOverlay(text: "live", corner: .topLeft).box(in: size)
        let plainShot = try JPEGDecoder().decodeRGB(shot.jpeg)
        #expect(!shot.overlaidOnly)
        for frame in streamOnly {
            #expect(frame.overlaidOnly && frame.streamJPEG == nil, "one encode per frame for the stream alone")
            let drawn = try JPEGDecoder().decodeRGB(frame.jpegForStream)
            let diff = difference(plainShot.pixels, drawn.pixels, width: size.width, height: size.height, inside: box)
            #expect(diff.inside > 100, "the stream has the overlay and the snapshot has not")
        }
        #expect(both.count == 3, "frames carry the plain copy after a snapshot (\(skipped) stream-only ones after it)")
        for frame in both {
            let overlaid = try #require(frame.streamJPEG, "the stream copy beside the plain one")
            #expect(frame.jpegForStream == overlaid)
            let plain = try JPEGDecoder().decodeRGB(frame.jpeg), drawn = try JPEGDecoder().decodeRGB(overlaid)
            #expect(plain.size == size && drawn.size == size)
            let diff = difference(plain.pixels, drawn.pixels, width: size.width, height: size.height, inside: box)
            #expect(diff.inside > 100, "the overlay's box is drawn on the stream copy")
            #expect(diff.outside <= 8, "nothing else changes: \(diff.outside)")
        }
    }

    @Test func anOverlayNotMeantForTheStreamIsNotDrawnThere() async throws {
        let image = ImageSettings(overlay: "{camera}", streamOverlay: false)
        let session = CaptureSession(settings: CameraSettings(id: "live", device: FrameSources.syntheticName,
                                                              size: FrameSize(width: 320, height: 240), fps: 30, image: image))
        await session.start()
        let stream = try await session.subscribe()
        var first: EncodedFrame?
        for await frame in stream { first = frame; break }
        await session.stop()
        let frame = try #require(first)
        #expect(frame.streamJPEG == nil && frame.jpegForStream == frame.jpeg)
    }
}
