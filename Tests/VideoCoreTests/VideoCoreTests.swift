import Testing
import VideoCore

@Suite struct PixelFormatTests {
    @Test func fourCCRoundTrips() {
        #expect(PixelFormat.yuyv.fourCC == "YUYV")
        #expect(PixelFormat(fourCC: "MJPG") == .mjpeg)
        #expect(PixelFormat.yuyv.rawValue == 0x5659_5559)
        #expect(PixelFormat(fourCC: "TOO LONG") == nil)
    }

    @Test func parsesWhatUsersType() {
        #expect(PixelFormat(parsing: "MJPEG") == .mjpeg)
        #expect(PixelFormat(parsing: "mjpeg") == .mjpeg)
        #expect(PixelFormat(parsing: "YU12") == .yuv420)
        #expect(PixelFormat(parsing: "Y10")?.fourCC == "Y10 ")
        #expect(PixelFormat(parsing: "Y10")?.description == "Y10")
        #expect(PixelFormat(parsing: "") == nil)
        #expect(PixelFormat(parsing: "ABCDE") == nil)
    }
}

@Suite struct FrameSizeTests {
    @Test func parses() {
        #expect(FrameSize(parsing: "1280x720") == FrameSize(width: 1280, height: 720))
        #expect(FrameSize(parsing: "640X480") == FrameSize(width: 640, height: 480))
        for bad in ["1280", "x720", "0x10", "-5x5", "12x", "axb", "1x2x3"] {
            #expect(FrameSize(parsing: bad) == nil, "\(bad) should not parse")
        }
    }

    @Test func nearestIsRelativeInBothDimensions() {
        let asked = FrameSize(width: 1280, height: 700)
        let near = FrameSize(width: 1280, height: 720), far = FrameSize(width: 1024, height: 768)
        #expect(asked.distance(to: near) < asked.distance(to: far))
        #expect(asked.distance(to: asked) == 0)
    }
}

@Suite struct FrameIntervalTests {
    @Test func convertsRates() {
        #expect(FrameInterval(fps: 25) == FrameInterval(numerator: 1, denominator: 25))
        #expect(FrameInterval(numerator: 1001, denominator: 30000).fps > 29.97)
        #expect(FrameInterval(numerator: 1, denominator: 30).description == "30 fps")
        #expect(abs(FrameInterval(fps: 7.5).fps - 7.5) < 0.001)
    }
}
