import Foundation
import HTTPTypes
import Hummingbird

/// What a request offers to prove who it is over TCP: a token, and a session cookie.
///
/// The token comes as `Authorization: Bearer <token>` (curl, scripts), or as HTTP Basic with
/// the token as the password and any user name: what OctoPrint and Home Assistant send for
/// `http://camd:TOKEN@host/...` or a user name and password, and what a browser sends after
/// its password prompt.
public struct Credentials: Sendable, Equatable {
    public var token: String?
    /// The `camd_session` cookie's value.
    public var sessionName: String?

    public init(token: String? = nil, sessionName: String? = nil) {
        self.token = token
        self.sessionName = sessionName
    }

    public init(_ headers: HTTPFields) {
        self.init(fields: headers)
    }

    public init(fields headers: some RequestFields) {
        self.init(token: headers[.authorization].flatMap(Self.token(fromAuthorization:)),
                  sessionName: Cookies(from: headers[values: .cookie])[SessionStore.cookieName]?.value)
    }

    /// The token of an `Authorization` value: Bearer's credential, or Basic's password (what
    /// follows the first colon of the decoded `user:password`). Schemes are case-insensitive
    /// (RFC 9110 11.1).
    public static func token(fromAuthorization value: String) -> String? {
        let parts = value.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let credential = parts[1].trimmingCharacters(in: .whitespaces)
        switch parts[0].lowercased() {
        case "bearer":
            return credential
        case "basic":
            // Some clients leave out base64's padding.
            let padded = credential + String(repeating: "=", count: (4 - credential.utf8.count % 4) % 4)
            guard let decoded = Data(base64Encoded: padded), let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            return String(decoding: decoded[decoded.index(after: colon)...], as: UTF8.self)
        default:
            return nil
        }
    }
}
