import CKCrypto
import CKJSON
import CKModel
import CKStore

/// API tokens, as the CloudKit Console makes them: one identifies an app to a container
/// environment; every request to `ck serve` carries one (`?ckAPIToken=`) unless it is signed
/// with a server-to-server key. ck's own operations (no endpoint, no fault, no account): they
/// stand for the Console, not for a client.
extension CloudKitAPI {
    func apiTokens(_ container: String, _ environment: Environment) throws -> APITokenStore {
        try Names.validateContainerID(container)
        return APITokenStore(paths: store.paths, container: container, environment: environment)
    }

    /// A new API token, 64 lowercase hex digits: `{apiToken, containerIdentifier, environment,
    /// name?, signInCallback?, created}`. A name is 1…255 bytes with no control characters.
    /// `signInCallback` is the Console's "Sign In Callback" set to URL Redirect: an absolute
    /// `http://` or `https://` URL with no fragment, to which the sign-in page sends the browser
    /// with `?ckWebAuthToken=…&ckSession=…`; without one the page posts the session to the
    /// page that opened it (Post Message).
    public func createAPIToken(name: String?, signInCallback: String? = nil, container: String, environment: Environment) throws -> DocumentBody {
        if let n = name { try Names.validateName(n, noun: "API token name", pathCharacters: true) }
        if let c = signInCallback { try Self.validateSignInCallback(c) }
        let tokens = try apiTokens(container, environment)
        let made: APITokenStore.Token = try tokens.update { list in
            var rng = SystemRandomNumberGenerator()
            var t: String
            repeat { t = Hex.string((0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }) } while list.contains { $0.apiToken == t }
            let token = APITokenStore.Token(apiToken: t, name: name, signInCallback: signInCallback, created: clock.now())
            list.append(token)
            return token
        }
        return DocumentBody(apiTokenBody(made, container, environment))
    }

    /// `{apiTokens: [...]}`, each as `createAPIToken` answered it, oldest first (ties by token).
    public func listAPITokens(container: String, environment: Environment) throws -> DocumentBody {
        let list = try apiTokens(container, environment).list().sorted { ($0.created, $0.apiToken) < ($1.created, $1.apiToken) }
        return DocumentBody(["apiTokens": .array(list.map { .object(apiTokenBody($0, container, environment)) })], listKey: "apiTokens")
    }

    /// `{apiToken, deleted: true}`; BAD_REQUEST for what is not shaped as a token, NOT_FOUND for a
    /// token this container environment does not have.
    public func deleteAPIToken(_ token: String, container: String, environment: Environment) throws -> DocumentBody {
        let tokens = try apiTokens(container, environment)
        guard APITokenStore.isToken(token) else {
            throw CloudKitError.badRequest("'\(APITokenStore.shown(token))' is not an API token (64 lowercase hex digits)")
        }
        guard try tokens.contains(token) else { throw Self.noAPIToken(token, container, environment) }
        try tokens.update { list in
            guard let i = list.firstIndex(where: { $0.apiToken == token }) else { throw Self.noAPIToken(token, container, environment) }
            list.remove(at: i)
        }
        return DocumentBody(["apiToken": .string(token), "deleted": true])
    }

    /// The sign-in callback of an API token of this container and environment: nil when it has
    /// none (its sign-in posts the session to the opener). AUTHENTICATION_FAILED for what is
    /// not one of its tokens, as a request carrying it would be refused.
    public func signInCallback(ofAPIToken token: String, container: String, environment: Environment) throws -> String? {
        let tokens = try apiTokens(container, environment)
        guard APITokenStore.isToken(token) else {
            throw CloudKitError(.authenticationFailed, "ckAPIToken '\(APITokenStore.shown(token))' \(APITokenStore.shapeProblem(token))")
        }
        guard let found = try tokens.list().first(where: { $0.apiToken == token }) else {
            throw CloudKitError(.authenticationFailed, "ckAPIToken '\(APITokenStore.shown(token))' is not an API token of container \(container) (\(environment.rawValue))")
        }
        return found.signInCallback
    }

    /// A sign-in callback is where a browser is sent with a user's session in the query: an
    /// absolute http:// or https:// URL naming a host, in printable ASCII (percent-encoded),
    /// with no fragment — the session is appended to the query, which a fragment would follow.
    static func validateSignInCallback(_ url: String) throws {
        func refuse(_ why: String) -> CloudKitError {
            CloudKitError.badRequest("sign-in callback '\(Names.describe(url, limit: 80))' \(why)")
        }
        if url.isEmpty { throw CloudKitError.badRequest("sign-in callback must not be empty") }
        if url.utf8.count > 2048 { throw refuse("is \(url.utf8.count) bytes long; the limit is 2048 bytes") }
        if let u = url.unicodeScalars.first(where: { !(0x21...0x7E).contains($0.value) }) {
            let what = Names.whitespace(u) ?? (Names.isControl(u) ? "a control character" : "'\(u)', which is not ASCII")
            throw refuse("holds \(what): percent-encode it")
        }
        let lower = url.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }) else {
            throw refuse("is not an absolute http:// or https:// URL")
        }
        if url.contains("#") { throw refuse("has a fragment (#…): the session is added to the query, which a fragment would follow") }
        let rest = url.dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        if authority.contains("@") { throw refuse("names a user (…@): a callback names a host and a port only") }
        var host = authority, port: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse("has an IPv6 address without its closing ']'") }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw refuse("has '\(after)' after its IPv6 address") }
                port = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        }
        if host.isEmpty || host == "[]" { throw refuse("names no host") }
        if let port, port.isEmpty || port.count > 5 || !port.allSatisfy({ $0.isASCII && $0.isNumber }) || Int(port)! > 65535 {
            throw refuse("has a port that is not a number from 0 to 65535")
        }
    }

    static func noAPIToken(_ token: String, _ container: String, _ environment: Environment) -> CloudKitError {
        CloudKitError(.notFound, "no API token '\(APITokenStore.shown(token))' in container \(container) (\(environment.rawValue))")
    }

    private func apiTokenBody(_ t: APITokenStore.Token, _ container: String, _ environment: Environment) -> [String: JSONValue] {
        var o: [String: JSONValue] = ["apiToken": .string(t.apiToken), "containerIdentifier": .string(container),
                                      "environment": .string(environment.rawValue), "created": .int(t.created)]
        if let n = t.name { o["name"] = .string(n) }
        if let c = t.signInCallback { o["signInCallback"] = .string(c) }
        return o
    }
}
