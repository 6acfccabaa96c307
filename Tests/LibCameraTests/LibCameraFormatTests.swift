import Testing
@testable import LibCamera
import V4L2
import VideoCore

@Suite struct LibCameraFormatTests {
    /// DRM's RGB888 is stored B, G, R: V4L2's BGR24, which the JPEG layer encodes as BGR.
    @Test func drmNamesMapToTheSameBytesInV4L2Names() {
        func drm(_ code: String) -> UInt32 { PixelFormat(fourCC: code)!.rawValue }
        #expect(LibCameraFormat.pixelFormat(drm: drm("RG24")) == .bgr24)
        #expect(LibCameraFormat.pixelFormat(drm: drm("BG24")) == .rgb24)
        #expect(LibCameraFormat.pixelFormat(drm: drm("NV12")) == .nv12)
        #expect(LibCameraFormat.pixelFormat(drm: drm("YU12")) == .yuv420)
        #expect(LibCameraFormat.pixelFormat(drm: drm("XB24")) == nil)
        for (_, format) in LibCameraFormat.drmToV4L2 {
            #expect(LibCameraFormat.drmFourCC(format).flatMap(LibCameraFormat.pixelFormat(drm:)) == format)
        }
    }

    @Test func selectorsAreRecognisedByTheirPrefix() {
        #expect(LibCameraLibrary.isSelector("libcamera:0"))
        #expect(LibCameraLibrary.isSelector("libcamera:platform/vimc.0 Sensor B"))
        #expect(!LibCameraLibrary.isSelector("/dev/video0"))
        #expect(!LibCameraLibrary.isSelector(nil))
    }

    /// Without the shim (the host's unit tests) a libcamera selector fails with what to
    /// do; where the shim was built, libcamera runs and a camera number past the end is not there.
    @Test func aMissingShimOrCameraSaysWhatToDo() {
        do {
            _ = try LibCameraDevice(selector: "libcamera:99")
            Issue.record("libcamera:99 opened")
        } catch {
            if error.kind == .unsupported {
                #expect(error.message.contains("libcamera"))
            } else {
                #expect(error.kind == .noSuchDevice)
                #expect(error.message.contains("camctl devices"))
            }
        }
    }
}
