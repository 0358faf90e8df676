extension CloudKitAPI {
    /// What can be checked of a request's credentials before its body is read, so that `ck
    /// serve` refuses an anonymous or forged request without reading up to 2 MB of it: with
    /// no signature headers, an API token of the container environment (`authenticate`'s own
    /// check); with them, a key ID registered there and a date within the allowed skew. The
    /// signature covers the body, so `authenticate` verifies it once the body is read. Throws
    /// what `authenticate` would throw for the same credentials.
    public func authenticateBeforeBody(_ c: WebCredentials) throws {
        if let sig = c.signature {
            try Names.validateContainerID(c.container)
            try verify(sig, c, headOnly: true)
            return
        }
        // The web auth token is not looked at: it names no one rather than failing.
        var head = c
        head.webAuthToken = nil
        _ = try authenticate(head)
    }
}
