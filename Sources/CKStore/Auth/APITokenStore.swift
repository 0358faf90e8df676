import CKJSON
import CKModel

/// The API tokens of one container environment, as the CloudKit Console lists them:
/// `containers/<c>/<environment>/api-tokens.json` — `{schemaVersion, apiTokens: [{apiToken,
/// name?, signInCallback?, created}]}`, oldest first. An API token identifies an app, not a user, and the Console
/// shows it in full, so it is kept as it is (web auth tokens, which are a user's, are not).
package struct APITokenStore {
    package let paths: DataPaths
    package let container: String
    package let environment: Environment

    package struct Token: Equatable {
        package var apiToken: String
        package var name: String?
        /// The Console's "Sign In Callback" set to URL Redirect: where the sign-in page sends the
        /// browser with the new session. nil: Post Message, the default (and every token an
        /// older ck made).
        package var signInCallback: String?
        package var created: Int64

        package var json: JSONValue {
            var o: [String: JSONValue] = ["apiToken": .string(apiToken), "created": .int(created)]
            if let n = name { o["name"] = .string(n) }
            if let c = signInCallback { o["signInCallback"] = .string(c) }
            return .object(o)
        }

        package init(apiToken: String, name: String?, signInCallback: String? = nil, created: Int64) {
            self.apiToken = apiToken
            self.name = name
            self.signInCallback = signInCallback
            self.created = created
        }
    }

    package var file: String { paths.apiTokensFile(container, environment) }

    /// An API token is 64 lowercase hex digits (32 random bytes).
    package static func isToken(_ s: String) -> Bool {
        // In the string's own buffer when it has one: every request asks.
        func hex(_ b: UInt8) -> Bool { (48...57).contains(b) || (97...102).contains(b) }
        return s.utf8.count == 64 && (s.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(hex) } ?? s.utf8.allSatisfy(hex))
    }

    /// What is wrong with the shape of something sent as an API token (it is not one): its
    /// length against the 64 it needs, whitespace at an end (a token pasted with its newline),
    /// or characters that are not lowercase hex.
    package static func shapeProblem(_ s: String) -> String {
        let n = s.unicodeScalars.count
        let need = "an API token is 64 lowercase hex digits"
        let trimmed = s.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed != s, isToken(trimmed) {
            return "is \(n) characters, not 64: it \(Names.whitespaceAtEnds(s)); send the token without it"
        }
        if n != 64 { return "is \(n) characters; \(need)" }
        if s.lowercased() != s, isToken(s.lowercased()) { return "has uppercase letters; \(need)" }
        return "is not an API token: \(need)"
    }

    /// A token as an error may show it: its first 8 digits, never the whole secret.
    package static func shown(_ s: String) -> String {
        s.utf8.count <= 8 ? Names.describe(s) : Names.describe(String(s.prefix(8))) + "…"
    }

    package func list() throws -> [Token] { try parse(try StampedFiles.shared.readJSON(file)) }

    private func parse(_ stored: JSONValue?) throws -> [Token] {
        guard let j = stored else { return [] }
        guard let items = j["apiTokens"]?.arrayValue else { throw CloudKitError.internalError("malformed \(file): no apiTokens list").with(.repairDataDirectory) }
        return try items.map { t in
            guard let tok = t["apiToken"]?.stringValue, let created = t["created"]?.int64Value else {
                throw CloudKitError.internalError("malformed \(file): an API token without apiToken or created").with(.repairDataDirectory)
            }
            return Token(apiToken: tok, name: t["name"]?.stringValue, signInCallback: t["signInCallback"]?.stringValue, created: created)
        }
    }

    /// Asked for every request `ck serve` answers: the tokens are kept as a set while the file
    /// is the same (StampedFiles).
    package func contains(_ token: String) throws -> Bool {
        guard APITokenStore.isToken(token) else { return false }
        return try StampedFiles.shared.value(file) { Set(try list().map(\.apiToken)) }?.contains(token) ?? false
    }

    /// Changes the list under the data directory's auth lock; the file is replaced atomically,
    /// and a change that throws writes nothing.
    package func update<T>(_ change: (inout [Token]) throws -> T) throws -> T {
        try LockedDocument(file, lock: paths.authLock, decode: parse, encode: { tokens in
            .object(["schemaVersion": .int(FileFormat.schemaVersion), "apiTokens": .array(tokens.map(\.json))])
        }).update(change)
    }

    package init(paths: DataPaths, container: String, environment: Environment) {
        self.paths = paths
        self.container = container
        self.environment = environment
    }
}
