import CLibCamera
import V4L2
import VideoCore
#if canImport(Glibc)
import Glibc
#endif

/// One libcamera camera, acquired by this process (libcamera lets one process at a
/// time use a camera). Owned by one thread; released when it goes away.
public final class LibCameraDevice {
    public let library: LibCameraLibrary
    public let info: LibCameraInfo
    let handle: OpaquePointer
    var api: clibcamera_api { library.api.pointee }

    /// "libcamera:0 (Sensor B)".
    public var name: String { info.description }

    /// Acquires the camera a selector names (`libcamera:0`, see `LibCameraLibrary.resolve`).
    public convenience init(selector: String) throws(DeviceError) {
        let library = try LibCameraLibrary.shared.get()
        try self.init(library: library, info: try library.resolve(selector))
    }

    public init(library: LibCameraLibrary, info: LibCameraInfo) throws(DeviceError) {
        self.library = library
        self.info = info
        var handle: OpaquePointer?
        let status = library.api.pointee.acquire!(library.manager, info.id, &handle)
        guard status == 0, let handle else {
            if status == -EBUSY, library.isAbandoned(info.id) {
                // libcamera 0.0.3 still lists the old camera, acquired and running; when the camera
                // comes back it registers it again under the same id, which is fatal (abort).
                throw DeviceError(.restartNeeded, path: info.description,
                                  "\(info.description) went away while streaming, and libcamera \(library.version) still holds it as it was: "
                                  + "it cannot be stopped, and libcamera would abort camd when the camera comes back. "
                                  + "Under systemd camd restarts itself, and the new camd takes the camera when it is back; "
                                  + "otherwise restart camd before the camera comes back")
            }
            throw Self.error(status, camera: info, during: "acquiring it")
        }
        self.handle = handle
    }

    /// Set when libcamera could not be stopped safely (see `LibCameraStream.stop`): the
    /// camera is then not released either, since releasing a running camera stops it.
    var abandoned = false

    /// The controls camd set, by id: libcamera reports values only in a frame's metadata.
    var values: [UInt32: Double] = [:]

    deinit {
        if !abandoned { api.release!(handle) }
    }

    /// The formats and sizes of its video stream.
    public func formats() throws(DeviceError) -> [LibCameraFormat] {
        try list(clibcamera_format(), first: 16, during: "listing its formats") { api.formats!(handle, $0, $1) }
            .map(LibCameraFormat.init)
    }

    /// What a shim call that fills up to a capacity and returns how many there are gives,
    /// asked again with room for all when `first` was too few.
    func list<Item>(_ empty: Item, first: Int, during what: String,
                    _ fill: (UnsafeMutablePointer<Item>, Int32) -> Int32) throws(DeviceError) -> [Item] {
        var items = [Item](repeating: empty, count: first)
        var count = items.withUnsafeMutableBufferPointer { fill($0.baseAddress!, Int32($0.count)) }
        if count > Int32(items.count) {
            items = [Item](repeating: empty, count: Int(count))
            count = items.withUnsafeMutableBufferPointer { fill($0.baseAddress!, Int32($0.count)) }
        }
        guard count >= 0 else { throw Self.error(count, camera: info, during: what) }
        return Array(items.prefix(Int(count)))
    }

    /// Configures its stream as close to `request` as libcamera allows; the result is
    /// what libcamera adjusted it to. Frames sizes snap (vimc: 640x480 becomes 636x480).
    public func configure(_ request: CaptureRequest) throws(DeviceError) -> CaptureConfiguration {
        let offered = try formats()
        let usable = offered.filter { $0.format != nil }
        let chosen: LibCameraFormat
        if let wanted = request.format {
            guard let match = usable.first(where: { $0.format == wanted }) else {
                throw DeviceError(.unsupported, path: name,
                                  "format \(wanted) is not offered by \(name); it offers \(offered.map(\.description).joined(separator: ", "))")
            }
            chosen = match
        } else {
            guard let first = CaptureRequest.preferredFormats.lazy.compactMap({ format in usable.first { $0.format == format } }).first
                ?? usable.first else {
                throw DeviceError(.unsupported, path: name,
                                  "\(name) offers no format camd can encode: \(offered.map(\.name).joined(separator: ", "))")
            }
            chosen = first
        }
        let size = request.size ?? CaptureRequest.defaultSize
        var config = clibcamera_stream_config()
        config.fourcc = chosen.drmFourCC
        config.width = UInt32(size.width)
        config.height = UInt32(size.height)
        let status = api.configure!(handle, &config)
        guard status == 0 else { throw Self.error(status, camera: info, during: "configuring \(chosen.name) \(size)") }
        guard let format = LibCameraFormat.pixelFormat(drm: config.fourcc) else {
            throw DeviceError(.unsupported, path: name, "\(name) changed the format to one camd cannot encode (DRM fourcc \(PixelFormat(rawValue: config.fourcc)))")
        }
        let range: ColorRange = switch config.range {
        case 1: .full
        case 2: .limited
        default: [.rgb24, .bgr24, .xbgr32, .grey].contains(format) ? .full : .limited
        }
        return CaptureConfiguration(
            layout: FrameLayout(format: format, size: FrameSize(width: Int(config.width), height: Int(config.height)),
                                bytesPerLine: Int(config.stride), range: range),
            bufferSize: Int(config.frame_size), interval: nil, request: request)
    }

    /// A failure the shim reported as a negative errno, in words that say what to do.
    static func error(_ status: Int32, camera: LibCameraInfo, during what: String) -> DeviceError {
        let name = camera.description
        switch -status {
        case ENODEV, ENOENT:
            return DeviceError(.disconnected, path: name, "\(name) is gone (\(what)): the camera was removed or its driver unloaded")
        case EBUSY:
            return DeviceError(.busy, path: name,
                               "\(name) is in use by another process (\(what)): libcamera lets one process use a camera at a time. Stop the other one (`cam`, another camd, a libcamera app) and try again")
        case EACCES, EPERM:
            if let denial = MediaGraphAccess.denial("\(name) refused access (\(what))") { return denial }
            return DeviceError(.permissionDenied, path: name,
                               "\(name) refused access (\(what)): this user may not open every node of its media graph (/dev/media*, /dev/video*, /dev/v4l-subdev*). Add the user to group video (`sudo usermod -aG video $USER`, then log in again)")
        case EINVAL:
            return DeviceError(.unsupported, path: name, "\(name) refused \(what) (\(LibCameraLibrary.describe(status)))")
        case EPIPE:
            return DeviceError(.streamFailed, path: name, "\(name) failed \(what): its media pipeline is not configured (EPIPE)")
        default:
            return DeviceError(.streamFailed, path: name, "\(name) failed \(what): \(LibCameraLibrary.describe(status))")
        }
    }
}
