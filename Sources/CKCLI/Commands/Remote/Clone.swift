import CKCore
import CKJSON
import CKModel
import CKRemote
import Foundation

extension RemoteCommands {
    static let clone: CommandSpec = CommandSpec(synopsis: "URL|NAME [DIR] [--db D] [--zone Z]… [--types T,…] [--schema FILE.ckdb]",
        summary: "Copy a remote container's database into a new data directory",
        options: [
            typesOption,
            OptionSpec("--schema", value: "FILE", help: "the container's schema (.ckdb, as cktool export-schema writes it): imported here, and the record types to query"),
            OptionSpec("--apple-id", value: "APPLE-ID", help: "the local account the private or shared database is kept under [default: the remote user's email, else one made from the user record name]"),
        ] + pacingOptions,
        details: """
        Makes DIR/.ck (DIR: the container's last name, App for iCloud.com.example.App), adds the
        remote as origin, and fetches the database --db names (default private) into it, each
        page saved with its cursor as it arrives: after Ctrl-C, a throttle or a crash, 'ck pull'
        in DIR goes on where it stopped. Private and shared databases come through their change
        feeds (changes/database, then changes/zone); the public database and the private default
        zone have none, and are read with records/query per record type (--types, or those of
        --schema), which needs each type's "___recordID" REFERENCE QUERYABLE. Web Services has no
        schema endpoint: give the schema with --schema (CloudKit Console, or cktool export-schema).
        Prints {dataDirectory, remote, fetched, zones}.
        """, severalZones: true) { inv in
        try running(inv) {
            let p = try inv.positionals(min: 1, max: 2, what: "URL or remote name, and a directory")
            let url: RemoteURL
            if p[0].contains("://") {
                do { url = try RemoteURL(p[0]) } catch let e as CloudKitError { throw inv.usageError(e.reason) }
            } else { url = try inv.api.remote(named: p[0]).url }
            var base = p.count > 1 ? p[1] : String(url.container.split(separator: ".").last ?? "clone")
            if !base.hasPrefix("/") { base = inv.io.currentDirectory + "/" + base }
            let dir = base + "/.ck"
            // A clone cut short (killed before its first page) is taken up again; anything else there is refused.
            let resuming = FileManager.default.fileExists(atPath: dir)
            if resuming, (try? CloudKitAPI(dataDirectory: dir).remote(named: "origin").url) != url {
                throw inv.usageError("'\(dir)' already exists: clone into a new directory, or 'ck pull' there")
            }
            var schemaText: String?
            if let f = inv.args.value("--schema") {
                let path = f.hasPrefix("/") ? f : inv.io.currentDirectory + "/" + f
                guard let d = FileManager.default.contents(atPath: path), let t = String(data: d, encoding: .utf8) else { throw inv.usageError("cannot read the schema '\(f)'") }
                schemaText = t
            }
            let baseExisted = FileManager.default.fileExists(atPath: base)
            if !resuming { _ = try CloudKitAPI.initialize(dataDirectory: dir, discovered: false) }
            // A clone refused before its first page leaves nothing behind, as git's does.
            var fetchedAny = false
            defer {
                if !resuming, !fetchedAny {
                    try? FileManager.default.removeItem(atPath: dir)
                    if !baseExisted { try? FileManager.default.removeItem(atPath: base) }
                }
            }
            let api = CloudKitAPI(dataDirectory: dir)
            let remote = resuming ? try api.remote(named: "origin") : try api.addRemote("origin", url: url)
            _ = try api.setDefaultContainer(url.container)
            var caller = Caller(container: url.container, environment: url.environment, scope: inv.globals.scope, user: .device, deviceID: inv.globals.device)
            let client = try RemoteConnection.open(remote, env: inv.io.environment, pacing: try pacing(inv, url), notice: { inv.io.writeErr("ck: \($0)\n") })
            defer { client.close() }
            // The local device signs in as the remote's user: the private and shared databases
            // are theirs, and writing even the public one needs an account. A server-to-server
            // key may not answer users/caller: then --apple-id, or a name made from the host.
            if try api.accountSummary(as: caller).document["userRecordName"] == nil {
                var me: JSONValue?
                do { me = try client.call(.public, "users/caller") } catch let e as CloudKitError where caller.scope == .public && e.code != .networkFailure {
                    me = nil
                }
                let user = me?["userRecordName"]?.stringValue
                if caller.scope != .public, user == nil { throw CloudKitError(.internalError, "remote '\(remote.name)' answered users/caller with no userRecordName") }
                let appleID = inv.args.value("--apple-id") ?? me?["lookupInfo"]?["emailAddress"]?.stringValue
                    ?? user.map { String($0.drop { $0 == "_" }) + "@users." + url.host } ?? "clone@users." + url.host
                _ = try api.signIn(SignInRequest(appleID: appleID), as: caller)
            }
            var types = types(inv)
            if let text = schemaText {
                var dev = caller
                dev.environment = .development
                _ = try api.importSchema(SchemaImportRequest(text: text), as: dev)
                if url.environment == .production { _ = try api.deploySchema(as: dev) }
                if types.isEmpty, caller.scope == .public || inv.globals.zones.contains(where: { $0 == ZoneID.defaultZoneName }) {
                    types = try queryableTypes(api, caller, scope: caller.scope)
                }
            }
            if caller.scope == .public, types.isEmpty {
                throw inv.usageError("the public database has no change feed: name the record types to query (--types T,…) or give the schema (--schema FILE.ckdb)")
            }
            caller.user = .device
            var f = RemoteFetch(api: api, client: client, caller: caller)
            f.zones = inv.globals.zones
            f.types = types
            let shown = progress(inv, client)
            f.progress = { r in fetchedAny = true; shown(r) }
            let r = try RemotePull(fetch: f).run()
            fetchedAny = true
            endProgress(inv)
            var doc = r.json.objectValue ?? [:]
            doc["dataDirectory"] = .string(dir)
            doc["remote"] = remote.json
            inv.print(DocumentBody(doc))
            return r.failures > 0 ? ExitCode.partialFailure : ExitCode.success
        }
    }

    /// The record types of the imported schema a clone queries; a type whose `___recordID` is
    /// not QUERYABLE stops it, with the line to add.
    static func queryableTypes(_ api: CloudKitAPI, _ caller: Caller, scope: DatabaseScope) throws -> [String] {
        let schema = try api.exportSchemaJSON(as: caller).document["recordTypes"]?.arrayValue ?? []
        var out: [String] = []
        for t in schema {
            guard let name = t["name"]?.stringValue, name != "Users" else { continue }
            let queryable = t["fields"]?.arrayValue?.contains { $0["name"]?.stringValue == "___recordID" && $0["queryable"]?.boolValue == true } ?? false
            if !queryable {
                throw CloudKitError.badRequest("record type \(name) cannot be read without a change feed: its \"___recordID\" is not QUERYABLE; add this line to RECORD TYPE \(name) in the schema (and deploy it): \"___recordID\" REFERENCE QUERYABLE,")
            }
            out.append(name)
        }
        return out
    }
}
