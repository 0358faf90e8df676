import CKModel
import CKStore

extension CloudKitAPI {
    /// What can be checked of a request's credentials before its body is read, so that `ck
    /// serve` refuses an anonymous or forged request without reading up to 2 MB of it: with
    /// no signature headers, an API token of the container environment; with them, a key ID
    /// registered there, a date within the allowed skew, and a database and endpoint a key may
    /// reach — `authenticate`'s own checks. The signature covers the body, so `authenticate`
    /// verifies it once the body is read. Throws what `authenticate` would throw for the same
    /// credentials.
    public func authenticateBeforeBody(_ c: WebCredentials) throws {
        try Names.validateContainerID(c.container)
        // The web auth token is not looked at: it names no one rather than failing.
        if let sig = c.signature { _ = try signedRequestKey(sig, c, headOnly: true) } else { try requireAPIToken(c) }
    }
}
