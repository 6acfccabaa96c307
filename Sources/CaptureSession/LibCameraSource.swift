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
        let initial = try device.plan(controls)
        stream = try LibCameraStream(device: device, configuration: try device.configure(request), controls: initial)
    }

    public func keepFrames(_ count: Int, takingBackNewest: @escaping @Sendable () -> Void) {
        stream.recycler.keep(count, takingBackNewest: takingBackNewest)
    }

    public func nextFrame(timeout: Duration) throws(DeviceError) -> Frame {
        try stream.nextFrame(timeout: timeout)
    }

    public func nextFrame(timeout: Duration, ifWanted wanted: () -> Bool) throws(DeviceError) -> SourcedFrame {
        try stream.nextFrame(timeout: timeout, ifWanted: wanted)
    }

    public var droppedFrames: Int { stream.broken + stream.lost }

    public func stop() { stream.stop() }
}

extension LibCameraSource: ControllableCamera {
    public func controls() throws(DeviceError) -> [DeviceControl] { try device.controls() }

    /// Checked against every control first, then sent with the next request: the value
    /// reaches the picture a frame or two later, as libcamera applies it.
    public func setControls(_ assignments: [(name: String, value: String)]) throws(DeviceError) -> [DeviceControl] {
        let planned = try device.plan(assignments)
        stream.setControls(planned)
        return planned
    }
}

/// A libcamera camera acquired while its session does not run, to list and check its
/// controls; the values kept in the settings are its values until it starts with them.
final class IdleLibCamera: ControllableCamera {
    let device: LibCameraDevice

    init(_ device: LibCameraDevice, kept: [(name: String, value: String)]) {
        self.device = device
        _ = try? device.plan(kept)
    }

    func controls() throws(DeviceError) -> [DeviceControl] { try device.controls() }

    func setControls(_ assignments: [(name: String, value: String)]) throws(DeviceError) -> [DeviceControl] {
        try device.plan(assignments)
    }
}
