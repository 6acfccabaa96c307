import CV4L2
import Testing
@testable import V4L2
import VideoCore

@Suite struct ShimTests {
    /// Swift computes FourCCs itself; the kernel header's macros must agree.
    @Test func fourCCMatchesKernelMacros() {
        #expect(PixelFormat.yuyv.rawValue == CV4L2_PIX_FMT_YUYV)
        #expect(PixelFormat.mjpeg.rawValue == CV4L2_PIX_FMT_MJPEG)
        #expect(PixelFormat.nv12.rawValue == CV4L2_PIX_FMT_NV12)
        #expect(PixelFormat.grey.rawValue == CV4L2_PIX_FMT_GREY)
    }

    @Test func requestNumbersAreTheKernelOnes() {
        // _IOR('V', 0, struct v4l2_capability): direction read, size 104, type 'V', number 0.
        #expect(CV4L2_VIDIOC_QUERYCAP == 0x8068_5600)
        // _IOWR('V', 17, struct v4l2_buffer) with an 88-byte buffer on 64-bit.
        #expect(CV4L2_VIDIOC_DQBUF == 0xC058_5611)
    }
}

@Suite struct FrameSizesTests {
    let vividWebcam = FrameSizes.discrete([
        FrameSize(width: 320, height: 180), FrameSize(width: 640, height: 360), FrameSize(width: 640, height: 480),
        FrameSize(width: 1280, height: 720), FrameSize(width: 1920, height: 1080), FrameSize(width: 3840, height: 2160),
    ])

    @Test func discreteChoosesNearest() {
        #expect(vividWebcam.nearest(to: FrameSize(width: 1280, height: 700)) == FrameSize(width: 1280, height: 720))
        #expect(vividWebcam.nearest(to: FrameSize(width: 641, height: 470)) == FrameSize(width: 640, height: 480))
        #expect(vividWebcam.nearest(to: FrameSize(width: 10000, height: 10000)) == FrameSize(width: 3840, height: 2160))
        #expect(vividWebcam.nearest(to: FrameSize(width: 1, height: 1)) == FrameSize(width: 320, height: 180))
    }

    @Test func stepwiseClampsAndRounds() {
        let sizes = FrameSizes.stepwise(min: FrameSize(width: 16, height: 16), max: FrameSize(width: 1920, height: 1080),
                                        step: FrameSize(width: 8, height: 2))
        #expect(sizes.nearest(to: FrameSize(width: 1283, height: 701)) == FrameSize(width: 1280, height: 702))
        #expect(sizes.nearest(to: FrameSize(width: 4000, height: 4000)) == FrameSize(width: 1920, height: 1080))
        #expect(sizes.nearest(to: FrameSize(width: 2, height: 2)) == FrameSize(width: 16, height: 16))
    }
}

@Suite struct ControlTests {
    @Test func namesAreSpelledAsV4L2CtlDoes() {
        #expect(DeviceControl.key(for: "Brightness") == "brightness")
        #expect(DeviceControl.key(for: "Inject VIDIOC_STREAMON Error") == "inject_vidioc_streamon_error")
        #expect(DeviceControl.key(for: "White Balance, Automatic") == "white_balance_automatic")
        #expect(DeviceControl.key(for: "Percentage of Dropped Buffers") == "percentage_of_dropped_buffers")
    }

    func control(_ kind: DeviceControl.Kind, min: Int64 = 0, max: Int64 = 255, step: UInt64 = 1) -> DeviceControl {
        DeviceControl(id: 1, label: "Brightness", name: "brightness", kind: kind, minimum: min, maximum: max, step: step,
                      defaultValue: 128, value: 128, menu: [(0, "Off"), (1, "On Low"), (3, "High")],
                      isReadOnly: false, isInactive: false)
    }

