/// Thumbnails already rendered, in memory, so a thumbnail of one version of a file at one
/// size is rendered once however many clients and visits ask for it.
///
/// In memory rather than on disk beside the photos: camd often writes to an SD card, where
/// a second copy of every thumbnail would wear it and would need its own clean-up on every
/// delete and retention pass; a thumbnail costs milliseconds to render again after a
/// restart (a DCT-scaled decode), and a browser keeps the ones it has for a year anyway
/// (`MediaVersion.immutable`). The cache is bounded by bytes and drops the least recently
/// used; entries are keyed by the file's version, so a file deleted and saved again under
/// its name is never answered from the old entry.
///
/// Two requests for the same thumbnail at the same time share one render.
actor ThumbnailCache {
    /// What the daemon's cache holds at most: about 4,000 thumbnails of 256 pixels.
    static let defaultLimit = 64 << 20

    struct Counters: Sendable, Hashable {
        /// Thumbnails rendered (a miss), answered from the cache (a hit), and dropped for room.
        var renders = 0
        var hits = 0
        var evictions = 0
        /// Bytes and entries held now.
        var bytes = 0
        var entries = 0
    }

    let limit: Int
    private var stored: [String: (jpeg: [UInt8], used: UInt64)] = [:]
    private var rendering: [String: Task<[UInt8], any Error>] = [:]
    private var clock: UInt64 = 0
    private var totals = Counters()

    init(limit: Int = ThumbnailCache.defaultLimit) {
        self.limit = max(limit, 0)
    }

    var counters: Counters {
        var copy = totals
        copy.entries = stored.count
        return copy
    }

    /// The thumbnail under `key`, rendered by `render` only if neither stored nor being rendered.
    func jpeg(_ key: String, render: @escaping @Sendable () async throws -> [UInt8]) async throws -> [UInt8] {
        clock += 1
        if let entry = stored[key] {
            stored[key]?.used = clock
            totals.hits += 1
            return entry.jpeg
        }
        if let running = rendering[key] {
            totals.hits += 1
            return try await running.value
        }
        totals.renders += 1
        let task = Task { try await render() }
        rendering[key] = task
        defer { rendering[key] = nil }
        let jpeg = try await task.value
        store(key, jpeg)
        return jpeg
    }

    private func store(_ key: String, _ jpeg: [UInt8]) {
        guard jpeg.count <= limit / 8 else { return }  // one huge thumbnail would push out hundreds
        stored[key] = (jpeg, clock)
        totals.bytes += jpeg.count
        guard totals.bytes > limit else { return }
        // Over the limit: drop the least recently used down to 7/8 of it, so this sort is rare.
        for (old, entry) in stored.sorted(by: { $0.value.used < $1.value.used }) where totals.bytes > limit - limit / 8 {
            stored[old] = nil
            totals.bytes -= entry.jpeg.count
            totals.evictions += 1
        }
    }
}
