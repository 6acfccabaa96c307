import APIModel
import CaptureSession
@testable import ControlAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import Testing
import VideoCore

/// Signing in over TCP, on a real TCP listener: the token as Bearer or as Basic's password,
/// the session cookie, the viewer token, and the sign-in page a browser is shown.
@Suite struct SignInTests {
    static let token = "s3cret-token"
    static let viewToken = "v1ew-token"

    /// A live TCP server with both tokens and one synthetic camera, idle unless `running`.
    func withServer(running: Bool = false, sessions: SessionStore = SessionStore(),
                    access: AccessPolicy = AccessPolicy(tcpToken: token, tcpViewToken: viewToken),
                    _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let settings = CameraSettings(id: "synth", device: FrameSources.syntheticName, size: FrameSize(width: 160, height: 120), fps: 10)
        let cameras = Cameras([CaptureSession(settings: settings)])
        if running { await cameras.sessions[0].start() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camd-signin-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let services = APIServices(cameras: cameras, photos: PhotoOutput(root: root), daemon: DaemonInfo(version: "test"),
                                   access: access, sessions: sessions)
        let app = Application(router: buildRouter(services), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live, body)
        await cameras.sessions[0].stop()
    }

    static func basic(_ userAndPassword: String) -> String {
        "Basic " + Data(userAndPassword.utf8).base64EncodedString()
    }

    static func errorCode(_ response: TestResponse) -> String? {
        try? APIJSON.decoder().decode(ErrorBody.self, from: Data(response.body.readableBytesView)).error.code
    }

    /// The `camd_session=...` part of a `Set-Cookie`, as a browser sends it back.
    static func cookie(_ response: TestResponse) throws -> String {
        let setCookie = try #require(response.headers[.setCookie], "no Set-Cookie")
        return String(try #require(setCookie.split(separator: ";").first))
    }

    /// Also on bodiless POSTs and PUTs: the live test client sends them chunked (NIO adds
    /// `Transfer-Encoding` without a `Content-Length`), and the TCP listener takes bodies as JSON only.
    static let json: HTTPFields = [.contentType: "application/json"]

    static func signIn(_ client: any TestClientProtocol, token: String) async throws -> TestResponse {
        try await client.execute(uri: "/v1/session", method: .post, headers: json,
                                 body: ByteBuffer(string: #"{"token": "\#(token)"}"#))
    }

    @Test func basicWithTheTokenAsPasswordIsAllowedWithAnyUserName() async throws {
        try await withServer { client in
            for user in ["camd", "", "octoprint", "Home Assistant"] {
                let response = try await client.execute(uri: "/v1/status", method: .get, headers: [.authorization: Self.basic("\(user):\(Self.token)")])
                #expect(response.status == .ok, "user \"\(user)\"")
            }
            let lowercase = try await client.execute(uri: "/v1/status", method: .get,
                                                     headers: [.authorization: "basic " + Data("u:\(Self.token)".utf8).base64EncodedString()])
            #expect(lowercase.status == .ok, "the scheme's name is case-insensitive")
            for wrong in [Self.basic("camd:wrong"), Self.basic(Self.token), Self.basic("\(Self.token):x"), "Basic not-base64!"] {
                let response = try await client.execute(uri: "/v1/status", method: .get, headers: [.authorization: wrong])
                #expect(response.status == .unauthorized, "\(wrong)")
                #expect(response.headers[.wwwAuthenticate] == #"Basic realm="camd""#)
                #expect(response.headers[.contentType] == "application/json")
                #expect(Self.errorCode(response) == "unauthorized")
            }
            let none = try await client.execute(uri: "/v1/status", method: .get)
            #expect(none.status == .unauthorized)
            #expect(none.headers[.wwwAuthenticate] == #"Basic realm="camd""#)
        }
    }

    @Test func bearerStillWorks() async throws {
        try await withServer { client in
            let response = try await client.execute(uri: "/v1/status", method: .get, headers: [.authorization: "Bearer \(Self.token)"])
            #expect(response.status == .ok)
            let stop = try await client.execute(uri: "/v1/cameras/synth/stop", method: .post, headers: [.authorization: "Bearer \(Self.token)", .contentType: "application/json"])
            #expect(stop.status == .ok)
            let wrong = try await client.execute(uri: "/v1/status", method: .get, headers: [.authorization: "Bearer \(Self.viewToken)x"])
            #expect(wrong.status == .unauthorized)
        }
    }

    @Test func aSessionCookieAuthorisesUntilSignedOut() async throws {
        try await withServer { client in
            let signIn = try await Self.signIn(client, token: Self.token)
            #expect(signIn.status == .noContent)
            let setCookie = try #require(signIn.headers[.setCookie])
            let attributes = setCookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(attributes.contains("HttpOnly"), "\(setCookie)")
            #expect(attributes.contains("SameSite=Strict"), "\(setCookie)")
            #expect(attributes.contains("Path=/"), "\(setCookie)")
            #expect(attributes.contains { $0.hasPrefix("Max-Age=") && Int($0.dropFirst(8)).map { $0 > 0 } == true }, "\(setCookie)")
            let cookie = try Self.cookie(signIn)
            let name = cookie.dropFirst("camd_session=".count)
            #expect(cookie.hasPrefix("camd_session="))
            // 32 random bytes in base64url without padding.
            #expect(name.count == 43 && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }, "\(name)")

            let status = try await client.execute(uri: "/v1/status", method: .get, headers: [.cookie: cookie])
            #expect(status.status == .ok)
            let stop = try await client.execute(uri: "/v1/cameras/synth/stop", method: .post, headers: [.cookie: "other=1; \(cookie)", .contentType: "application/json"])
            #expect(stop.status == .ok, "a POST with the cookie among others")
            let session = try await client.execute(uri: "/v1/session", method: .get, headers: [.cookie: cookie])
            #expect(try APIJSON.decoder().decode(SessionInfo.self, from: Data(session.body.readableBytesView)).access == .full)

            let signOut = try await client.execute(uri: "/v1/session", method: .delete, headers: [.cookie: cookie])
            #expect(signOut.status == .noContent)
            let expired = try #require(signOut.headers[.setCookie])
            #expect(expired.hasPrefix("camd_session=;") && expired.contains("Max-Age=0"), "\(expired)")
            let after = try await client.execute(uri: "/v1/status", method: .get, headers: [.cookie: cookie])
            #expect(after.status == .unauthorized)
            #expect(after.headers[.wwwAuthenticate] == #"Basic realm="camd""#)
            let afterPost = try await client.execute(uri: "/v1/cameras/synth/stop", method: .post, headers: [.cookie: cookie, .contentType: "application/json"])
            #expect(afterPost.status == .unauthorized)
        }
    }

    @Test func aPageScriptIsRefusedWithoutAskingForBasic() async throws {
        try await withServer { client in
            // A page's fetch or EventSource whose session is gone: JSON, and no Basic challenge,
            // which would open the browser's password prompt over the page (the page reloads instead).
            for mode in ["cors", "same-origin"] {
                let response = try await client.execute(uri: "/v1/cameras", method: .get, headers: [HTTPField.Name("Sec-Fetch-Mode")!: mode])
                #expect(response.status == .unauthorized, "\(mode)")
                #expect(response.headers[.wwwAuthenticate] == #"Bearer realm="camd""#, "\(mode)")
                #expect(Self.errorCode(response) == "unauthorized", "\(mode)")
            }
            // An <img> or <video>, and programs: still asked for Basic.
            for headers: HTTPFields in [[HTTPField.Name("Sec-Fetch-Mode")!: "no-cors"], [:]] {
                let response = try await client.execute(uri: "/v1/cameras/synth/stream", method: .get, headers: headers)
                #expect(response.status == .unauthorized)
                #expect(response.headers[.wwwAuthenticate] == #"Basic realm="camd""#, "\(headers)")
            }
        }
    }

    @Test func aWrongTokenDoesNotSignIn() async throws {
        try await withServer { client in
            let response = try await Self.signIn(client, token: "guess")
            #expect(response.status == .unauthorized)
            #expect(response.headers[.setCookie] == nil)
            #expect(Self.errorCode(response) == "unauthorized")
            // Not Basic: the browser would open its own password dialog over the sign-in page.
            #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Basic") == false)
            let misspelt = try await client.execute(uri: "/v1/session", method: .post, headers: Self.json,
                                                    body: ByteBuffer(string: #"{"tokn": "\#(Self.token)"}"#))
            #expect(misspelt.status == .badRequest)
            let noSession = try await client.execute(uri: "/v1/session", method: .get)
            #expect(noSession.status == .unauthorized, "GET /v1/session needs credentials")
        }
    }

    @Test func theViewerTokenMayOnlyRead() async throws {
        try await withServer { client in
            let viewer: HTTPFields = [.authorization: "Bearer \(Self.viewToken)", .contentType: "application/json"]
            #expect(try await client.execute(uri: "/v1/status", method: .get, headers: viewer).status == .ok)
            #expect(try await client.execute(uri: "/v1/cameras/synth", method: .head, headers: viewer).status == .ok)
            for (method, uri) in [(HTTPRequest.Method.post, "/v1/cameras/synth/stop"), (.delete, "/v1/photos/x.jpg"), (.put, "/v1/cameras/synth/controls")] {
                let response = try await client.execute(uri: uri, method: method, headers: viewer)
                #expect(response.status == .forbidden, "\(method) \(uri)")
                #expect(Self.errorCode(response) == "read_only")
                let message = try APIJSON.decoder().decode(ErrorBody.self, from: Data(response.body.readableBytesView)).error.message
                #expect(message.contains("tcp_view_token") && message.contains("send tcp_token instead"), "\(message)")
            }
            let session = try await client.execute(uri: "/v1/session", method: .get, headers: viewer)
            #expect(try APIJSON.decoder().decode(SessionInfo.self, from: Data(session.body.readableBytesView)).access == .view)

            // Signed in with it, as Basic too: the same rules.
            let signIn = try await Self.signIn(client, token: Self.viewToken)
            #expect(signIn.status == .noContent)
            let cookie = try Self.cookie(signIn)
            let viaCookie = try await client.execute(uri: "/v1/session", method: .get, headers: [.cookie: cookie])
            #expect(try APIJSON.decoder().decode(SessionInfo.self, from: Data(viaCookie.body.readableBytesView)).access == .view)
            #expect(try await client.execute(uri: "/v1/cameras/synth/stop", method: .post, headers: [.cookie: cookie, .contentType: "application/json"]).status == .forbidden)
            let basic: HTTPFields = [.authorization: Self.basic("viewer:\(Self.viewToken)"), .contentType: "application/json"]
            #expect(try await client.execute(uri: "/v1/cameras/synth/start", method: .post, headers: basic).status == .forbidden)
            #expect(try await client.execute(uri: "/v1/session", method: .delete, headers: [.cookie: cookie]).status == .noContent,
                    "a viewer may sign out")
        }
    }

    @Test func aSessionStopsWorkingWhenItsTokenChanges() async throws {
        let sessions = SessionStore()
        let name = sessions.create(access: .full, token: "old-token")
        try await withServer(sessions: sessions, access: AccessPolicy(tcpToken: "new-token")) { client in
            let response = try await client.execute(uri: "/v1/status", method: .get, headers: [.cookie: "camd_session=\(name)"])
            #expect(response.status == .unauthorized)
        }
        // A token that became the viewer's no longer gives full access.
        let demoted = sessions.create(access: .full, token: "old-token")
        try await withServer(sessions: sessions, access: AccessPolicy(tcpToken: "new-token", tcpViewToken: "old-token")) { client in
            let response = try await client.execute(uri: "/v1/status", method: .get, headers: [.cookie: "camd_session=\(demoted)"])
            #expect(response.status == .unauthorized)
        }
    }

    @Test func aNavigationWithoutCredentialsGetsTheSignInPage() async throws {
        try await withServer { client in
            for headers: HTTPFields in [[.accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"],
                                        [HTTPField.Name("Sec-Fetch-Mode")!: "navigate"]] {
                let page = try await client.execute(uri: "/cameras/synth/live", method: .get, headers: headers)
                #expect(page.status == .unauthorized)
                #expect(page.headers[.wwwAuthenticate] == #"Basic realm="camd""#)
                #expect(page.headers[.contentType] == "text/html; charset=utf-8")
                #expect(page.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("script-src 'self'") == true)
                let html = String(buffer: page.body)
                #expect(html.contains(#"<form id="camd-signin""#))
                #expect(html.contains(#"<label for="camd-token">"#) && html.contains(#"id="camd-token""#), "the field is labelled")
                #expect(html.contains(#"name="viewport""#), "usable at phone width")
                #expect(html.contains(#"<script src="/assets/camd-signin.js"></script>"#))
                #expect(!html.contains("<script>"), "no inline script: the CSP forbids it")
            }
            // The page's own files load before signing in; the others do not.
            let script = try await client.execute(uri: "/assets/camd-signin.js", method: .get)
            #expect(script.status == .ok)
            #expect(String(buffer: script.body).contains("/v1/session"))
            #expect(try await client.execute(uri: "/assets/camd-live.js", method: .get).status == .unauthorized)
            // A script's or a player's request keeps the JSON error.
            let fetch = try await client.execute(uri: "/v1/status", method: .get, headers: [.accept: "application/json"])
            #expect(fetch.status == .unauthorized)
            #expect(fetch.headers[.contentType] == "application/json")
        }
    }

    /// What OctoPrint, Home Assistant and a browser send, header for header (Host aside: the
    /// test client sends `localhost`).
    @Test func theRequestsOfOctoPrintHomeAssistantAndABrowserAreLetIn() async throws {
        try await withServer(running: true) { client in
            // OctoPrint's snapshot: python-requests turns http://camd:TOKEN@host:port/... into Basic.
            let octoPrint: HTTPFields = [
                .userAgent: "python-requests/2.31.0", .acceptEncoding: "gzip, deflate", .accept: "*/*", .connection: "keep-alive",
                .authorization: Self.basic("camd:\(Self.token)"),
            ]
            let snapshot = try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .get, headers: octoPrint)
            #expect(snapshot.status == .ok)
            #expect(snapshot.headers[.contentType] == "image/jpeg")

            // Home Assistant's mjpeg camera: aiohttp with BasicAuth(username, password), for the
            // still image and the stream (HEAD here: the stream never ends).
            let homeAssistant: HTTPFields = [
                .userAgent: "HomeAssistant/2025.1.0 aiohttp/3.11.11 Python/3.13", .accept: "*/*",
                .acceptEncoding: "gzip, deflate, br", .authorization: Self.basic("homeassistant:\(Self.viewToken)"),
            ]
            let still = try await client.execute(uri: "/v1/cameras/synth/snapshot", method: .get, headers: homeAssistant)
            #expect(still.status == .ok)
            let stream = try await client.execute(uri: "/v1/cameras/synth/stream", method: .head, headers: homeAssistant)
            #expect(stream.status == .ok)
            #expect(stream.headers[.contentType]?.hasPrefix("multipart/x-mixed-replace") == true)

            // A browser: the first navigation gets the prompt, then it sends Basic with what was typed.
            var browser: HTTPFields = [
                .userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
                .accept: "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8",
                .acceptEncoding: "gzip, deflate, br, zstd", .acceptLanguage: "en-GB,en;q=0.9",
                HTTPField.Name("Upgrade-Insecure-Requests")!: "1", HTTPField.Name("Sec-Fetch-Site")!: "none",
                HTTPField.Name("Sec-Fetch-Mode")!: "navigate", HTTPField.Name("Sec-Fetch-User")!: "?1",
                HTTPField.Name("Sec-Fetch-Dest")!: "document",
            ]
            let prompt = try await client.execute(uri: "/", method: .get, headers: browser)
            #expect(prompt.status == .unauthorized)
            #expect(prompt.headers[.wwwAuthenticate] == #"Basic realm="camd""#)
            browser[.authorization] = Self.basic("me:\(Self.token)")
            let page = try await client.execute(uri: "/", method: .get, headers: browser)
            #expect(page.status == .ok)
            #expect(String(buffer: page.body).contains("<title>camd"))
        }
    }

    @Test func withoutATokenNothingAsksForCredentials() async throws {
        try await withServer(access: AccessPolicy()) { client in
            #expect(try await client.execute(uri: "/v1/status", method: .get).status == .ok)
            let session = try await client.execute(uri: "/v1/session", method: .get)
            #expect(try APIJSON.decoder().decode(SessionInfo.self, from: Data(session.body.readableBytesView)).access == .full)
            let signIn = try await Self.signIn(client, token: "anything")
            #expect(signIn.status == .noContent)
            #expect(signIn.headers[.setCookie] == nil, "nothing to sign in to")
        }
    }
}
