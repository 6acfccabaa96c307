import LibCamera
import V4L2
import VideoCore

/// Where frames come from: a V4L2 camera, a libcamera camera, or the synthetic test source.
/// Owned by one thread at a time (the capture thread, or a command-line tool).
public protocol FrameSource: AnyObject {
    /// "/dev/video0 (vivid)" or "testsrc (synthetic test source, not a camera)".
    var name: String { get }
    /// The camera's own name, for EXIF ("vivid", "HD Pro Webcam C920").
    var cardName: String { get }
    var configuration: CaptureConfiguration { get }
    /// Waits for the freshest good frame; throws `DeviceError` on failure or after `timeout`.
    func nextFrame(timeout: Duration) throws(DeviceError) -> Frame
    /// As `nextFrame`, asking `wanted` only once the frame has come: a frame nobody wants
    /// then is not copied (`.unread`, when it was captured), or is kept where the device put
    /// it when that costs nothing (`.kept`). The capture thread asks whether anyone wants the
    /// pixels after its wait, so a snapshot asked during the wait gets the frame that ends it,
    /// not the one after.
    func nextFrame(timeout: Duration, ifWanted wanted: () -> Bool) throws(DeviceError) -> SourcedFrame
    /// Frames the device sent broken or never sent (sequence gaps), since streaming began.
    var droppedFrames: Int { get }
    /// Frames copied out of the device's buffers because consumers held every one it could
    /// lend (`CaptureStream`), since streaming began.
    var copiedFrames: Int { get }
    /// Stops streaming and releases the device.
    func stop()
    /// How many frame buffers the source keeps for reuse (`FrameRecycler`), and what lets
    /// go of the newest frame when all of them are held (`FrameRecycler.takeBackNewest`).
    func keepFrames(_ count: Int, takingBackNewest: @escaping @Sendable () -> Void)
}

extension FrameSource {
    /// Sources that allocate no frames of their own keep none.
    public func keepFrames(_ count: Int, takingBackNewest: @escaping @Sendable () -> Void) {}

    /// Sources that lend no buffers of the device count no copies.
    public var copiedFrames: Int { 0 }

    /// Sources that cannot leave pixels unread take the frame, and drop it if nobody wants it.
    public func nextFrame(timeout: Duration, ifWanted wanted: () -> Bool) throws(DeviceError) -> SourcedFrame {
        let frame = try nextFrame(timeout: timeout)
        return wanted() ? .read(frame) : .unread(monotonicTime: frame.monotonicTime)
    }

    /// Waits for a frame and leaves its pixels unread: when it was captured (CLOCK_MONOTONIC seconds).
    public func skipFrame(timeout: Duration) throws(DeviceError) -> Double {
        switch try nextFrame(timeout: timeout, ifWanted: { false }) {
        case .read(let frame), .kept(let frame): frame.monotonicTime
        case .unread(let captured): captured
        }
    }
}

/// Opens frame sources by what a user typed.
public enum FrameSources {
    /// The selector of the built-in synthetic source.
    public static let syntheticName = "testsrc"

    /// Opens, configures and starts a source. `controls` are set before streaming.
    public static func open(_ selector: String?, request: CaptureRequest,
                            controls: [(name: String, value: String)] = []) throws(DeviceError) -> any FrameSource {
        if selector == syntheticName {
            return try SyntheticSource(request: request)
        }
        if LibCameraLibrary.isSelector(selector), let selector {
            return try LibCameraSource(selector: selector, request: request, controls: controls)
        }
        let path: String
        do {
            path = try DeviceDiscovery.resolve(selector)
        } catch where selector == nil && error.kind == .noSuchDevice {
            // No V4L2 camera: the first camera is libcamera's, if it has one (a Pi with a camera module).
            guard case .success(let library) = LibCameraLibrary.shared, let first = library.cameras().first else { throw error }
            return try LibCameraSource(selector: first.selector, request: request, controls: controls)
        }
        do {
            return try V4L2Source(path: path, request: request, controls: controls)
        } catch where error.errno == .brokenPipe {
            throw Self.namingLibCameraCameras(error)
        }
    }

    /// A node inside a media pipeline refused to stream: says which libcamera cameras drive pipelines here.
    static func namingLibCameraCameras(_ error: DeviceError) -> DeviceError {
        var named = error
        switch LibCameraLibrary.shared {
        case .success(let library):
            let cameras = library.cameras()
            named.message += cameras.isEmpty ? " (libcamera found no camera here)"
                : ". libcamera cameras here: " + cameras.map { "`-d \($0.selector)` (\($0.model.isEmpty ? $0.id : $0.model))" }.joined(separator: ", ")
        case .failure(let unavailable):
            named.message += " (\(unavailable.message))"
        }
        return named
    }

    /// What a selector names and the pixel formats it offers, found without streaming:
    /// the synthetic source's list, a libcamera camera acquired briefly, or a V4L2 node opened briefly. Blocks; call it off
    /// the actors. Throws `.notACamera` for anything but a V4L2 capture node (a regular
    /// file, /dev/null, a symbolic link to either), and the open's error otherwise.
    public static func offeredFormats(_ selector: String?) throws(DeviceError) -> (source: String, formats: [PixelFormat]) {
        if selector == syntheticName {
            return ("\(syntheticName) (synthetic test source, not a camera)", SyntheticSource.formats)
        }
        if LibCameraLibrary.isSelector(selector), let selector {
            let camera = try LibCameraDevice(selector: selector)
            return (camera.name, try camera.formats().compactMap(\.format))
        }
        let device = try VideoDevice(path: try DeviceDiscovery.resolve(selector))
        return ("\(device.path) (\(device.info.card))", try device.formats().map(\.format))
    }
}

/// A V4L2 camera, configured and streaming.
public final class V4L2Source: FrameSource {
    public let device: VideoDevice
    public let stream: CaptureStream
    public var configuration: CaptureConfiguration { stream.configuration }
    public var name: String { "\(device.path) (\(device.info.card))" }
    public var cardName: String { device.info.card }

    public init(path: String, request: CaptureRequest, controls: [(name: String, value: String)] = []) throws(DeviceError) {
        device = try VideoDevice(path: path)
        if !controls.isEmpty { try device.setControls(controls) }
        let configuration = try device.configure(request)
        stream = try CaptureStream(device: device, configuration: configuration)
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

    public var droppedFrames: Int { stream.statistics.broken + stream.statistics.lost }

    public var copiedFrames: Int { stream.statistics.copied }

    public func stop() { stream.stop() }
}
