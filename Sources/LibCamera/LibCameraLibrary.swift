import CLibCamera
import Synchronization
import V4L2
#if canImport(Glibc)
import Glibc
#endif

/// libcamera in this process: camd's shim library (libcamd-libcamera.so, see
/// CLibCamera.h for why it is loaded at run time) and the one started `CameraManager`
/// the process keeps. libcamera is optional: where it or the shim is missing,
/// `shared` holds the reason, and there are no libcamera cameras.
public final class LibCameraLibrary: @unchecked Sendable {  // immutable after init; the shim's CameraManager calls are thread-safe (libcamera documents cameras(), get() and acquire() as such)
    let api: UnsafePointer<clibcamera_api>
    let manager: OpaquePointer
    /// libcamera's version ("v0.0.3").
    public let version: String
    /// Where the shim was loaded from.
    public let path: String

    /// The shim's file name.
    public static let shimName = "libcamd-libcamera.so"
    /// The selector prefix of libcamera cameras: `libcamera:0`, `libcamera:platform/vimc.0 Sensor B`.
    public static let selectorPrefix = "libcamera:"

    /// Cameras left acquired because stopping them would have aborted camd (`LibCameraStream.stop`), by id.
    private let abandoned = Mutex<Set<String>>([])

    func abandon(_ id: String) { abandoned.withLock { _ = $0.insert(id) } }
    func isAbandoned(_ id: String) -> Bool { abandoned.withLock { $0.contains(id) } }

    /// The library, loaded and started on first use; or why libcamera cameras are not available.
    public static let shared: Result<LibCameraLibrary, DeviceError> = load()

    private init(api: UnsafePointer<clibcamera_api>, manager: OpaquePointer, path: String) {
        self.api = api
        self.manager = manager
        self.path = path
        version = api.pointee.version!().map { String(cString: $0) } ?? "unknown"
    }

    /// Where camd looks for the shim: `CAMD_LIBCAMERA_SHIM`, else beside the executable
    /// (as `swift build` and scripts/build-libcamera-shim leave it), else ../lib/camd/ (as installed).
    static func candidates() -> [String] {
        if let variable = getenv("CAMD_LIBCAMERA_SHIM"), variable.pointee != 0 { return [String(cString: variable)] }
        guard let executable = realpath("/proc/self/exe", nil) else { return [] }
        defer { free(executable) }
        var folder = String(cString: executable)
        folder = String(folder[..<(folder.lastIndex(of: "/") ?? folder.endIndex)])
        return ["\(folder)/\(shimName)", "\(folder)/../lib/camd/\(shimName)"]
    }

