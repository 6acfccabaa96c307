import CaptureSession
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import JPEG
import Video

func addPhotoRoutes(_ v1: RouterGroup<CamdRequestContext>, _ services: APIServices) {
    // Photos only, as before movies: `/v1/media` lists both.
    v1.get("photos") { request, _ in
        let selection = try MediaSelection(request.uri.queryParameters, services)
        return try JSONBody.response(await services.photos.list(camera: selection.camera, since: selection.since,
                                                                until: selection.until, limit: selection.limit, kind: .photo))
    }
    v1.get("photos/contact-sheet") { request, _ in
        try await contactSheet(request, services)
    }
    v1.get("photos/:name") { request, context in
        let name = try photoName(context)
        let (record, path) = try await services.photos.file(named: name)
        try onlyPhoto(record)
        return try await photoResponse(request, record, path, services)
    }
    v1.delete("photos/:name") { request, context in
        let name = try photoName(context)
        try onlyPhoto(try await services.photos.file(named: name).record)
        await audit(request, context, services)
        try await services.photos.delete(named: name)
        return Response(status: .noContent)
    }
}

/// `/v1/photos/{name}` is for photos; a movie is served and deleted under `/v1/media/{name}`.
private func onlyPhoto(_ record: PhotoRecord) throws {
    guard record.kind == .photo else {
        throw APIError(PhotoError.notFound("\(record.name) is a movie, not a photo: use /v1/media/\(record.name)"))
    }
}

/// The `:name` path parameter, percent-decoded once ("my%20photo.jpg" is "my photo.jpg"):
/// the router hands it over as sent. The photo output's name rules then see the decoded
/// name, so "%2F", "%00" and "%2E%2E" are refused just as '/', NUL and ".." are.
func photoName(_ context: CamdRequestContext) throws(APIError) -> String {
    let raw = context.parameters.get("name") ?? ""
    guard let name = raw.removingPercentEncoding else {
        throw APIError(PhotoError.invalidName(
            "\"\(raw)\" is not a photo name: a '%' is not followed by two hex digits, or the bytes are not UTF-8. URL-encode a name from the photo list."))
    }
    return name
}

/// `GET /v1/photos/contact-sheet`: one JPEG, a grid of square thumbnails of the
/// selected photos in time order, each labelled with its time.
func contactSheet(_ request: Request, _ services: APIServices) async throws -> Response {
    let query = request.uri.queryParameters
    let known: Set<String> = ["camera", "since", "until", "cols", "cell", "names"]
    var sheetQuery: [String: String] = [:]
    for (key, value) in query {
        guard known.contains(String(key)) else {
            throw APIError.badRequest("unknown parameter \"\(key)\"; contact-sheet takes \(known.sorted().joined(separator: ", "))",
                                      code: "bad_parameter")
        }
        if key == "cols" || key == "cell" { sheetQuery[String(key)] = String(value) }
    }
    let sheet: ContactSheet
    do { sheet = try ContactSheet.parse(query: sheetQuery) } catch { throw APIError(error) }
    let records: [PhotoRecord]
    if let names = query.get("names") {
        records = try await chosenRecords(names, query, services)
    } else {
        records = await services.photos.list(camera: query.get("camera"), since: try time(query.get("since"), "since"),
                                             until: try time(query.get("until"), "until"), limit: ContactSheet.maximumCells + 1)
    }
    guard !records.isEmpty else { throw APIError(ImageError.noPhotos) }
    guard records.count <= ContactSheet.maximumCells else {
        throw APIError(ImageError.tooManyPhotos(count: records.count, limit: ContactSheet.maximumCells))
    }
    var files: [(path: String, kind: MediaKind, duration: Double)] = []
    for record in records.reversed() {  // oldest first
        let path = (try? await services.photos.file(named: record.name, camera: record.camera).path) ?? ""
        files.append((path, record.kind, record.duration ?? 0))
    }
    // A movie is shown by its poster frame (a second in, or its middle if shorter), marked as a video.
    let labels = records.reversed().map { ($0.kind == .video ? "VIDEO " : "") + contactSheetLabel(for: $0.captureTime) }
    let chosen = files
    let jpeg: [UInt8]
    do {
        jpeg = try await RenderPool.shared.run { (pipeline) throws(ImageError) -> [UInt8] in
            try sheet.jpeg(count: chosen.count, with: pipeline, quality: 85, label: { labels[$0] }, jpeg: { index in
                let file = chosen[index]
                guard file.kind == .video else { return FileManager.default.contents(atPath: file.path).map { [UInt8]($0) } }
                return try? VideoThumbnail.jpeg(path: file.path, at: min(1, file.duration / 2),
                                                geometry: Geometry(longestSide: 2 * sheet.cell), quality: 90, pipeline: pipeline)
            })
        }
    } catch {
        throw APIError(error)
    }
    return Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"],
                    body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
}

/// The files a contact sheet's `names` picks (comma-separated, each once), newest first as
/// the list gives them; a name no file has is a 404 naming it.
private func chosenRecords(_ names: String, _ query: FlatDictionary<Substring, Substring>,
                           _ services: APIServices) async throws -> [PhotoRecord] {
    if let other = ["camera", "since", "until"].first(where: { query.get($0) != nil }) {
        throw APIError.badRequest("names picks the files itself; leave out \(other), or leave out names", code: "bad_parameter")
    }
    var seen = Set<String>()
    let unique = names.split(separator: ",", omittingEmptySubsequences: true).map(String.init).filter { seen.insert($0).inserted }
    guard !unique.isEmpty else {
        throw APIError.badRequest("names must list file names from the media list, separated by commas", code: "bad_parameter")
    }
    guard unique.count <= ContactSheet.maximumCells else {
        throw APIError(ImageError.tooManyPhotos(count: unique.count, limit: ContactSheet.maximumCells))
    }
    var records: [PhotoRecord] = []
    for name in unique {
        records.append(try await services.photos.file(named: name).record)
    }
    return records.sorted { a, b in a.captureTime != b.captureTime ? a.captureTime > b.captureTime : a.name > b.name }
}

/// "06:04:45" for today, "11-21 06:04" otherwise (local time): fits under a thumbnail.
func contactSheetLabel(for time: Double, now: Double = Date().timeIntervalSince1970) -> String {
    var seconds = time_t(time), now = time_t(now)
    var at = tm(), today = tm()
    localtime_r(&seconds, &at)
    localtime_r(&now, &today)
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    if at.tm_year == today.tm_year && at.tm_yday == today.tm_yday {
        return "\(two(at.tm_hour)):\(two(at.tm_min)):\(two(at.tm_sec))"
    }
    return "\(two(at.tm_mon + 1))-\(two(at.tm_mday)) \(two(at.tm_hour)):\(two(at.tm_min))"
}

/// A time given as seconds since 1970 or as ISO 8601 ("2026-11-22T06:00:00Z").
func time(_ text: String?, _ name: String) throws -> Double? {
    guard let text else { return nil }
    if let seconds = Double(text), seconds.isFinite { return seconds }
    // With fractional seconds (".5Z", as JavaScript's toISOString() writes) or without.
    for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds]] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = options
        if let date = formatter.date(from: text) { return date.timeIntervalSince1970 }
    }
    throw APIError.badRequest("\(name) must be seconds since 1970 or an ISO 8601 time such as 2026-11-22T06:00:00Z; got \"\(text)\"",
                              code: "bad_parameter")
}
