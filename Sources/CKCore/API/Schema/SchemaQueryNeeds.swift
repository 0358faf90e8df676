import CKJSON
import CKModel
import CKStore

/// ck's `record query --explain`: the schema a query needs, without running it — whether the
/// caller's environment can answer it, and for each field it filters or sorts on the index it
/// needs, whether the schema has it, and the field's `.ckdb` line with every index the query
/// needs of it. Development refuses what production refuses, so this is the list to add
/// (`ck schema index add`) before the query runs anywhere.
extension CloudKitAPI {
    public func explainQuery(_ r: QueryRecordsRequest, as caller: Caller) throws -> DocumentBody {
        try Names.validateRecordType(r.query.recordType)
        let schema = try schemaAdmin(caller).store(caller.environment).load()
        let q = QueryIndexes(r.query, in: schema)
        var byField: [String: Set<IndexNeed.Index>] = [:]
        for n in q.needs { byField[n.field, default: []].insert(n.index) }
        let indexes: [JSONValue] = q.needs.map { n in
            var o: [String: JSONValue] = ["field": .string(n.field), "queryName": .string(n.queryName), "index": .string(n.index.rawValue),
                                          "present": .bool(n.present)]
            if let line = q.line(n.field, adding: byField[n.field] ?? []) { o["ckdb"] = .string(line) }
            if let why = n.impossible { o["impossible"] = .string(why) }
            if n.type == nil, q.type != nil { o["impossible"] = .string("record type '\(r.query.recordType)' has no such field") }
            return .object(o)
        }
        var doc: [String: JSONValue] = ["recordType": .string(r.query.recordType), "environment": .string(caller.environment.rawValue),
                                        "recordTypeExists": .bool(q.type != nil), "answerable": .bool(q.refusal == nil), "indexes": .array(indexes)]
        if let e = q.refusal { doc["refusal"] = .string(e.reason) }
        return DocumentBody(doc, listKey: "indexes")
    }
}
