import CaptureSession
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import JPEG
import Video

/// The media library: photos, recordings and timelapse movies together. `/v1/photos`
/// stays as it was (photos only) for the clients written before movies.
func addMediaRoutes(_ v1: RouterGroup<CamdRequestContext>, _ services: APIServices) {
    v1.get("media") { request, _ in
        let query = request.uri.queryParameters
        let kind = try query.get("kind").map { text -> MediaKind in
            guard let kind = MediaKind(rawValue: text) else {
                throw APIError.badRequest("kind must be photo or video; got \"\(text)\"", code: "bad_parameter")
            }
            return kind
        }
        let selection = try MediaSelection(query, services)
        let after = try query.get("after").map(listPosition)
        // One more than asked for tells whether another page follows.
        var records = await services.photos.list(camera: selection.camera, since: selection.since, until: selection.until,
                                                 limit: selection.limit.map { $0 + 1 }, kind: kind, after: after)
        var next: PhotoRecord?
        if let limit = selection.limit, records.count > limit {
            records.removeLast()
            next = records.last
        }
        var response = try JSONBody.response(records.map(MediaItem.init))
        if let next {
            response.headers[HTTPField.Name("Link")!] = "<\(nextPage(request, after: next))>; rel=\"next\""
        }
        return response
    }
    v1.get("media/contact-sheet") { request, _ in
        try await contactSheet(request, services)
    }
    v1.get("media/:name") { request, context in
        let name = try photoName(context)
        let (record, path) = try await services.photos.file(named: name)
        guard record.kind == .video else { return try await photoResponse(request, record, path, services) }
        _ = try RenderRequest(request, allowing: ["v"])  // a movie takes no image options; unknown parameters are refused alike
        return try await movieResponse(request, context, record, path)
    }
    v1.delete("media/:name") { request, context in
        let name = try photoName(context)
        await audit(request, context, services)
        try await services.photos.delete(named: name)
        return Response(status: .noContent)
    }
    v1.get("media/:name/thumbnail") { request, context in
        let name = try photoName(context)
        let (record, path) = try await services.photos.file(named: name)
        var render = try RenderRequest(request, allowing: ["at", "v"])
        // A thumbnail fits the box the request gives, or 320 pixels when it gives none.
        if render.image.geometry.width == nil && render.image.geometry.height == nil && render.image.geometry.longestSide == nil {
            render.image.geometry.longestSide = 320
        }
        let quality = await services.cameras[record.camera]?.settings.quality ?? 85
        var at = 0.0
        switch record.kind {
        case .photo:
            if request.uri.queryParameters.get("at") != nil {
                throw APIError.badRequest("at is for movies; \(name) is a photo", code: "bad_parameter")
            }
        case .video:
            at = try seconds(request.uri.queryParameters.get("at"), "at") ?? 0
        }
        // The same version, options and quality make the same JPEG: one render serves them all.
        let options = request.uri.queryParameters.filter { $0.key != "v" }.map { "\($0.key)=\($0.value)" }.sorted()
        let variant = (options + ["quality=\(quality)"]).joined(separator: "&")
        let version = MediaVersion(record)
        var headers = version.headers(for: request, variant: variant)
        headers[HTTPField.Name("X-Capture-Time")!] = String(format: "%.6f", record.captureTime)
        if let unchanged = MediaVersion.notModified(request, headers) { return unchanged }
        let (geometry, renderer, still) = (render.geometry, render, at)
        let jpeg = try await services.thumbnails.jpeg(version.text + "/" + variant) {
            switch record.kind {
            case .photo:
                let bytes = try await BlockingIO.run { try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) }
                return try await renderer.apply(to: bytes, captureTime: record.captureTime, camera: record.camera, card: nil,
                                              sequence: UInt64(record.sequence ?? 0), quality: quality)
            case .video:
                return try await videoStill(path, at: still, name: name, geometry: geometry, quality: quality)
            }
        }
        headers[.contentType] = "image/jpeg"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
    }
}

