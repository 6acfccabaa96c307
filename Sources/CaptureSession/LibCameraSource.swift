import LibCamera
import V4L2
import VideoCore

/// A libcamera camera, configured and streaming: the second kind of camera beside
/// `V4L2Source`, chosen with `libcamera:<index or id>`. Its frames are copied out of
/// libcamera's buffers into the same `Frame`s a V4L2 camera gives.
public final class LibCameraSource: FrameSource {
    public let device: LibCameraDevice
    public let stream: LibCameraStream
    public var configuration: CaptureConfiguration { stream.configuration }
    public var name: String { device.name }
    public var cardName: String { device.info.model.isEmpty ? device.info.id : device.info.model }

    public init(selector: String, request: CaptureRequest, controls: [(name: String, value: String)] = []) throws(DeviceError) {
        device = try LibCameraDevice(selector: selector)
        if let first = controls.first {
            // Controls of libcamera cameras (floats such as Brightness -1...1) are not wired yet.
            throw DeviceError(.invalidArgument, path: device.name,
                              "camd cannot set controls of libcamera cameras yet (asked for \(first.name)); remove the camera's controls from its settings")
        }
        stream = try LibCameraStream(device: device, configuration: try device.configure(request))
    }

    public func keepFrames(_ count: Int) { stream.recycler.limit = count }

    public func nextFrame(timeout: Duration) throws(DeviceError) -> Frame {
        try stream.nextFrame(timeout: timeout)
    }

    public func skipFrame(timeout: Duration) throws(DeviceError) -> Double {
        try stream.skipFrame(timeout: timeout)
    }

    public var droppedFrames: Int { stream.broken + stream.lost }

    public func stop() { stream.stop() }
}
