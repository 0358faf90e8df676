import CKJSON
import CKModel
import CKStore

/// What `ck serve` sets up for a web page or a test suite: an API token for the page's
/// `<script>` snippet, and the whole of an ephemeral server's data directory — a signed-in test
/// user, an API token, that user's web auth token and, optionally, records loaded from a
/// `ck export`. ck's own operations, standing for the CloudKit Console (no endpoint, no fault).
public struct EphemeralSetupRequest: Sendable {
    public var container: String
    public var environment: Environment
    /// The database the seed's records go to (its zoneIDs name the zones).
    public var scope: DatabaseScope
    /// A `ck export` (NDJSON or a JSON array of records), or nil.
    public var seed: [UInt8]?

    public init(container: String, environment: Environment, scope: DatabaseScope = .private, seed: [UInt8]? = nil) {
        self.container = container
        self.environment = environment
        self.scope = scope
        self.seed = seed
    }

    /// The test user signed in on the fresh data directory.
    public static let testAppleID = "test@example.com"
}

extension CloudKitAPI {
    /// The newest API token of a container environment, made (named `ck serve`) when it has
    /// none: what a page's snippet embeds. A page's API token is not a secret in CloudKit
    /// either: it is in every web app's source.
    public func pageAPIToken(container: String, environment: Environment) throws -> String {
        let tokens = try apiTokens(container, environment)
        if let newest = try tokens.list().max(by: { ($0.created, $0.apiToken) < ($1.created, $1.apiToken) }) { return newest.apiToken }
        guard let made = try createAPIToken(name: "ck serve", container: container, environment: environment).document["apiToken"]?.stringValue else {
            throw CloudKitError.internalError("a new API token came back without its apiToken")
        }
        return made
    }

    /// Readies a fresh data directory for a test suite: signs `testAppleID` in on the device, makes
    /// an API token and a two-week web auth token of that user for the container environment,
    /// and imports the seed into `scope` (checked whole before anything is written; a failed
    /// record fails the setup). `{apiToken, ckWebAuthToken, userRecordName, containerIdentifier,
    /// environment, seeded?}` — `seeded` counts the records the seed held.
    public func prepareEphemeral(_ r: EphemeralSetupRequest) throws -> DocumentBody {
        try Names.validateContainerID(r.container)
        let device = Caller(container: r.container, environment: r.environment, scope: r.scope, user: .device, deviceID: "ephemeral")
        _ = try signIn(SignInRequest(appleID: EphemeralSetupRequest.testAppleID, givenName: "Test"), as: device)
        let apiToken = try createAPIToken(name: "ck serve --ephemeral", container: r.container, environment: r.environment)
        let session = try createWebAuthToken(as: device, keepSignedIn: true)
        var body: [String: JSONValue] = [
            "apiToken": apiToken.document["apiToken"] ?? .null,
            "ckWebAuthToken": session.document["ckWebAuthToken"] ?? .null,
            "userRecordName": session.document["userRecordName"] ?? .null,
            "containerIdentifier": .string(r.container),
            "environment": .string(r.environment.rawValue),
        ]
        // An export of an empty database is empty: it seeds nothing, which is no error.
        if let seed = r.seed, seed.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
            let importing = try importSession(ImportRequest(input: seed), as: device)
            let summary = try importing.run { _ in }
            if let first = summary.failures.first {
                var e = first
                e.reason = "the seed's records could not all be loaded (\(summary.failures.count) of \(summary.total) failed); the first: \(first.reason)"
                throw e
            }
            body["seeded"] = .int(Int64(summary.total))
        } else if r.seed != nil {
            body["seeded"] = .int(0)
        }
        return DocumentBody(body)
    }
}