/// One entry of the media list: the file's record and where its poster is (a photo's
/// thumbnail, or a movie's first frame, upright), for a page to show it without knowing the routes.
struct MediaItem: Encodable {
    var record: PhotoRecord

    private enum Keys: String, CodingKey { case poster, version }

    func encode(to encoder: any Encoder) throws {
        try record.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        let name = record.name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? record.name
        try container.encode("/v1/media/\(name)/thumbnail", forKey: .poster)
        // `v=` this on the file's or thumbnail's URL, and the browser keeps the answer for a year.
        try container.encode(MediaVersion(record).text, forKey: .version)
    }
}

/// A place in the media list, as `after` gives it: `TIME/CAMERA/NAME` of the entry the
/// page starts after (camera ids and names cannot hold '/'; the time as the list wrote it).
func listPosition(_ text: String) throws -> PhotoRecord {
    // Split on the byte '/', not on Characters: a combining mark after a '/' (a name starting
    // with an emoji modifier) makes one Character of both, and the '/' would go unseen.
    let parts = text.utf8.split(separator: UInt8(ascii: "/"), maxSplits: 2, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    guard parts.count == 3, let time = Double(parts[0]), time.isFinite, CameraSettings.isValidID(parts[1]), !parts[2].isEmpty else {
        throw APIError.badRequest("after must be TIME/CAMERA/NAME of a list entry, as the Link header of the previous page gives it; got \"\(text)\"",
                                  code: "bad_parameter")
    }
    return PhotoRecord(name: parts[2], camera: parts[1], bytes: 0, captureTime: time,
                       width: nil, height: nil, sequence: nil)
}

/// The URL of the page after `last`: the same query with `after` moved on.
func nextPage(_ request: Request, after last: PhotoRecord) -> String {
    let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~/:"))
    func encoded(_ text: some StringProtocol) -> String { String(text).addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
    var pairs = request.uri.queryParameters.filter { $0.key != "after" }.map { "\(encoded($0.key))=\(encoded($0.value))" }
    pairs.append("after=" + encoded("\(last.captureTime)/\(last.camera)/\(last.name)"))
    return request.uri.path + "?" + pairs.joined(separator: "&")
}

/// The camera, time range and page size of a media or photo list.
struct MediaSelection {
    var camera: String?
    var since: Double?
    var until: Double?
    var limit: Int?

    init(_ query: FlatDictionary<Substring, Substring>, _ services: APIServices) throws {
        camera = query.get("camera")
        if let camera, services.cameras[camera] == nil, !CameraSettings.isValidID(camera) {
            throw APIError.badRequest("camera must be a camera id; got \"\(camera)\"", code: "bad_parameter")
        }
        since = try time(query.get("since"), "since")
        until = try time(query.get("until"), "until")
        limit = try query.get("limit").map { text -> Int in
            guard let value = Int(text), value >= 1, value <= 100_000 else {
                throw APIError.badRequest("limit must be a whole number from 1 to 100000; got \"\(text)\"", code: "bad_parameter")
            }
            return value
        }
    }
}

/// A still of a movie at `at` seconds, rendered on the render pool (decoding is blocking work).
func videoStill(_ path: String, at: Double, name: String, geometry: Geometry, quality: Int) async throws -> [UInt8] {
    let outcome: Result<[UInt8], VideoError>
    do {
        outcome = try await RenderPool.shared.run { pipeline in
            Result { () throws(VideoError) -> [UInt8] in
                try VideoThumbnail.jpeg(path: path, at: at, geometry: geometry, quality: quality, pipeline: pipeline)
            }
        }
    } catch {
        throw APIError(error)
    }
    switch outcome {
    case .success(let jpeg): return jpeg
    case .failure(let error) where error.kind == .outOfRange:
        throw APIError.badRequest("\(error.description) (\(name))", code: "bad_parameter")
    case .failure(let error):
        throw APIError(.internalServerError, "video_failed", "\(name): \(error.description)")
    }
}

/// A movie file, whole or the byte range asked for (players seek with `Range`), read from
/// disk in chunks as the client takes them.
func movieResponse(_ request: Request, _ context: CamdRequestContext, _ record: PhotoRecord, _ path: String) async throws -> Response {
    let size = record.bytes
    var headers = MediaVersion(record).headers(for: request)
    headers[HTTPField.Name("X-Capture-Time")!] = String(format: "%.6f", record.captureTime)
    if let unchanged = MediaVersion.notModified(request, headers) { return unchanged }
    headers[.contentType] = "video/mp4"
    headers[.acceptRanges] = "bytes"
    let fileIO = FileIO()
    guard let rangeHeader = request.headers[.range] else {
        headers[.contentLength] = String(size)
        return Response(status: .ok, headers: headers, body: try await fileIO.loadFile(path: path, context: context))
    }
    guard let range = byteRange(rangeHeader, size: size) else {
        headers[.contentRange] = "bytes */\(size)"
        throw APIError(.rangeNotSatisfiable, "bad_range",
                       "Range \(rangeHeader) does not fit the \(size) bytes of \(record.name); ask for bytes=START-END within them",
                       headers: [.contentRange: "bytes */\(size)"])
    }
    headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
    headers[.contentLength] = String(range.count)
    return Response(status: .partialContent, headers: headers,
                    body: try await fileIO.loadFile(path: path, range: range, context: context))
}

/// One range of `bytes=START-END`, `bytes=START-` or `bytes=-LAST`, clamped to the file;
/// nil when it is malformed, lists several ranges, or starts past the end.
func byteRange(_ header: String, size: Int) -> ClosedRange<Int>? {
    guard header.hasPrefix("bytes="), size > 0 else { return nil }
    let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
    let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2, !spec.contains(",") else { return nil }
    if parts[0].isEmpty {
        guard let last = Int(parts[1]), last > 0 else { return nil }
        return max(0, size - last)...(size - 1)
    }
    guard let start = Int(parts[0]), start >= 0, start < size else { return nil }
    if parts[1].isEmpty { return start...(size - 1) }
    guard let end = Int(parts[1]), end >= start else { return nil }
    return start...min(end, size - 1)
}

/// A photo as `GET /v1/photos/{name}` serves it: as saved, or rendered by the image options.
func photoResponse(_ request: Request, _ record: PhotoRecord, _ path: String, _ services: APIServices) async throws -> Response {
    let render = try RenderRequest(request, allowing: ["v"])
    if render.isIdentity {
        // As saved: the file's version is the answer's.
        var headers = MediaVersion(record).headers(for: request)
        headers[HTTPField.Name("X-Capture-Time")!] = String(format: "%.6f", record.captureTime)
        if let unchanged = MediaVersion.notModified(request, headers) { return unchanged }
        headers[.contentType] = "image/jpeg"
        let bytes = try await BlockingIO.run { try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
    // The re-encoded copy keeps what the saved photo's EXIF said: its camera and where it stands.
    let saved = try await BlockingIO.run { try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) }
    let session = services.cameras[record.camera]
    let settings = await session?.settings
    let bytes = try await render.apply(to: saved, captureTime: record.captureTime, camera: record.camera,
                                       card: await session?.card, sequence: UInt64(record.sequence ?? 0),
                                       quality: settings?.quality ?? 85, location: settings?.location)
    return Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "max-age=3600",
                                           HTTPField.Name("X-Capture-Time")!: String(format: "%.6f", record.captureTime)],
                    body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
}

/// A number of seconds (0 or more) from a query parameter, or a 400 naming it.
func seconds(_ text: String?, _ name: String) throws -> Double? {
    guard let text else { return nil }
    guard let value = ValueSpelling.seconds(parsing: text), value.isFinite, value >= 0 else {
        throw APIError.badRequest("\(name) must be a number of seconds from 0, such as 2.5; got \"\(text)\"", code: "bad_parameter")
    }
    return value
}
