import CaptureSession
import HTTPTypes
import Hummingbird

/// Which version of a saved file a request means, and the cache headers that follow.
///
/// A saved file is never written over: a save picks a name no file has, into a new file
/// (`PhotoOutput.freeName`, `AtomicFile`). But after a delete the same name can come back
/// with other bytes (a pattern without `{ms}`, or a timelapse of the same range rendered
/// again), so the name alone does not pin the content. The version adds what a new file
/// under an old name changes: its camera, size and capture time (to the millisecond,
/// which survives the round trip through the file's modification time across a restart).
///
/// The media list gives each entry's `version`; a URL that carries it as `v=` names one
/// content for good and is cached for a year (`immutable`). Without `v`, or with another
/// version, the answer is revalidated each time (`no-cache`) against the same `ETag`.
struct MediaVersion: Sendable, Hashable {
    let text: String

    init(_ record: PhotoRecord) {
        var hash = Fingerprint()
        hash.add(record.camera)
        hash.add(record.name)
        hash.add(String(record.bytes))
        hash.add(String(Int64((record.captureTime * 1000).rounded())))
        text = hash.text
    }

    /// A year: what browsers treat as "for good".
    /// `private`: the browser keeps it, a shared cache (a proxy) does not, since over TCP the
    /// request carried a token or a session cookie.
    static let immutable = "private, max-age=31536000, immutable"

    /// The `ETag` and `Cache-Control` of an answer about this version; `variant` tells apart
    /// answers rendered from it (a thumbnail's size), nil for the file as saved.
    func headers(for request: Request, variant: String? = nil) -> HTTPFields {
        var tag = text
        if let variant {
            var hash = Fingerprint()
            hash.add(variant)
            tag += "-" + hash.text
        }
        let pinned = request.uri.queryParameters.get("v") == text
        return [.eTag: "\"\(tag)\"", .cacheControl: pinned ? Self.immutable : "no-cache"]
    }

    /// A 304 with `headers` when the request's `If-None-Match` lists their ETag (or `*`).
    static func notModified(_ request: Request, _ headers: HTTPFields) -> Response? {
        guard let etag = headers[.eTag], let asked = request.headers[.ifNoneMatch] else { return nil }
        let listed = asked.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard listed.contains(etag) || listed.contains("*") || listed.contains("W/" + etag) else { return nil }
        return Response(status: .notModified, headers: headers)
    }
}

/// FNV-1a over text, fields kept apart by a 0 byte: a content label, not a defence.
struct Fingerprint {
    private var hash: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ text: String) {
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash = (hash ^ 0) &* 0x100_0000_01b3
    }

    var text: String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
