import V4L2
import VideoCore

/// The libcamera cameras as `camctl devices` and `GET /v1/devices` list them, beside the V4L2 nodes.
public enum LibCameraDiscovery {
    /// Every camera libcamera found, with its formats and sizes; and, when libcamera
    /// cameras are not available at all, why (the shim or libcamera is missing).
    public static func all() -> (cameras: [DeviceSummary], unavailable: String?) {
        let library: LibCameraLibrary
        switch LibCameraLibrary.shared {
        case .success(let loaded): library = loaded
        case .failure(let error): return ([], error.message)
        }
        return (library.cameras().map { summary(of: $0, in: library) }, nil)
    }

    static func summary(of info: LibCameraInfo, in library: LibCameraLibrary) -> DeviceSummary {
        var formats: [LibCameraFormat] = []
        var problem: String?
        do { formats = try LibCameraDevice(library: library, info: info).formats() } catch { problem = error.message }
        return DeviceSummary(
            path: info.selector, card: info.model.isEmpty ? info.id : info.model, driver: "libcamera \(library.version)", bus: info.id,
            camera: true, accessible: problem == nil || problem?.contains("in use") == true, problem: problem,
            byID: [], byPath: [], capabilities: ["libcamera"],
            formats: formats.compactMap { format in
                guard let pixelFormat = format.format else { return nil }
                let sizes: [String]
                switch format.sizes {
                case .discrete(let list): sizes = list.map(\.description)
                case .stepwise(let low, let high, _): sizes = ["\(low)-\(high)"]
                }
                return DeviceSummary.Format(fourcc: pixelFormat.description, description: "libcamera \(format.name)",
                                            compressed: pixelFormat.isJPEG, sizes: sizes)
            })
    }
}
