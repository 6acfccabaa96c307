import HTTPTypes
import Hummingbird

/// A camera's live view as a web page (`GET /cameras/{id}/live`): the H.264 through the
/// browser's Media Source, or MJPEG where that cannot play (`?mode=mjpeg` asks for it).
/// The page and its script come from camd itself; nothing is fetched from elsewhere.
enum LivePage {
    static let scriptPath = "/assets/camd-live.js"
    static let iconPath = "/assets/camd-icon.svg"

    static func html(camera: String, mjpegOnly: Bool) -> String {
        let id = escape(camera)
        return """
        <!doctype html>
        <html lang="en">
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(id) · camd</title>
        <link rel="icon" href="\(iconPath)" type="image/svg+xml">
        <style>
          body { margin: 0; background: #111; color: #eee; font: 15px system-ui, sans-serif; }
          h1 { font-size: 1rem; font-weight: 600; margin: 0; padding: .5rem .75rem; }
          [hidden] { display: none !important; }
          .camd-live { position: relative; }
          .camd-live video, .camd-live img { display: block; width: 100%; max-height: calc(100vh - 2.5rem); object-fit: contain; background: #000; }
          .camd-live .status { position: absolute; left: .75rem; bottom: .75rem; margin: 0; padding: .25rem .5rem; background: rgb(0 0 0 / .6); border-radius: .25rem; }
          .camd-live .status:empty { display: none; }
        </style>
        <h1>\(id)</h1>
        <div class="camd-live" data-camera="\(id)"\(mjpegOnly ? " data-mode=\"mjpeg\"" : "")>
          <video muted autoplay playsinline aria-label="Live video of camera \(id)"></video>
          <img hidden alt="Live video of camera \(id)">
          <p class="status" role="status" aria-live="polite"></p>
        </div>
        <script src="\(scriptPath)"></script>
        </html>

        """
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}

/// The live view page and its script.
func addLivePageRoutes(_ router: Router<CamdRequestContext>, _ services: APIServices) {
    router.get("cameras/:id/live") { request, context in
        let session = try camera(context, services)
        let mode = request.uri.queryParameters.get("mode")
        guard mode == nil || mode == "mjpeg" || mode == "auto" else {
            throw APIError.badRequest("mode must be auto or mjpeg; got \"\(mode ?? "")\"", code: "bad_parameter")
        }
        var headers = WebAssets.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers,
                        body: .init(byteBuffer: ByteBuffer(string: LivePage.html(camera: session.id, mjpegOnly: mode == "mjpeg"))))
    }
}