    private static func load() -> Result<LibCameraLibrary, DeviceError> {
        let places = candidates()
        guard let path = places.first(where: { access($0, F_OK) == 0 }) else {
            return .failure(DeviceError(.unsupported, path: selectorPrefix,
                                        "libcamera cameras are not available: camd's libcamera shim (\(shimName)) is not in \(places.joined(separator: " or ")). "
                                        + "Install libcamera-dev and run scripts/build-libcamera-shim (or scripts/install), or set CAMD_LIBCAMERA_SHIM"))
        }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown reason"
            return .failure(DeviceError(.unsupported, path: selectorPrefix,
                                        "libcamera cameras are not available: \(path) does not load (\(reason)). "
                                        + "Install the libcamera it was built against (apt-get install libcamera0), or rebuild it here with scripts/build-libcamera-shim"))
        }
        guard let symbol = dlsym(handle, CLIBCAMERA_ENTRY) else {
            return .failure(DeviceError(.unsupported, path: selectorPrefix, "\(path) is not camd's libcamera shim (no \(CLIBCAMERA_ENTRY)); rebuild it with scripts/build-libcamera-shim"))
        }
        let entry = unsafeBitCast(symbol, to: clibcamera_entry.self)
        guard let api = entry(), api.pointee.abi_version == CLIBCAMERA_ABI_VERSION else {
            return .failure(DeviceError(.unsupported, path: selectorPrefix,
                                        "\(path) was built from another camd version (shim ABI \(entry()?.pointee.abi_version ?? 0), camd needs \(CLIBCAMERA_ABI_VERSION)); rebuild it with scripts/build-libcamera-shim"))
        }
        // libcamera logs every INFO line to stderr; camd keeps its warnings unless told otherwise.
        setenv("LIBCAMERA_LOG_LEVELS", "*:WARN", 0)
        var manager: OpaquePointer?
        let status = api.pointee.manager_start!(&manager)
        guard status == 0, let manager else {
            return .failure(DeviceError(.unsupported, path: selectorPrefix,
                                        "libcamera cameras are not available: libcamera's CameraManager did not start (\(describe(status)))"))
        }
        return .success(LibCameraLibrary(api: api, manager: manager, path: path))
    }

    /// The cameras libcamera found, in its order (the index of `libcamera:<index>`).
    public func cameras() -> [LibCameraInfo] {
        var list = [clibcamera_camera_info](repeating: clibcamera_camera_info(), count: 16)
        var count = Int(api.pointee.cameras!(manager, &list, Int32(list.count)))
        if count > list.count {
            list = [clibcamera_camera_info](repeating: clibcamera_camera_info(), count: count)
            count = min(count, Int(api.pointee.cameras!(manager, &list, Int32(list.count))))
        }
        return list.prefix(max(0, count)).enumerated().map { index, info in
            LibCameraInfo(index: index, id: cString(info.id), model: cString(info.model))
        }
    }

    /// The camera a selector names: `libcamera:` followed by an index, a camera id, or
    /// (case-insensitive) a model or part of an id; `libcamera:` alone is the first camera.
    public func resolve(_ selector: String) throws(DeviceError) -> LibCameraInfo {
        let wanted = selector.hasPrefix(Self.selectorPrefix) ? String(selector.dropFirst(Self.selectorPrefix.count)) : selector
        let cameras = cameras()
        let known = cameras.map(\.description).joined(separator: ", ")
        if wanted.isEmpty, let first = cameras.first { return first }
        if let index = Int(wanted) {
            guard index >= 0, index < cameras.count else {
                if let denial = MediaGraphAccess.denial("libcamera found \(cameras.count) camera(s), none numbered \(index)") { throw denial }
                throw DeviceError(.noSuchDevice, path: selector,
                                  "There is no libcamera camera number \(index): libcamera found \(cameras.count) (\(known.isEmpty ? "none" : known)). Run `camctl devices` to list them.")
            }
            return cameras[index]
        }
        let lower = wanted.lowercased()
        if let match = cameras.first(where: { $0.id == wanted })
            ?? cameras.first(where: { $0.model.lowercased() == lower })
            ?? cameras.first(where: { $0.id.lowercased().contains(lower) }) {
            return match
        }
        if let denial = MediaGraphAccess.denial("No libcamera camera matches \"\(wanted)\"") { throw denial }
        throw DeviceError(.noSuchDevice, path: selector,
                          "No libcamera camera matches \"\(wanted)\" by index, id or model. libcamera cameras: \(known.isEmpty ? "none" : known). "
                          + "Is the camera connected and its driver loaded? `cam -l` lists what libcamera sees.")
    }

    /// Whether a selector names a libcamera camera rather than a V4L2 node.
    public static func isSelector(_ selector: String?) -> Bool {
        selector?.hasPrefix(selectorPrefix) == true
    }

    /// An errno the shim returned (negative), in words.
    static func describe(_ status: Int32) -> String {
        String(cString: strerror(-status))
    }
}

/// One camera libcamera found.
public struct LibCameraInfo: Sendable, Hashable, CustomStringConvertible {
    /// Its position in libcamera's list: `libcamera:<index>`.
    public var index: Int
    /// libcamera's id ("platform/vimc.0 Sensor B"): stable across restarts.
    public var id: String
    /// The sensor's model ("Sensor B", "imx708"); empty when libcamera has none.
    public var model: String

    /// The selector that names it.
    public var selector: String { "\(LibCameraLibrary.selectorPrefix)\(index)" }
    public var description: String { "\(selector) (\(model.isEmpty ? id : model))" }
}

/// A fixed-size C character array (imported as a tuple) as a String.
func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
}
