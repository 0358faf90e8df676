import CKModel
import CKStore

/// What `authenticateBeforeBody` found good in a request's head: handed to `authenticate`
/// with the same credentials once the body is read, it is not checked again.
public struct HeadAuthentication: Sendable {
    /// The credentials it was checked for: `authenticate` takes it for these only.
    let credentials: WebCredentials
    /// A signed request's key, its date and reach checked (the signature, which covers the
    /// body, is not); nil: the API token was checked.
    let key: ServerKeyStore.Key?

    /// Whether this check stands for `c`: the same container environment, database and
    /// endpoint, and the same API token or signature head.
    func covers(_ c: WebCredentials) -> Bool {
        let h = credentials
        guard h.container == c.container, h.environment == c.environment, h.scope == c.scope, h.endpoint == c.endpoint else { return false }
        switch (h.signature, c.signature) {
        case (nil, nil): return key == nil && h.apiToken == c.apiToken
        case (let a?, let b?): return key != nil && a.keyID == b.keyID && a.iso8601Date == b.iso8601Date && a.target == b.target
        default: return false
        }
    }
}

extension CloudKitAPI {
    /// What can be checked of a request's credentials before its body is read, so that `ck
    /// serve` refuses an anonymous or forged request without reading up to 2 MB of it: with
    /// no signature headers, an API token of the container environment; with them, a key ID
    /// registered there, a date within the allowed skew, and a database and endpoint a key may
    /// reach — `authenticate`'s own checks. The signature covers the body, so `authenticate`
    /// verifies it once the body is read, and takes what passed here as checked. Throws what
    /// `authenticate` would throw for the same credentials.
    public func authenticateBeforeBody(_ c: WebCredentials) throws -> HeadAuthentication {
        try Names.validateContainerID(c.container)
        // The web auth token is not looked at: it names no one rather than failing.
        if let sig = c.signature { return HeadAuthentication(credentials: c, key: try signedRequestKey(sig, c, headOnly: true)) }
        try requireAPIToken(c)
        return HeadAuthentication(credentials: c, key: nil)
    }
}
