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
    /// name?, created}`. A name is 1…255 bytes with no control characters.
    public func createAPIToken(name: String?, container: String, environment: Environment) throws -> DocumentBody {
        if let n = name { try Names.validateName(n, noun: "API token name", pathCharacters: true) }
        let tokens = try apiTokens(container, environment)
        let made: APITokenStore.Token = try tokens.update { list in
            var rng = SystemRandomNumberGenerator()
            var t: String
            repeat { t = Hex.string((0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }) } while list.contains { $0.apiToken == t }
            let token = APITokenStore.Token(apiToken: t, name: name, created: clock.now())
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

    static func noAPIToken(_ token: String, _ container: String, _ environment: Environment) -> CloudKitError {
        CloudKitError(.notFound, "no API token '\(APITokenStore.shown(token))' in container \(container) (\(environment.rawValue))")
    }

    private func apiTokenBody(_ t: APITokenStore.Token, _ container: String, _ environment: Environment) -> [String: JSONValue] {
        var o: [String: JSONValue] = ["apiToken": .string(t.apiToken), "containerIdentifier": .string(container),
                                      "environment": .string(environment.rawValue), "created": .int(t.created)]
        if let n = t.name { o["name"] = .string(n) }
        return o
    }
}
