import HTTPTypes
import Hummingbird

/// The web pages' own files, from `Web/www` and built into camd (SwiftPM's `embedInCode`):
/// plain HTML, CSS, JavaScript and SVG with no build step, no CDN and nothing installed
/// beside the binary, so the pages work offline and cannot drift from the daemon serving them.
enum WebAssets {
    struct Asset: Sendable {
        let bytes: [UInt8]
        let contentType: String
        /// A strong validator from the content: a browser revalidates (`no-cache`) and gets
        /// 304 until camd is upgraded with a different file.
        let etag: String

        init(_ bytes: [UInt8], _ contentType: String) {
            self.bytes = bytes
            self.contentType = contentType
            // FNV-1a: a content fingerprint, not a defence; the files are public.
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            etag = "\"" + String(hash, radix: 16) + "\""
        }
    }

    /// Served at `/assets/<name>`. SwiftPM names each embedded file by a property, so a new
    /// file is added here by hand.
    static let byName: [String: Asset] = [
        "camd-live.js": Asset(PackageResources.camd_live_js, "text/javascript; charset=utf-8"),
        "camd-icon.svg": Asset(PackageResources.camd_icon_svg, "image/svg+xml"),
        "index.html": Asset(PackageResources.index_html, "text/html; charset=utf-8"),
        "signin.html": Asset(PackageResources.signin_html, "text/html; charset=utf-8"),
        "camd-signin.js": Asset(PackageResources.camd_signin_js, "text/javascript; charset=utf-8"),
        "camd.css": Asset(PackageResources.camd_css, "text/css; charset=utf-8"),
        "camd.js": Asset(PackageResources.camd_js, "text/javascript; charset=utf-8"),
        "media.html": Asset(PackageResources.media_html, "text/html; charset=utf-8"),
        "camd-media.css": Asset(PackageResources.camd_media_css, "text/css; charset=utf-8"),
        "camd-media.js": Asset(PackageResources.camd_media_js, "text/javascript; charset=utf-8"),
    ]

    /// Only camd's own scripts, media and fetches: a page that could be made to show someone
    /// else's markup still runs nothing else.
    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!: "default-src 'none'; script-src 'self'; connect-src 'self'; "
            + "media-src 'self' blob:; img-src 'self' blob:; style-src 'self' 'unsafe-inline'; base-uri 'none'; form-action 'self'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
    ]

    /// The asset with its validator; 304 when the browser already has this version.
    static func response(_ name: String, for request: Request) throws -> Response {
        guard let asset = byName[name] else {
            throw APIError(.notFound, "not_found", "camd has no web file \"\(name)\"")
        }
        var headers = securityHeaders
        headers[.eTag] = asset.etag
        headers[.cacheControl] = "no-cache"
        if request.headers[.ifNoneMatch]?.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == asset.etag }) == true {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = asset.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }
}

/// The pages for people: `/` (every camera) and the files under `/assets/`.
func addWebRoutes(_ router: Router<CamdRequestContext>, _ services: APIServices) {
    router.get("/") { request, _ in try WebAssets.response("index.html", for: request) }
    router.get("media") { request, _ in try WebAssets.response("media.html", for: request) }
    router.get("assets/:name") { request, context in
        try WebAssets.response(context.parameters.get("name") ?? "", for: request)
    }
}
