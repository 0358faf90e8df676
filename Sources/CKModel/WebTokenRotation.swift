/// What becomes of a web auth token once a request's answer replaced it
/// (`X-Apple-CloudKit-Web-Auth-Token`).
public enum WebTokenRotation: Sendable, Equatable {
    /// What live CloudKit does: the token is replaced but not invalidated; it works until its
    /// own expiry (a 25-hour-old keep-signed-in token, and concurrent reuse, were seen to work).
    case live
    /// Apple's documented rule ("each token is intended for a single round trip … the previous
    /// token is no longer valid"): a replaced token is refused once the requests already on
    /// their way with it have had two minutes (`ck serve --strict-token-rotation`).
    case strict
}
