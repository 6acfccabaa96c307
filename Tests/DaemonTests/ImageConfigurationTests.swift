import CaptureSession
@testable import Daemon
import JPEG
import Testing
import VideoCore

/// `[camera.image]` and `location` in camd.toml.
@Suite struct ImageConfigurationTests {
    @Test func imageDefaultsAndLocationAreRead() throws {
        let text = """
            [[camera]]
            id = "bench"
            location = { latitude = 51.500729, longitude = -0.124625, altitude = 12.5 }

            [camera.image]
            width = 640
            height = 480
            fit = "cover"
            max = 320
            crop = [0, 0, 1280, 720]
            rotate = 90
            flip = "h"
            interpolation = "bilinear"
            pad = "#102030"
            overlay = "%Y-%m-%d %H:%M:%S {camera}"
            overlay_corner = "top-right"
            stream_overlay = true

            [[camera]]
            id = "door"
            [camera.image]
            rotate = "exif"
            overlay = ""
            """
        let configuration = try DaemonConfiguration.parse(text, source: "test.toml")
        let bench = configuration.cameras[0].image
        #expect(bench.geometry == Geometry(width: 640, height: 480, fit: .cover, longestSide: 320,
                                           crop: Geometry.Rect(x: 0, y: 0, width: 1280, height: 720), rotate: .clockwise90,
                                           flip: .horizontal, interpolation: .bilinear, pad: Geometry.Color(red: 0x10, green: 0x20, blue: 0x30)))
        #expect(bench.overlay == "%Y-%m-%d %H:%M:%S {camera}" && bench.overlayCorner == .topRight && bench.streamOverlay)
        let location = try #require(configuration.cameras[0].location)
        #expect(location == (try EXIF.GPSPosition(latitude: 51.500729, longitude: -0.124625, altitude: 12.5)))

        let door = configuration.cameras[1]
        #expect(door.image.geometry.rotationInEXIF && door.image.overlay == nil && !door.image.streamOverlay)
        #expect(door.location == nil)
    }

    @Test func withoutTheTablesNothingChanges() throws {
        let camera = try DaemonConfiguration.parse("[[camera]]\nid = \"a\"\n", source: "test.toml").cameras[0]
        #expect(camera.image == ImageSettings() && camera.image.isIdentity && camera.location == nil)
    }
}
