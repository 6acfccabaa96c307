/// A discovered device as `camctl devices --json` and `GET /v1/devices` show it.
public struct DeviceSummary: Codable, Sendable, Hashable {
    public var path: String
    public var card: String
    public var driver: String?
    public var bus: String?
    public var camera: Bool
    /// Whether this process may open it.
    public var accessible: Bool
    /// Why not, and how to fix it.
    public var problem: String?
    public var byID: [String]
    public var byPath: [String]
    public var capabilities: [String]
    public var formats: [Format]

    public struct Format: Codable, Sendable, Hashable {
        public var fourcc: String
        public var description: String
        public var compressed: Bool
        /// Discrete sizes ("640x480"), or one "MINxMIN-MAXxMAX" range.
        public var sizes: [String]

        public init(fourcc: String, description: String, compressed: Bool, sizes: [String]) {
            self.fourcc = fourcc
            self.description = description
            self.compressed = compressed
            self.sizes = sizes
        }
    }

    public init(path: String, card: String, driver: String?, bus: String?, camera: Bool, accessible: Bool, problem: String?,
                byID: [String], byPath: [String], capabilities: [String], formats: [Format]) {
        self.path = path
        self.card = card
        self.driver = driver
        self.bus = bus
        self.camera = camera
        self.accessible = accessible
        self.problem = problem
        self.byID = byID
        self.byPath = byPath
        self.capabilities = capabilities
        self.formats = formats
    }
}

extension DiscoveredDevice {
    public var summary: DeviceSummary {
        DeviceSummary(
            path: path, card: info?.card ?? name, driver: info?.driver, bus: info?.busInfo, camera: isCamera,
            accessible: access?.allowed ?? false,
            problem: access?.problem ?? (isCamera ? openError?.message : nil),
            byID: byID, byPath: byPath, capabilities: info?.capabilities.names ?? [],
            formats: formats.map { format in
                let sizes: [String]
                switch format.sizes {
                case .discrete(let list): sizes = list.map(\.description)
                case .stepwise(let low, let high, _): sizes = ["\(low)-\(high)"]
                }
                return DeviceSummary.Format(fourcc: format.format.description, description: format.description,
                                            compressed: format.isCompressed, sizes: sizes)
            })
    }
}
