internal import CGStreamer
import Foundation

/// RTSP's Basic authentication against camd's secrets (`tcp_token`, and `tcp_view_token`,
/// since RTSP only ever lets clients watch): any user name, a token as the password, as
/// recorders and players put it in a URL (`rtsp://camd:TOKEN@host:8554/cam`). A client
/// without one gets 401 and a Basic challenge.
///
/// GstRTSPAuth's own Basic check matches whole `user:password` pairs; this subclass
/// replaces only its `authenticate` step, so the permission checks, the 401 and the
/// challenge stay GStreamer's.
enum RTSPTokenAuth {
    /// The role a client with the token has; each camera's factory lets it open and start media.
    static let role = "camd"

    /// A new GstRTSPAuth that accepts any of `passwords` (the caller owns the reference).
    static func make(passwords: [String]) -> UnsafeMutablePointer<GstRTSPAuth> {
        let object = g_object_new_with_properties(type, 0, nil, nil)!
        let auth = GStreamer.cast(object, to: GstRTSPAuth.self)
        gst_rtsp_auth_set_realm(auth, "camd")
        gst_rtsp_auth_set_supported_methods(auth, GST_RTSP_AUTH_BASIC)
        let grant = gst_rtsp_token_new_empty()!
        gst_rtsp_token_set_string(grant, GST_RTSP_TOKEN_MEDIA_FACTORY_ROLE, role)
        g_object_set_data_full(object, tokenKey, grant, { gst_mini_object_unref(GStreamer.cast($0!.assumingMemoryBound(to: GstRTSPToken.self), to: GstMiniObject.self)) })
        for (index, password) in passwords.enumerated() {
            g_object_set_data_full(object, passwordKey(index), strdup(password), { free($0) })
        }
        return auth
    }

    /// Whether an `Authorization` credential (Basic's base64 of `user:password`) carries `password`.
    static func accepts(basic credential: String, password: String) -> Bool {
        guard let decoded = Data(base64Encoded: credential), let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let given = Array(decoded[decoded.index(after: colon)...])
        let expected = Array(password.utf8)
        // Compared in time that depends on the length only, not on where the bytes differ.
        var difference = UInt8(truncatingIfNeeded: given.count ^ expected.count)
        for index in expected.indices { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }

    private static let tokenKey = "camd-token"
    private static func passwordKey(_ index: Int) -> String { "camd-password-\(index)" }

    /// `CamdRTSPTokenAuth`, a GstRTSPAuth whose class's `authenticate` is `authenticate` below.
    private static let type: GType = {
        var query = GTypeQuery()
        g_type_query(gst_rtsp_auth_get_type(), &query)
        var info = GTypeInfo()
        info.class_size = guint16(query.class_size)
        info.instance_size = guint16(query.instance_size)
        info.class_init = { klass, _ in
            guard let klass else { return }
            klass.assumingMemoryBound(to: GstRTSPAuthClass.self).pointee.authenticate = authenticate
        }
        return g_type_register_static(gst_rtsp_auth_get_type(), "CamdRTSPTokenAuth", &info, GTypeFlags(rawValue: 0))
    }()

    /// Sets the context's token when a Basic credential carries the password; without a
    /// token, GstRTSPAuth answers 401 with its challenge.
    private static let authenticate: @convention(c) (UnsafeMutablePointer<GstRTSPAuth>?, UnsafeMutablePointer<GstRTSPContext>?) -> gboolean = { auth, context in
        guard let auth, let context else { return 0 }
        let object = GStreamer.cast(auth, to: GObject.self)
        context.pointee.token = nil
        guard let grant = g_object_get_data(object, tokenKey),
              let credentials = gst_rtsp_message_parse_auth_credentials(context.pointee.request, GST_RTSP_HDR_AUTHORIZATION)
        else { return 1 }
        defer { gst_rtsp_auth_credentials_free(credentials) }
        var passwords: [String] = []
        while let password = g_object_get_data(object, passwordKey(passwords.count)) {
            passwords.append(String(cString: password.assumingMemoryBound(to: CChar.self)))
        }
        var index = 0
        while let credential = credentials[index] {
            index += 1
            guard credential.pointee.scheme == GST_RTSP_AUTH_BASIC, let basic = credential.pointee.authorization else { continue }
            let given = String(cString: basic)
            if passwords.contains(where: { accepts(basic: given, password: $0) }) {
                // Borrowed, as GstRTSPAuth's own tokens are: the auth object keeps it.
                context.pointee.token = grant.assumingMemoryBound(to: GstRTSPToken.self)
                break
            }
        }
        return 1
    }
}
