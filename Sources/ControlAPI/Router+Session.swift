import APIModel
import Hummingbird

/// Where browsers sign in and out (docs/api.md, "Signing in").
enum SessionRoutes {
    static let path = "/v1/session"

    /// The challenge of a refused sign-in, and of any 401 to a page's script: not Basic, which
    /// would make the browser open its own password dialog over the page for the page's fetch.
    static let signInChallenge = "Bearer realm=\"camd\""
}

/// `POST /v1/session` signs in with a token and sets the `camd_session` cookie,
/// `DELETE /v1/session` signs out, `GET /v1/session` says what the caller may do.
func addSessionRoutes(_ v1: RouterGroup<CamdRequestContext>, _ services: APIServices) {
    v1.post("session") { request, context in
        let body = try await JSONBody.decode(SignInRequest.self, request)
        // The Unix socket and a TCP listener without tcp_token ask for no credentials:
        // there is nothing to sign in to, and no cookie to set.
        guard context.isTCP, services.access.tcpNeedsCredentials else { return Response(status: .noContent) }
        guard let access = services.access.access(forToken: body.token) else {
            services.logger.notice("refused a sign-in over TCP: the token is neither tcp_token nor tcp_view_token")
            throw APIError(.unauthorized, "unauthorized",
                           "the token is neither tcp_token nor tcp_view_token; copy it from [daemon] in camd.toml",
                           headers: [.wwwAuthenticate: SessionRoutes.signInChallenge])
        }
        if let old = Credentials(request.headers).sessionName { services.sessions.remove(named: old) }
        let name = services.sessions.create(access: access, token: body.token)
        services.logger.notice("a browser signed in over TCP with \(access == .full ? "tcp_token" : "tcp_view_token")")
        return Response(status: .noContent, headers: [.setCookie: services.sessions.cookie(for: name), .cacheControl: "no-store"])
    }
    v1.delete("session") { request, _ in
        if let name = Credentials(request.headers).sessionName { services.sessions.remove(named: name) }
        return Response(status: .noContent, headers: [.setCookie: SessionStore.expiredCookie, .cacheControl: "no-store"])
    }
    v1.get("session") { _, context in
        // AccessMiddleware lets no GET through without credentials, so this is the caller's access.
        guard let access = context.access else {
            throw APIError(.unauthorized, "unauthorized", "no credentials were sent", headers: [.wwwAuthenticate: AccessPolicy.challenge])
        }
        var response = try JSONBody.response(SessionInfo(access: access))
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
