import HTTPTypes
import Hummingbird

/// The body of a 401 to a browser's navigation: a page that asks for the token and signs in
/// with it (`POST /v1/session`), for those who dismissed the browser's own password prompt.
/// Its files (`Web/www/signin.html`, `camd-signin.js`) are served without credentials.
enum SignInPage {
    /// The files under `/assets/` the page uses: open to anyone, since the page must load
    /// before its reader has signed in.
    static let files: Set<String> = ["signin.html", "camd-signin.js", "camd-icon.svg"]

    /// Whether a request is a browser opening a page (rather than a script or a player
    /// fetching data, which keep the JSON error).
    static func isNavigation(_ headers: HTTPFields) -> Bool {
        if headers[HTTPField.Name("Sec-Fetch-Mode")!]?.lowercased() == "navigate" { return true }
        return headers[values: .accept].contains { $0.lowercased().contains("text/html") }
    }

    /// Whether a request comes from a page's script (`fetch`, `EventSource`: `Sec-Fetch-Mode`
    /// cors or same-origin) rather than from a navigation, an `<img>` or a program.
    static func isFromScript(_ headers: HTTPFields) -> Bool {
        let mode = headers[HTTPField.Name("Sec-Fetch-Mode")!]?.lowercased()
        return mode == "cors" || mode == "same-origin"
    }

    /// The challenge of a 401: Basic, so a browser or a player asks for the token, except to a
    /// page's script. Its browser would open the password prompt over the page for every
    /// refused poll (headless Chromium leaves the request pending for good); camd's pages
    /// instead reload on a 401 when their session is gone, which shows this sign-in page.
    static func challenge(for headers: HTTPFields) -> String {
        isFromScript(headers) ? SessionRoutes.signInChallenge : AccessPolicy.challenge
    }

    /// The page, as a 401 with the Basic challenge: the browser asks first and shows the page
    /// when its prompt is dismissed.
    static func response() -> Response {
        var headers = WebAssets.securityHeaders
        headers[.wwwAuthenticate] = AccessPolicy.challenge
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        let bytes = WebAssets.byName["signin.html"]?.bytes ?? Array("sign in: POST /v1/session".utf8)
        return Response(status: .unauthorized, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
