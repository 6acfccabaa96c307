import SystemPackage
import VideoCore
#if canImport(Glibc)
import Glibc
#endif

/// One V4L2 node found on the system, whether or not this user may open it.
public struct DiscoveredDevice: Sendable {
    /// "/dev/video0".
    public var path: String
    /// The N of videoN.
    public var number: Int
    /// The driver's name for the node, from sysfs (readable without opening it).
    public var name: String
    /// From VIDIOC_QUERYCAP, when the node could be opened.
    public var info: DeviceInfo?
    /// Stable names under /dev/v4l/by-id and /dev/v4l/by-path that point here.
    public var byID: [String]
    public var byPath: [String]
    /// Whether it is a camera: from QUERYCAP, or from udev's ID_V4L_CAPABILITIES when it cannot be opened.
    public var isCamera: Bool
    /// The permission check for this user.
    public var access: DeviceAccess.Report?
    /// Formats and sizes, for cameras that could be opened.
    public var formats: [FormatDescription]
    /// Why the node could not be opened, if it could not.
    public var openError: DeviceError?
    /// Why a capture node is not offered as a camera, when it is part of a media pipeline.
    public var notACameraBecause: String?
}

/// Finds V4L2 nodes through sysfs and udev's stable names, and resolves what a
/// user typed (a path, a by-id name, a card name, an index) to one camera.
public enum DeviceDiscovery {
    public static let sysfsRoot = "/sys/class/video4linux"

    /// Every video4linux node, in number order. With `details`, opens cameras to list formats.
    public static func all(details: Bool = true) -> [DiscoveredDevice] {
        let names = directoryEntries(sysfsRoot).filter { $0.hasPrefix("video") }
        let links = stableNames()
        var found: [DiscoveredDevice] = []
        for node in names {
            guard let number = Int(node.dropFirst(5)) else { continue }
            let path = "/dev/\(node)"
            var device = DiscoveredDevice(
                path: path, number: number, name: readFirstLine("\(sysfsRoot)/\(node)/name") ?? node, info: nil,
                byID: links.byID[path] ?? [], byPath: links.byPath[path] ?? [],
                isCamera: udevCapabilities(node).contains(":capture:"),
                access: DeviceAccess.check(path), formats: [], openError: nil)
            do {
                let opened = try VideoDevice(path: path)
                device.info = opened.info
                device.isCamera = true
                if opened.info.capabilities.contains(.mediaControlled) {
                    // Streaming it alone fails with EPIPE until its pipeline is configured: libcamera does that.
                    device.isCamera = false
                    device.notACameraBecause = "part of a media pipeline (\(opened.info.driver)): not a camera on its own; "
                        + "use the libcamera camera that drives it (`camctl devices` lists it as libcamera:N)"
                }
                if details { device.formats = (try? opened.formats()) ?? [] }
            } catch {
                device.openError = error
                if error.kind == .notACamera || error.kind == .unsupported { device.isCamera = false }
            }
            found.append(device)
        }
        return found.sorted { $0.number < $1.number }
    }

    /// The cameras among `all()`.
    public static func cameras(details: Bool = false) -> [DiscoveredDevice] {
        all(details: details).filter(\.isCamera)
    }

    /// Resolves a camera selector to a device path.
    ///
    /// Accepts a path ("/dev/video0", "/dev/v4l/by-id/usb-..."), a node name ("video0"),
    /// a by-id or by-path name, a card name ("vivid", case-insensitive), or an index
    /// into the camera list ("0"); nil means the first camera.
    public static func resolve(_ selector: String?) throws(DeviceError) -> String {
        guard let selector, !selector.isEmpty else {
            guard let first = cameras().first else {
                throw DeviceError(.noSuchDevice, path: "",
                                  "No camera found: \(sysfsRoot) lists no video capture device. Is the camera plugged in and its driver loaded (`lsmod | grep uvcvideo`)?")
            }
            return first.path
        }
        if selector.hasPrefix("/") || selector.hasPrefix(".") { return selector }
        if selector.hasPrefix("video"), Int(selector.dropFirst(5)) != nil { return "/dev/\(selector)" }
        for folder in ["/dev/v4l/by-id", "/dev/v4l/by-path"] where access("\(folder)/\(selector)", F_OK) == 0 {
            return "\(folder)/\(selector)"
        }
        let cameras = cameras()
        if let index = Int(selector) {
            guard index >= 0, index < cameras.count else {
                throw DeviceError(.noSuchDevice, path: selector,
                                  "There is no camera number \(index): \(cameras.count) camera(s) found. Run `camctl devices` to list them.")
            }
            return cameras[index].path
        }
        let wanted = selector.lowercased()
        let byCard = cameras.first { ($0.info?.card ?? $0.name).lowercased() == wanted }
            ?? cameras.first { ($0.info?.card ?? $0.name).lowercased().contains(wanted) }
        if let byCard { return byCard.path }
        let known = cameras.map { "\($0.path) (\($0.info?.card ?? $0.name))" }.joined(separator: ", ")
        throw DeviceError(.noSuchDevice, path: selector,
                          "No camera matches \"\(selector)\" by path, by-id name, card name or index. Cameras: \(known.isEmpty ? "none" : known).")
    }

    /// /dev/v4l/by-id and by-path symlinks, keyed by the node they point to.
    static func stableNames() -> (byID: [String: [String]], byPath: [String: [String]]) {
        func scan(_ folder: String) -> [String: [String]] {
            var map: [String: [String]] = [:]
            for name in directoryEntries(folder) {
                guard let target = resolveLink("\(folder)/\(name)") else { continue }
                map[target, default: []].append("\(folder)/\(name)")
            }
            return map.mapValues { $0.sorted() }
        }
        return (scan("/dev/v4l/by-id"), scan("/dev/v4l/by-path"))
    }

    /// udev's ID_V4L_CAPABILITIES for a node (":capture:" for cameras), read from its database.
    static func udevCapabilities(_ node: String) -> String {
        guard let dev = readFirstLine("\(sysfsRoot)/\(node)/dev"),
              let file = fopen("/run/udev/data/c\(dev)", "r") else { return "" }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if line.hasPrefix("E:ID_V4L_CAPABILITIES=") { return String(line.dropFirst(22)) }
        }
        return ""
    }
}

func directoryEntries(_ path: String) -> [String] {
    guard let dir = opendir(path) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = string(fromCArray: entry.pointee.d_name)
        if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
}

/// The absolute path a symlink resolves to.
func resolveLink(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}
