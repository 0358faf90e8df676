import CKCore
import CKHTTP
import CKJSON
import CKModel

/// The console API's history calls, `POST /console/api/history/{log,show,diff,blame,tags}`,
/// each one API call (the same as `ck log`, `show`, `diff`, `blame`, `tag list`) in one zone,
/// for the console's caller. A body names where: `{container, environment, database, as?,
/// zoneName}`, then what the call takes: `log` `{recordName?, limit?, until?}` (with the
/// fields each change set), `show` `{ref}`, `diff` `{from, to?}`, `blame` `{recordName, at?}`,
/// `restore` `{ref, recordNames?, dryRun, ifHead?}` and `revert` `{ref, dryRun, ifHead?}` (`ck
/// restore`, `ck revert`, `--dry-run`): a preview answers the plan with the zone's `head` and
/// the `ref` it resolved (`ZONE@SEQ`); the write names both, and is refused (CONFLICT) if the
/// zone has moved on since.
/// References are ck's (Docs/history.md): a token, `ZONE@SEQ`, `HEAD`, a tag or a time.
struct ConsoleHistory {
    let api: CloudKitAPI

    func answer(_ call: String, _ body: [String: JSONValue]) throws -> any ResponseBody {
        let caller = try Self.caller(body)
        let zone = try string(body, "zoneName")
        switch call {
        case "log":
            let limit = try int(body, "limit") ?? 50
            guard (1...500).contains(limit) else { throw CloudKitError.badRequest("limit is from 1 to 500, not \(limit)") }
            return try api.log(LogRequest(recordName: try optionalString(body, "recordName"), zoneName: zone,
                                          until: try optionalString(body, "until").map(api.historyReference), limit: limit, patch: true), as: caller)
        case "show":
            return try api.show(ShowRequest(try api.historyReference(try string(body, "ref")), zoneName: zone), as: caller)
        case "diff":
            return try api.diff(DiffRequest(from: try api.historyReference(try string(body, "from")),
                                            to: try optionalString(body, "to").map(api.historyReference), zoneName: zone), as: caller)
        case "blame":
            return try api.blame(BlameRequest(recordName: try string(body, "recordName"), zoneName: zone,
                                              at: try optionalString(body, "at").map(api.historyReference)), as: caller)
        case "tags":
            return try api.listTags(as: caller)
        case "restore", "revert":
            // A preview must never write, so the body says which it is; and a write is the plan
            // a preview showed, so it names the head that preview was made at.
            guard let dryRun = body["dryRun"]?.boolValue else { throw CloudKitError.badRequest("dryRun is true (a preview) or false (the write)") }
            let ifHead = try int(body, "ifHead").map(Int64.init)
            guard dryRun || ifHead != nil else {
                throw CloudKitError.badRequest("a \(call) is written after its preview: ifHead is the head the preview was made at")
            }
            let ref = try api.historyReference(try string(body, "ref"))
            let answer: HistoryWriteResponse
            if call == "revert" {
                answer = try api.revert(RevertRequest(ref, zoneName: zone, dryRun: dryRun, ifHead: ifHead), as: caller)
            } else {
                var names: [String] = []
                if let list = body["recordNames"], !list.isNull {
                    guard let items = list.arrayValue else { throw CloudKitError.badRequest("recordNames is a list of record names") }
                    names = try items.map { guard let s = $0.stringValue else { throw CloudKitError.badRequest("recordNames is a list of record names") }; return s }
                }
                answer = try api.restore(RestoreRequest(ref, zoneName: zone, recordNames: names, dryRun: dryRun, ifHead: ifHead), as: caller)
            }
            // The point the reference named, as ZONE@SEQ, for the confirmation to name exactly.
            return DocumentBody(["changes": .array(answer.items.map { $0.jsonValue }), "head": .int(answer.head),
                                 "ref": .string("\(zone)@\(answer.seq)")], listKey: "changes")
        default:
            throw CloudKitError(.notFound, "no such console history call '\(Names.describe(String(call.prefix(100))))' (log, show, diff, blame, tags, restore, revert)")
        }
    }

    /// The console's caller a body names: `{container, environment, database, as?}`.
    static func caller(_ body: [String: JSONValue]) throws -> Caller {
        let container = try Self.string(body, "container")
        try Names.validateContainerID(container)
        let env = try optionalString(body, "environment") ?? "development"
        guard let environment = Environment(rawValue: env) else { throw CloudKitError.badRequest("environment is development or production, not '\(Names.describe(env))'") }
        let db = try optionalString(body, "database") ?? "private"
        guard let scope = DatabaseScope(rawValue: db) else { throw CloudKitError.badRequest("database is public, private or shared, not '\(Names.describe(db))'") }
        return .console(container: container, environment: environment, scope: scope, appleID: try optionalString(body, "as"))
    }

    static func string(_ body: [String: JSONValue], _ key: String) throws -> String {
        guard let s = try optionalString(body, key) else { throw CloudKitError.badRequest("the console call needs \(key)") }
        return s
    }

    static func optionalString(_ body: [String: JSONValue], _ key: String) throws -> String? {
        guard let v = body[key], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw CloudKitError.badRequest("\(key) is a string") }
        return s
    }

    private func string(_ body: [String: JSONValue], _ key: String) throws -> String { try Self.string(body, key) }
    private func optionalString(_ body: [String: JSONValue], _ key: String) throws -> String? { try Self.optionalString(body, key) }

    private func int(_ body: [String: JSONValue], _ key: String) throws -> Int? {
        guard let v = body[key], !v.isNull else { return nil }
        guard let n = v.int64Value, let i = Int(exactly: n) else { throw CloudKitError.badRequest("\(key) is a whole number") }
        return i
    }
}
