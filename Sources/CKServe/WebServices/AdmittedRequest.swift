import CKCore

/// What `admit` resolved from a request's head, which the engine hands back to `respond` with
/// the whole request (`HTTPRequest.context`), as Hummingbird carries a resolved route in its
/// request context: the path is parsed once, and the credentials checked before the body are
/// not checked again after it, and the query string is parsed once.
struct AdmittedRequest: Sendable {
    let route: WebServicesRoute
    let query: QueryString
    /// What of the credentials was checked before the body; nil when nothing was (a request
    /// without a body is authenticated once, after).
    let checked: HeadAuthentication?
}