    @Test func rangeErrorsStateTheRange() throws {
        let brightness = control(.integer)
        #expect(try brightness.parse("140").get() == 140)
        guard case .failure(let error) = brightness.parse("300") else { Issue.record("300 accepted"); return }
        #expect(error.description == "brightness must be between 0 and 255; got 300")
        guard case .failure(let notNumber) = brightness.parse("bright") else { Issue.record("text accepted"); return }
        #expect(notNumber.description.contains("whole number from 0 to 255"))
    }

    /// libcamera's real-number controls (Brightness -1...1): numbers with fractions, checked
    /// against the real range; the whole-number fields hold them rounded.
    @Test func realControlsTakeFractionsWithinTheirRange() throws {
        let brightness = DeviceControl.real(id: 9, label: "Brightness",
                                            .init(minimum: -1, maximum: 1, defaultValue: 0, value: 0.5))
        #expect(brightness.kind == .float && brightness.name == "brightness")
        #expect(brightness.minimum == -1 && brightness.maximum == 1 && brightness.value == 1)
        #expect(try brightness.parseReal(" 0.25 ").get() == 0.25)
        #expect(try brightness.parseReal("-1").get() == -1)
        guard case .failure(let outside) = brightness.parseReal("1.5") else { Issue.record("1.5 accepted"); return }
        #expect(outside.description == "brightness must be between -1.0 and 1.0; got 1.5")
        guard case .failure(let word) = brightness.parseReal("bright") else { Issue.record("text accepted"); return }
        #expect(word.description.contains("takes a number from -1.0 to 1.0"))
        #expect(brightness.parseReal("nan").isFailure)
        #expect(brightness.parse("0.25").isFailure, "whole-number parsing refuses a float control")
    }

    @Test func stepsAreEnforced() {
        let stepped = control(.integer, min: 0, max: 100, step: 10)
        #expect((try? stepped.parse("30").get()) == 30)
        guard case .failure(let error) = stepped.parse("35") else { Issue.record("35 accepted"); return }
        #expect(error.description.contains("steps of 10"))
    }

    @Test func menusAcceptNamesAndIndexes() {
        let menu = control(.menu, min: 0, max: 3)
        #expect((try? menu.parse("on low").get()) == 1)
        #expect((try? menu.parse("3").get()) == 3)
        guard case .failure(let error) = menu.parse("2") else { Issue.record("missing item accepted"); return }
        #expect(error.description.contains("0 (Off), 1 (On Low), 3 (High)"))
    }

    @Test func booleans() {
        let toggle = control(.boolean, min: 0, max: 1)
        #expect((try? toggle.parse("on").get()) == 1)
        #expect((try? toggle.parse("false").get()) == 0)
        if case .success = toggle.parse("maybe") { Issue.record("maybe accepted") }
    }
}

@Suite struct QuantizationTests {
    @Test func defaultsFollowTheKernelsPatternGenerator() {
        let srgb = V4L2_COLORSPACE_SRGB.rawValue, unset = V4L2_QUANTIZATION_DEFAULT.rawValue
        #expect(VideoDevice.range(of: .yuyv, colorspace: srgb, quantization: unset) == .limited)
        #expect(VideoDevice.range(of: .nv12, colorspace: srgb, quantization: unset) == .limited)
        #expect(VideoDevice.range(of: .grey, colorspace: srgb, quantization: unset) == .full)
        #expect(VideoDevice.range(of: .rgb24, colorspace: srgb, quantization: unset) == .full)
        #expect(VideoDevice.range(of: .yuyv, colorspace: V4L2_COLORSPACE_JPEG.rawValue, quantization: unset) == .full)
        #expect(VideoDevice.range(of: .yuyv, colorspace: srgb, quantization: V4L2_QUANTIZATION_FULL_RANGE.rawValue) == .full)
        #expect(VideoDevice.range(of: .grey, colorspace: srgb, quantization: V4L2_QUANTIZATION_LIM_RANGE.rawValue) == .limited)
    }
}

extension Result {
    var isFailure: Bool { if case .failure = self { true } else { false } }
}
