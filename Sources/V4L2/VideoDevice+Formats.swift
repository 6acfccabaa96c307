import CV4L2
import VideoCore

/// The frame sizes a device offers for one pixel format.
public enum FrameSizes: Hashable, Sendable {
    case discrete([FrameSize])
    /// Any size from `min` to `max` in steps (continuous is a step of 1).
    case stepwise(min: FrameSize, max: FrameSize, step: FrameSize)

    /// The offered size nearest to `wanted`.
    public func nearest(to wanted: FrameSize) -> FrameSize? {
        switch self {
        case .discrete(let sizes):
            return sizes.min { wanted.distance(to: $0) < wanted.distance(to: $1) }
        case .stepwise(let low, let high, let step):
            func fit(_ value: Int, _ low: Int, _ high: Int, _ step: Int) -> Int {
                let clamped = min(max(value, low), high)
                let steps = ((clamped - low) + max(step, 1) / 2) / max(step, 1)
                return min(low + steps * max(step, 1), high)
            }
            return FrameSize(width: fit(wanted.width, low.width, high.width, step.width),
                             height: fit(wanted.height, low.height, high.height, step.height))
        }
    }

    public var largest: FrameSize? {
        switch self {
        case .discrete(let sizes): return sizes.max()
        case .stepwise(_, let high, _): return high
        }
    }
}

/// One pixel format a device offers, with its sizes.
public struct FormatDescription: Hashable, Sendable {
    public var format: PixelFormat
    public var description: String
    public var isCompressed: Bool
    /// True when libv4l or the driver converts in software.
    public var isEmulated: Bool
    public var sizes: FrameSizes
}

/// What to ask a device for; nil fields mean "camd's default".
public struct CaptureRequest: Hashable, Sendable {
    public var format: PixelFormat?
    public var size: FrameSize?
    public var fps: Double?

    public init(format: PixelFormat? = nil, size: FrameSize? = nil, fps: Double? = nil) {
        self.format = format
        self.size = size
        self.fps = fps
    }

    /// The size asked for when none is given.
    public static let defaultSize = FrameSize(width: 1280, height: 720)
    /// Formats preferred when none is given: JPEG from the camera costs no encoding,
    /// then the formats camd converts itself without libv4l.
    public static let preferredFormats: [PixelFormat] = [
        .mjpeg, .jpeg, .yuyv, .uyvy, .nv12, .yuv420, .yvyu, .vyuy, .nv21, .yvu420, .yuv422p, .nv16, .nv61,
        .rgb24, .bgr24, .grey,
    ]
}

/// What the device agreed to: may differ from the request (nearest size, slower rate).
public struct CaptureConfiguration: Hashable, Sendable {
    public var layout: FrameLayout
    /// The largest a frame can be (`sizeimage`); a frame shorter than this is truncated
    /// unless the format is compressed.
    public var bufferSize: Int
    public var interval: FrameInterval?
    public var request: CaptureRequest

    public init(layout: FrameLayout, bufferSize: Int, interval: FrameInterval?, request: CaptureRequest) {
        self.layout = layout
        self.bufferSize = bufferSize
        self.interval = interval
        self.request = request
    }
}

extension VideoDevice {
    /// Every pixel format the device offers, with its frame sizes.
    public func formats() throws(DeviceError) -> [FormatDescription] {
        var result: [FormatDescription] = []
        for index in 0..<UInt32(256) {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            guard case .success = Syscall.ioctl(fd, CV4L2_VIDIOC_ENUM_FMT, &desc) else { break }
            let format = PixelFormat(rawValue: desc.pixelformat)
            result.append(FormatDescription(
                format: format, description: string(fromCArray: desc.description),
                isCompressed: desc.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0,
                isEmulated: desc.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0,
                sizes: try frameSizes(for: format)))
        }
        return result
    }

