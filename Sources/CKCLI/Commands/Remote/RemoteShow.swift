import CKCore
import CKJSON
import CKModel
import CKRemote

extension RemoteCommands {
    static let show: CommandSpec = CommandSpec(synopsis: "NAME", summary: "Show a remote, its credentials (masked) and its tracked zones",
        details: """
        Prints {name, url, containerIdentifier, environment, production?, credentials, zones}:
        credentials as stored in the credentials file with the environment's variables over
        them, secrets masked (the first four characters); zones: per database (--db) zone tracked,
        its sync token's state and how many fetched records the local store has not taken yet.
        """) { inv in
        let name = try inv.positionals(min: 1, max: 1, what: "remote name")[0]
        let remote = try inv.api.remote(named: name)
        var doc = remote.json.objectValue ?? [:]
        let store = try CredentialStore.standard(env: inv.io.environment)
        doc["credentials"] = try store.credentials(for: remote.url).overridden(by: inv.io.environment).shown
        doc["credentialsFile"] = .string(store.directory + "/credentials.json")
        doc["secretsIn"] = .string(store.keepsSecretsInKeychain ? "keychain" : "file")
        let caller = try RemoteCommands.caller(inv, remote)
        var zones: [JSONValue] = []
        // A database the device cannot read (signed out) has nothing tracked to show.
        for z in (try? inv.api.trackedZones(remote: name, as: caller)) ?? [] {
            let s = try inv.api.remoteTracking(z, as: caller)
            var o: [String: JSONValue] = ["zoneName": .string(z.zoneName), "records": .int(Int64(s.fetched)), "behind": .int(Int64(s.behind)),
                                          "complete": .bool(s.complete)]
            if let owner = z.ownerRecordName { o["ownerRecordName"] = .string(owner) }
            zones.append(.object(o))
        }
        doc["zones"] = .array(zones)
        doc["database"] = .string(caller.scope.rawValue)
        inv.print(DocumentBody(doc))
        return ExitCode.success
    }
}
