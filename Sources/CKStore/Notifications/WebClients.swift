import CKJSON
import CKModel

/// Web clients registered for pushes (`tokens/create`, `tokens/register`): one file per
/// token, `<container>/<environment>/webclients/<token>.json` — `{apnsToken, apnsEnvironment,
/// userRecordName?, deviceID, created, issuer?}`. A client bound to a user is one of that user's
/// devices, whose notification inbox its long-poll reads: every subscription of the user that
/// fires reaches it, as it reaches their other devices — except for the changes it made
/// itself, which is why its device is the one its writes are recorded as (`web-<clientId>`).
package struct WebClients {
    package let paths: DataPaths
    package let container: String
    package let environment: Environment

    package struct Client {
        package var apnsToken: String
        package var apnsEnvironment: String
        package var userRecordName: String?
        /// The device its notifications are delivered to: the device of the requests that
        /// made or registered it, so that the notifications of its own writes skip it.
        package var deviceID: String
        package var created: Int64
        /// The credential that made it (`Caller.credential`), when known.
        package var issuer: String? = nil

        package var json: JSONValue {
            var o: [String: JSONValue] = ["schemaVersion": .int(FileFormat.schemaVersion), "apnsToken": .string(apnsToken),
                                          "apnsEnvironment": .string(apnsEnvironment), "deviceID": .string(deviceID), "created": .int(created)]
            if let u = userRecordName { o["userRecordName"] = .string(u) }
            if let i = issuer { o["issuer"] = .string(i) }
            return .object(o)
        }

        /// The device of a client that names none (a request without `clientId`; a file of
        /// an older ck): its token, so that two such clients do not share one inbox.
        package static func ownDevice(_ apnsToken: String) -> String { "web-" + apnsToken }

        package init(apnsToken: String, apnsEnvironment: String, userRecordName: String?, deviceID: String, created: Int64, issuer: String? = nil) {
            self.apnsToken = apnsToken
            self.apnsEnvironment = apnsEnvironment
            self.userRecordName = userRecordName
            self.deviceID = deviceID
            self.created = created
            self.issuer = issuer
        }
    }

    package var directory: String { paths.environment(container, environment) + "/webclients" }

    /// A token is 32 lowercase hex digits; anything else names no client (and no file).
    package static func isToken(_ s: String) -> Bool { s.utf8.count == 32 && s.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } }

    package func file(_ token: String) -> String { directory + "/" + token + ".json" }

    package func load(_ token: String) throws -> Client? {
        guard WebClients.isToken(token), let j = try FileSystem.readJSON(file(token)), let e = j["apnsEnvironment"]?.stringValue,
              let c = j["created"]?.int64Value else { return nil }
        return Client(apnsToken: token, apnsEnvironment: e, userRecordName: j["userRecordName"]?.stringValue,
                      deviceID: j["deviceID"]?.stringValue ?? Client.ownDevice(token), created: c, issuer: j["issuer"]?.stringValue)
    }

    package func save(_ c: Client) throws {
        try FileSystem.makeDirectories(directory)
        try FileSystem.writeJSON(file(c.apnsToken), c.json)
    }

    package init(paths: DataPaths, container: String, environment: Environment) {
        self.paths = paths
        self.container = container
        self.environment = environment
    }
}