    /// The sizes offered for one format (VIDIOC_ENUM_FRAMESIZES).
    public func frameSizes(for format: PixelFormat) throws(DeviceError) -> FrameSizes {
        var discrete: [FrameSize] = []
        for index in 0..<UInt32(512) {
            var sizes = v4l2_frmsizeenum()
            sizes.index = index
            sizes.pixel_format = format.rawValue
            guard case .success = Syscall.ioctl(fd, CV4L2_VIDIOC_ENUM_FRAMESIZES, &sizes) else { break }
            if sizes.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                discrete.append(FrameSize(width: Int(sizes.discrete.width), height: Int(sizes.discrete.height)))
            } else {
                let s = sizes.stepwise
                return .stepwise(min: FrameSize(width: Int(s.min_width), height: Int(s.min_height)),
                                 max: FrameSize(width: Int(s.max_width), height: Int(s.max_height)),
                                 step: FrameSize(width: Int(max(s.step_width, 1)), height: Int(max(s.step_height, 1))))
            }
        }
        if discrete.isEmpty {
            // Drivers without ENUM_FRAMESIZES: whatever TRY_FMT accepts, within V4L2's limits.
            return .stepwise(min: FrameSize(width: 1, height: 1), max: FrameSize(width: 8192, height: 8192),
                             step: FrameSize(width: 1, height: 1))
        }
        return .discrete(discrete)
    }

    /// The frame intervals offered for a format and size, fastest first.
    public func frameIntervals(for format: PixelFormat, size: FrameSize) -> [FrameInterval] {
        var result: [FrameInterval] = []
        for index in 0..<UInt32(256) {
            var ival = v4l2_frmivalenum()
            ival.index = index
            ival.pixel_format = format.rawValue
            ival.width = UInt32(size.width)
            ival.height = UInt32(size.height)
            guard case .success = Syscall.ioctl(fd, CV4L2_VIDIOC_ENUM_FRAMEINTERVALS, &ival) else { break }
            if ival.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                result.append(FrameInterval(numerator: ival.discrete.numerator, denominator: ival.discrete.denominator))
            } else {
                let s = ival.stepwise
                result.append(FrameInterval(numerator: s.min.numerator, denominator: s.min.denominator))
                result.append(FrameInterval(numerator: s.max.numerator, denominator: s.max.denominator))
                break
            }
        }
        return result.sorted { $0.fps > $1.fps }
    }

    /// Chooses and sets a format, size and frame rate as near to `request` as the
    /// device allows, and reports what was chosen.
    public func configure(_ request: CaptureRequest) throws(DeviceError) -> CaptureConfiguration {
        let offered = try formats()
        guard !offered.isEmpty else {
            throw DeviceError(.unsupported, path: path, "\(path) (\(info.card)) offers no capture formats")
        }
        let chosen: FormatDescription
        if let wanted = request.format {
            guard let match = offered.first(where: { $0.format == wanted }) else {
                let list = offered.map(\.format.description).joined(separator: ", ")
                throw DeviceError(.unsupported, path: path, "\(path) (\(info.card)) does not offer format \(wanted); it offers \(list)")
            }
            chosen = match
        } else {
            chosen = CaptureRequest.preferredFormats.lazy.compactMap { want in offered.first { $0.format == want } }.first
                ?? offered[0]
        }
        let wantedSize = request.size ?? CaptureRequest.defaultSize
        let size = chosen.sizes.nearest(to: wantedSize) ?? wantedSize

        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        format.fmt.pix.width = UInt32(size.width)
        format.fmt.pix.height = UInt32(size.height)
        format.fmt.pix.pixelformat = chosen.format.rawValue
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try control(CV4L2_VIDIOC_S_FMT, &format, "setting format \(chosen.format) \(size)")
        let pix = format.fmt.pix
        let got = PixelFormat(rawValue: pix.pixelformat)
        guard got == chosen.format else {
            throw DeviceError(.unsupported, path: path, "\(path) was asked for \(chosen.format) but chose \(got) instead")
        }
        let layout = FrameLayout(
            format: got, size: FrameSize(width: Int(pix.width), height: Int(pix.height)),
            bytesPerLine: Int(pix.bytesperline),
            range: Self.range(of: got, colorspace: pix.colorspace, quantization: pix.quantization))

        var interval: FrameInterval? = nil
        if let fps = request.fps {
            interval = try setFrameRate(fps, format: got, size: layout.size)
        } else {
            interval = try currentFrameInterval()
        }
        return CaptureConfiguration(layout: layout, bufferSize: Int(pix.sizeimage), interval: interval, request: request)
    }

    /// The device's frame interval now, if it reports one.
    public func currentFrameInterval() throws(DeviceError) -> FrameInterval? {
        var parm = v4l2_streamparm()
        parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        guard case .success = Syscall.ioctl(fd, CV4L2_VIDIOC_G_PARM, &parm) else { return nil }
        let t = parm.parm.capture.timeperframe
        return t.denominator == 0 ? nil : FrameInterval(numerator: t.numerator, denominator: t.denominator)
    }

    /// Asks for a frame rate (VIDIOC_S_PARM), choosing the nearest one the device lists.
    /// Returns the interval the device settled on.
    public func setFrameRate(_ fps: Double, format: PixelFormat, size: FrameSize) throws(DeviceError) -> FrameInterval? {
        guard fps > 0 else {
            throw DeviceError(.invalidArgument, path: path, "a frame rate must be above 0 fps; got \(fps)")
        }
        var parm = v4l2_streamparm()
        parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        guard case .success = Syscall.ioctl(fd, CV4L2_VIDIOC_G_PARM, &parm),
              parm.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 else {
            return try currentFrameInterval()
        }
        let offered = frameIntervals(for: format, size: size)
        let wanted = offered.min { abs($0.fps - fps) < abs($1.fps - fps) } ?? FrameInterval(fps: fps)
        parm.parm.capture.timeperframe.numerator = wanted.numerator
        parm.parm.capture.timeperframe.denominator = wanted.denominator
        try control(CV4L2_VIDIOC_S_PARM, &parm, "setting the frame rate to \(wanted)")
        let t = parm.parm.capture.timeperframe
        return t.denominator == 0 ? nil : FrameInterval(numerator: t.numerator, denominator: t.denominator)
    }

    /// The sample range the driver uses, resolving `V4L2_QUANTIZATION_DEFAULT` as the
    /// kernel's own test pattern generator does: RGB, luma-only (GREY) and the JPEG
    /// colourspace are full range, Y'CbCr is limited.
    static func range(of format: PixelFormat, colorspace: UInt32, quantization: UInt32) -> ColorRange {
        switch quantization {
        case V4L2_QUANTIZATION_FULL_RANGE.rawValue: return .full
        case V4L2_QUANTIZATION_LIM_RANGE.rawValue: return .limited
        default:
            let fullRangeFormats: Set<PixelFormat> = [.rgb24, .bgr24, .xbgr32, .xrgb32, .grey]
            if fullRangeFormats.contains(format) || format.isJPEG { return .full }
            return colorspace == V4L2_COLORSPACE_JPEG.rawValue ? .full : .limited
        }
    }
}
