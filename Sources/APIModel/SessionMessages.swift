/// What a caller may do: `full` changes things, `view` only reads (status, snapshots,
/// streams, media, events, pages) and signs in and out.
public enum AccessLevel: String, Codable, Sendable {
    case full
    case view
}

/// `POST /v1/session`: the token to sign in with, `tcp_token` or `tcp_view_token`.
public struct SignInRequest: Codable, Sendable, Hashable {
    public var token: String

    public init(token: String) {
        self.token = token
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case token
    }

    /// Any key the body has, to name one that is not a field.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Refuses a key other than `token`: a misspelt one would otherwise read as a wrong token.
    public init(from decoder: any Decoder) throws {
        for key in try decoder.container(keyedBy: AnyKey.self).allKeys where key.stringValue != CodingKeys.token.stringValue {
            throw DecodingError.dataCorrupted(.init(codingPath: [key], debugDescription:
                "unknown field \"\(key.stringValue)\"; signing in takes only \"token\""))
        }
        token = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .token)
    }
}

/// `GET /v1/session`: what the caller's credentials allow, so a page can hide what a viewer cannot use.
public struct SessionInfo: Codable, Sendable, Hashable {
    public var access: AccessLevel

    public init(access: AccessLevel) {
        self.access = access
    }
}
