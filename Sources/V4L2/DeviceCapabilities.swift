import CV4L2

/// What a V4L2 node can do (`V4L2_CAP_*`, from `device_caps`).
public struct DeviceCapabilities: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The corresponding C constant is `V4L2_CAP_VIDEO_CAPTURE`.
    public static let videoCapture = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_VIDEO_CAPTURE))
    /// The corresponding C constant is `V4L2_CAP_VIDEO_CAPTURE_MPLANE`.
    public static let videoCaptureMultiplanar = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE))
    /// The corresponding C constant is `V4L2_CAP_VIDEO_OUTPUT`.
    public static let videoOutput = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_VIDEO_OUTPUT))
    /// The corresponding C constant is `V4L2_CAP_VIDEO_OUTPUT_MPLANE`.
    public static let videoOutputMultiplanar = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_VIDEO_OUTPUT_MPLANE))
    /// The corresponding C constant is `V4L2_CAP_VIDEO_M2M`.
    public static let memoryToMemory = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_VIDEO_M2M))
    /// The corresponding C constant is `V4L2_CAP_META_CAPTURE`.
    public static let metadataCapture = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_META_CAPTURE))
    /// The corresponding C constant is `V4L2_CAP_VBI_CAPTURE`.
    public static let vbiCapture = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_VBI_CAPTURE))
    /// The corresponding C constant is `V4L2_CAP_SDR_CAPTURE`.
    public static let sdrCapture = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_SDR_CAPTURE))
    /// The corresponding C constant is `V4L2_CAP_RADIO`.
    public static let radio = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_RADIO))
    /// The corresponding C constant is `V4L2_CAP_TOUCH`.
    public static let touch = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_TOUCH))
    /// The corresponding C constant is `V4L2_CAP_STREAMING`.
    public static let streaming = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_STREAMING))

    /// The node is one part of a media pipeline whose links and formats are set through its
    /// media controller (/dev/mediaN): not a camera on its own (vimc, a Pi's unicam and ISP nodes).
    /// The corresponding C constant is `V4L2_CAP_IO_MC`.
    public static let mediaControlled = DeviceCapabilities(rawValue: UInt32(V4L2_CAP_IO_MC))

    /// A camera camd can use: single-planar video capture with streaming I/O.
    public var isCamera: Bool { contains(.videoCapture) && contains(.streaming) && !contains(.memoryToMemory) }

    /// What this node is, in words, for messages about nodes that are not cameras.
    public var kindDescription: String {
        if contains(.memoryToMemory) { return "a memory-to-memory (codec) device" }
        if contains(.videoCapture) || contains(.videoCaptureMultiplanar) {
            return contains(.streaming) ? "a camera" : "a capture device without streaming I/O"
        }
        if contains(.videoOutput) || contains(.videoOutputMultiplanar) { return "a video output device" }
        if contains(.metadataCapture) { return "a metadata node" }
        if contains(.vbiCapture) { return "a VBI (teletext) node" }
        if contains(.sdrCapture) { return "a software-defined radio node" }
        if contains(.radio) { return "a radio node" }
        if contains(.touch) { return "a touch sensor" }
        return "not a video capture device"
    }

    /// Names of the capabilities set, for listings.
    public var names: [String] {
        let all: [(DeviceCapabilities, String)] = [
            (.videoCapture, "capture"), (.videoCaptureMultiplanar, "capture-mplane"),
            (.videoOutput, "output"), (.videoOutputMultiplanar, "output-mplane"), (.memoryToMemory, "m2m"),
            (.metadataCapture, "metadata"), (.vbiCapture, "vbi"), (.sdrCapture, "sdr"), (.radio, "radio"),
            (.touch, "touch"), (.streaming, "streaming"), (.mediaControlled, "io-mc"),
        ]
        return all.filter { contains($0.0) }.map(\.1)
    }
}

/// What VIDIOC_QUERYCAP says about a node.
public struct DeviceInfo: Hashable, Sendable {
    public var driver: String
    public var card: String
    public var busInfo: String
    public var capabilities: DeviceCapabilities
}
