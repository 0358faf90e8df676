import CKTestSupport
import XCTest

/// Zones and records through the command line: save semantics, batches, queries, references,
/// assets — each asserting stdout, stderr and exit code.
final class RecordFlowTests: XCTestCase {
    private func fields(_ r: CKResult) -> [String: [String: Any]] { r.record["fields"] as? [String: [String: Any]] ?? [:] }
    private func tag(_ r: CKResult) -> String { r.record["recordChangeTag"] as? String ?? "" }

    private func signedIn() -> CLISandbox {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
        return s
    }

    func testCreateUpdateConflictExistsForceAndReplace() {
        let s = signedIn()
        let created = s.ck("--zone", "Lists", "record", "save", "--type", "ToDoItem", "--name", "t", "title=a", "n=1")
        XCTAssertEqual(created.status, 0, created.stderr)
        XCTAssertEqual(created.stderr, "ck: defined field 'n' as INT64 in new record type 'ToDoItem'\nck: defined field 'title' as STRING in new record type 'ToDoItem'\n",
                       "the fields the save defined are announced (SPEC §4), and nothing else")
        let t1 = tag(created)
        s.assertUnchanged("EXISTS") {
            assertFailure(s.ck("--zone", "Lists", "record", "save", "--type", "ToDoItem", "--name", "t", "title=b"), exit: 4, contains: "EXISTS")
        }
        let updated = s.ck("--zone", "Lists", "record", "save", "--name", "t", "--tag", t1, "title=b")
        XCTAssertEqual(updated.status, 0, updated.stderr)
        XCTAssertNotEqual(tag(updated), t1, "every write gives a new change tag")
        XCTAssertEqual(fields(updated)["n"]?["value"] as? Int, 1, "update merges the fields")
        s.assertUnchanged("CONFLICT") {
            let stale = s.run(["--zone", "Lists", "record", "save", "--name", "t", "--tag", t1, "title=c", "--error-format", "json"])
            assertFailure(stale, exit: 4, contains: "\"serverErrorCode\":\"CONFLICT\"")
            XCTAssertTrue(stale.stderr.contains("\"serverRecord\""), "CONFLICT carries the server record: \(stale.stderr)")
            XCTAssertTrue(stale.stderr.contains("\"title\":{\"type\":\"STRING\",\"value\":\"b\"}"), stale.stderr)
        }
        let forced = s.ck("--zone", "Lists", "record", "save", "--name", "t", "--force", "title=d")
        XCTAssertEqual(fields(forced)["title"]?["value"] as? String, "d")
        let replaced = s.ck("--zone", "Lists", "record", "save", "--name", "t", "--force", "--replace", "other=1")
        XCTAssertNil(fields(replaced)["title"], "forceReplace drops the fields not given")
        XCTAssertEqual(fields(replaced)["other"]?["value"] as? Int, 1)
        assertFailure(s.ck("--zone", "Lists", "record", "save", "--name", "t", "--tag", "1", "--force", "x=1"), exit: 2, contains: "exclude")
        assertFailure(s.ck("--zone", "Lists", "record", "save", "--name", "t", "--replace", "x=1"), exit: 2, contains: "--replace needs")
    }

    func testEveryFieldTypeRoundTrips() throws {
        let s = signedIn()
        let file = s.root.appendingPathComponent("photo.bin")
        try Data("asset bytes\n".utf8).write(to: file)
        let r = s.ck("--zone", "Lists", "record", "save", "--type", "Kitchen", "--name", "k",
                     "s=text", "i=42", "d=2.5", "b=true", "ts:TIMESTAMP=2019-10-28T10:00:00Z", "by:BYTES=aGVsbG8=",
                     "ref:REFERENCE=other,NONE", "loc:LOCATION=37.33,-122.03", "asset:ASSET=@\(file.path)",
                     "sl:STRING_LIST=a,b", "il:INT64_LIST=[1,2]", "dl:DOUBLE_LIST=1.5,2", "tl:TIMESTAMP_LIST=2019-01-01,2020-01-01",
                     "ll:LOCATION_LIST=1,2;3,4", "rl:REFERENCE_LIST=a,b")
        XCTAssertEqual(r.status, 0, r.stderr)
        let f = fields(r)
        let types = f.mapValues { $0["type"] as? String ?? "" }
        XCTAssertEqual(types, ["s": "STRING", "i": "INT64", "d": "DOUBLE", "b": "INT64", "ts": "TIMESTAMP", "by": "BYTES",
                               "ref": "REFERENCE", "loc": "LOCATION", "asset": "ASSETID", "sl": "STRING_LIST", "il": "INT64_LIST",
                               "dl": "DOUBLE_LIST", "tl": "TIMESTAMP_LIST", "ll": "LOCATION_LIST", "rl": "REFERENCE_LIST"])
        XCTAssertEqual(f["ts"]?["value"] as? Int, 1_572_256_800_000)
        XCTAssertEqual(f["b"]?["value"] as? Int, 1)
        XCTAssertEqual((f["ref"]?["value"] as? [String: Any])?["action"] as? String, "NONE")
        let asset = s.ck("--zone", "Lists", "record", "get", "k", "--asset", "asset")
        XCTAssertEqual(asset.stdout, "asset bytes\n", "asset bytes come back")
        // A records/modify response carries no zoneID (as Apple's servers send it); a lookup's
        // record does. Fed back on stdin with its tag, it is an update in the zone it names.
        XCTAssertNil(r.record["zoneID"], "records/modify responses carry no zoneID: \(r.stdout)")
        XCTAssertEqual(r.record["pluginFields"] as? [String: Any] as NSDictionary?, [:] as NSDictionary, r.stdout)
        let looked = s.ck("--zone", "Lists", "record", "get", "k")
        XCTAssertEqual((looked.record["zoneID"] as? [String: Any])?["zoneName"] as? String, "Lists")
        XCTAssertEqual((looked.record["zoneID"] as? [String: Any])?["zoneType"] as? String, "REGULAR_CUSTOM_ZONE")
        let again = s.run(["record", "save", "--stdin"], stdin: looked.stdout)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(again.record["recordChangeTag"] as? String != looked.record["recordChangeTag"] as? String, true, "a new version")
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "get", "k"]).record["recordChangeTag"] as? String, again.record["recordChangeTag"] as? String,
                       "a stdin record's zoneID names its zone")
        assertFailure(s.run(["record", "save", "--stdin"], stdin: looked.stdout), exit: 4, contains: "CONFLICT")
        // cktool-style --fields-json.
        let ck = s.ck("--zone", "Lists", "record", "save", "--type", "Kitchen", "--name", "c", "--fields-json", "{\"n\":{\"type\":\"int64Type\",\"value\":7},\"t\":{\"type\":\"stringType\",\"value\":\"x\"}}")
        XCTAssertEqual(fields(ck)["n"]?["type"] as? String, "INT64", ck.stderr)
    }

    func testGetSeveralDeleteAndList() {
        let s = signedIn()
        for n in ["a", "b", "c"] { s.ck("--zone", "Lists", "record", "save", "--type", "T", "--name", n, "v=\(n)") }
        let several = s.ck("--zone", "Lists", "record", "get", "a", "nope", "c")
        XCTAssertEqual(several.status, 9)
        XCTAssertTrue(several.stderr.hasPrefix("ck: PARTIAL_FAILURE: 1 of 3 records failed"), several.stderr)
        let items = several.object["records"] as? [[String: Any]] ?? []
        XCTAssertEqual(items.map { ($0["recordName"] as? String) ?? "" }, ["a", "nope", "c"])
        XCTAssertEqual(items[1]["serverErrorCode"] as? String, "NOT_FOUND")
        assertFailure(s.ck("--zone", "Lists", "record", "get", "nope"), exit: 3, contains: "NOT_FOUND")
        let a = s.ck("--zone", "Lists", "record", "get", "a", "--fields", "v")
        XCTAssertEqual(Array(fields(a).keys), ["v"])
        s.assertUnchanged("stale delete") {
            assertFailure(s.ck("--zone", "Lists", "record", "delete", "a", "--tag", "zz"), exit: 4, contains: "CONFLICT")
        }
        let del = s.ck("--zone", "Lists", "record", "delete", "a")
        XCTAssertEqual(del.status, 0, del.stderr)
        XCTAssertEqual(del.record["deleted"] as? Bool, true)
        let list = s.ck("--zone", "Lists", "record", "list", "--format", "ndjson")
        XCTAssertEqual(list.stdout.split(separator: "\n").count, 2)
        assertFailure(s.ck("--zone", "Nope", "record", "list"), exit: 3, contains: "ZONE_NOT_FOUND")
    }

    func testModifyIsAtomicInCustomZonesAndLimitedTo200() {
        let s = signedIn()
        s.ck("--zone", "Lists", "record", "save", "--type", "T", "--name", "exists", "v=1")
        let body = """
        {"operations": [
          {"operationType": "create", "record": {"recordName": "new1", "recordType": "T", "fields": {"v": {"value": 1}}}},
          {"operationType": "create", "record": {"recordName": "exists", "recordType": "T", "fields": {}}}
        ]}
        """
        s.assertUnchanged("atomic failure") {
            let r = s.run(["--zone", "Lists", "record", "modify"], stdin: body)
            XCTAssertEqual(r.status, 9)
            let codes = (r.object["records"] as? [[String: Any]] ?? []).map { $0["serverErrorCode"] as? String ?? "ok" }
            XCTAssertEqual(codes, ["ATOMIC_ERROR", "EXISTS"])
        }
        // `atomic: true` said in a default zone is refused whole, with the reason Apple's
        // servers give (Tests/Fixtures/wire/error.response.modify-atomic-default-zone.json).
        s.assertUnchanged("atomic in the default zone") {
            let refused = s.run(["record", "modify", "--error-format", "json"], stdin: body.replacingOccurrences(of: "]}", with: "], \"atomic\": true}"))
            XCTAssertEqual(refused.status, 6, refused.stderr)
            XCTAssertEqual(refused.stdout, "")
            let env = (try? JSONSerialization.jsonObject(with: Data(refused.stderr.utf8))) as? [String: Any] ?? [:]
            XCTAssertEqual(env["serverErrorCode"] as? String, "BAD_REQUEST")
            XCTAssertEqual(env["reason"] as? String, "atomic operations not supported in default zone")
        }
        let nonAtomic = s.run(["record", "modify"], stdin: body)
        XCTAssertEqual(nonAtomic.status, 0, "without 'atomic' the default zone is not atomic, and 'exists' is not there: \(nonAtomic.stderr)")
        let ops = (0..<201).map { "{\"operationType\":\"create\",\"record\":{\"recordName\":\"r\($0)\",\"recordType\":\"T\"}}" }.joined(separator: ",")
        s.assertUnchanged("201 operations") {
            assertFailure(s.run(["--zone", "Lists", "record", "modify"], stdin: "{\"operations\":[\(ops)]}"), exit: 8,
                          contains: "Your request contains 201 items which is more than the maximum number of items in a single request (200)")
        }
        let ok = (0..<200).map { "{\"operationType\":\"create\",\"record\":{\"recordName\":\"r\($0)\",\"recordType\":\"T\"}}" }.joined(separator: ",")
        let r = s.run(["--zone", "Lists", "record", "modify", "--format", "ndjson"], stdin: "{\"operations\":[\(ok)]}")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout.split(separator: "\n").count, 200)
    }

    func testQueryComparatorsSortLimitAndContinuation() {
        let s = signedIn()
        for i in 0..<7 {
            s.ck("--zone", "Lists", "record", "save", "--type", "ToDoItem", "--name", "t\(i)", "title=Task \(i)", "priority=\(i)", "tags:STRING_LIST=home,t\(i % 2)")
        }
        // The sorted queries without a filter need "___recordID" QUERYABLE, as in CloudKit.
        XCTAssertEqual(s.ck("schema", "index", "add", "ToDoItem", "___recordID", "QUERYABLE").status, 0)
        XCTAssertEqual(names(s.ck("--zone", "Lists", "record", "query", "--type", "ToDoItem", "--filter", "priority >= 5", "--sort", "priority:desc")), ["t6", "t5"])
        XCTAssertEqual(names(s.ck("--zone", "Lists", "record", "query", "--type", "ToDoItem", "--filter", "tags LIST_CONTAINS t1", "--filter", "priority < 4", "--sort", "priority")), ["t1", "t3"])
        XCTAssertEqual(names(s.ck("--zone", "Lists", "record", "query", "--type", "ToDoItem", "--filter", "title = task 2")), ["t2"])
        XCTAssertEqual(names(s.ck("--zone", "Lists", "record", "query", "--type", "ToDoItem", "--filter", "priority IN 1,3", "--sort", "priority")), ["t1", "t3"])
        let p1 = s.ck("--zone", "Lists", "record", "query", "--type", "ToDoItem", "--sort", "priority", "--limit", "3")
        XCTAssertEqual(names(p1), ["t0", "t1", "t2"])
        let marker = p1.object["continuationMarker"] as? String ?? ""
        XCTAssertFalse(marker.isEmpty)
        let p2 = s.ck("--zone", "Lists", "record", "query", "--type", "ToDoItem", "--sort", "priority", "--limit", "3", "--continue", marker)
        XCTAssertEqual(names(p2), ["t3", "t4", "t5"])
        assertFailure(s.ck("--zone", "Lists", "record", "query", "--type", "ToDoItem", "--sort", "title", "--continue", marker), exit: 6, contains: "BAD_REQUEST")
        let body = "{\"query\":{\"recordType\":\"ToDoItem\",\"filterBy\":[{\"fieldName\":\"priority\",\"comparator\":\"EQUALS\",\"fieldValue\":{\"value\":4}}]},\"zoneID\":{\"zoneName\":\"Lists\"}}"
        XCTAssertEqual(names(s.run(["record", "query"], stdin: body)), ["t4"])
        assertFailure(s.ck("--zone", "Lists", "record", "query", "--type", "ToDoItem", "--filter", "priority ~ 3"), exit: 2, contains: "comparator")
    }

    func testReferencesCascadeAndValidate() {
        let s = signedIn()
        s.ck("--zone", "Lists", "record", "save", "--type", "List", "--name", "list")
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--type", "Item", "--name", "i1", "list:REFERENCE=list,DELETE_SELF").status, 0)
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--type", "Note", "--name", "n1", "about:REFERENCE=i1,VALIDATE").status, 0)
        s.assertUnchanged("validate") {
            assertFailure(s.ck("--zone", "Lists", "record", "save", "--type", "Note", "--name", "n2", "about:REFERENCE=ghost,VALIDATE"), exit: 6, contains: "VALIDATING_REFERENCE_ERROR")
            assertFailure(s.ck("--zone", "Lists", "record", "delete", "list"), exit: 6, contains: "validating reference")
        }
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "delete", "n1").status, 0)
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "delete", "list").status, 0)
        assertFailure(s.ck("--zone", "Lists", "record", "get", "i1"), exit: 3, contains: "NOT_FOUND")
    }

    func testZonesWhereCloudKitAllowsThem() {
        let s = signedIn()
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0, "creating an existing zone is harmless")
        let zones = (s.ck("zone", "list").object["zones"] as? [[String: Any]] ?? []).compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        XCTAssertEqual(zones, ["_defaultZone", "Lists"])
        s.assertUnchanged("refusals") {
            assertFailure(s.ck("--db", "public", "zone", "create", "Z"), exit: 6, contains: "public database")
            assertFailure(s.ck("--db", "shared", "zone", "create", "Z"), exit: 6, contains: "shared database")
            assertFailure(s.ck("zone", "delete", "_defaultZone"), exit: 6, contains: "default zone cannot be deleted")
            assertFailure(s.ck("zone", "delete", "Nope"), exit: 3, contains: "ZONE_NOT_FOUND")
            assertFailure(s.ck("--db", "shared", "record", "list"), exit: 3, contains: "no default zone")
        }
        s.ck("--zone", "Lists", "record", "save", "--type", "T", "--name", "x")
        XCTAssertEqual(s.ck("zone", "delete", "Lists").status, 0)
        assertFailure(s.ck("--zone", "Lists", "record", "get", "x"), exit: 3, contains: "ZONE_NOT_FOUND")
    }

    /// `--no-parent` takes a record's parent away; an update without it keeps the parent, and
    /// `--parent X --no-parent` is a usage error that changes nothing.
    func testNoParentClearsARecordsParent() {
        let s = signedIn()
        func parent(_ name: String) -> String? {
            let r = s.ck("--zone", "Lists", "record", "get", name)
            return (((r.object["records"] as? [[String: Any]])?.first)?["parent"] as? [String: Any])?["recordName"] as? String
        }
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--type", "List", "--name", "groceries").status, 0)
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--type", "Item", "--name", "milk", "--parent", "groceries", "title=Milk").status, 0)
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--name", "milk", "--force", "title=Oat milk").status, 0)
        XCTAssertEqual(parent("milk"), "groceries", "an update keeps the parent")
        s.assertUnchanged("--parent with --no-parent") {
            assertFailure(s.ck("--zone", "Lists", "record", "save", "--name", "milk", "--force", "--parent", "groceries", "--no-parent"), exit: 2,
                          contains: "--parent and --no-parent exclude each other")
        }
        let cleared = s.ck("--zone", "Lists", "record", "save", "--name", "milk", "--force", "--no-parent")
        XCTAssertEqual(cleared.status, 0, cleared.stderr)
        XCTAssertNil(((cleared.object["records"] as? [[String: Any]])?.first)?["parent"], cleared.stdout)
        XCTAssertNil(parent("milk"))
        XCTAssertEqual(((s.ck("--zone", "Lists", "record", "get", "milk").object["records"] as? [[String: Any]])?.first?["fields"] as? [String: Any])?.keys.sorted(), ["title"],
                       "the fields are kept")
        // With a tag too; and a record on stdin whose parent is null.
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--name", "milk", "--force", "--parent", "groceries").status, 0)
        let tag = ((s.ck("--zone", "Lists", "record", "get", "milk").object["records"] as? [[String: Any]])?.first)?["recordChangeTag"] as? String ?? ""
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--name", "milk", "--tag", tag, "--no-parent").status, 0)
        XCTAssertNil(parent("milk"))
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--name", "milk", "--force", "--parent", "groceries").status, 0)
        let stdin = s.run(["--zone", "Lists", "record", "save", "--force"], stdin: #"{"recordName": "milk", "parent": null}"#)
        XCTAssertEqual(stdin.status, 0, stdin.stderr)
        XCTAssertNil(parent("milk"))
        XCTAssertTrue(s.ck("record", "save", "--help").stdout.contains("--no-parent"))
    }

    /// zones/modify and subscriptions/modify attempt every operation: with several names, one
    /// that fails is an error item, the others are done, exit 9; with one, its own exit.
    func testSeveralZonesOrSubscriptionsEachAttempted() {
        let s = signedIn()
        XCTAssertEqual(s.ck("zone", "create", "A", "B").status, 0)
        let mixed = s.ck("zone", "delete", "A", "Nope", "B")
        XCTAssertEqual(mixed.status, 9, mixed.stderr)
        XCTAssertTrue(mixed.stderr.contains("PARTIAL_FAILURE: 1 of 3 zones failed (first: ZONE_NOT_FOUND"), mixed.stderr)
        let items = mixed.object["zones"] as? [[String: Any]] ?? []
        guard items.count == 3 else { return XCTFail(mixed.stdout) }
        XCTAssertEqual(items[0]["deleted"] as? Bool, true)
        XCTAssertEqual(items[1]["serverErrorCode"] as? String, "ZONE_NOT_FOUND")
        XCTAssertEqual((items[1]["zoneID"] as? [String: Any])?["zoneName"] as? String, "Nope")
        XCTAssertEqual(items[2]["deleted"] as? Bool, true)
        let zones = (s.ck("zone", "list").object["zones"] as? [[String: Any]] ?? []).compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        XCTAssertEqual(zones, ["_defaultZone", "Lists"])
        let made = s.ck("zone", "create", "C", "")
        XCTAssertEqual(made.status, 9, made.stderr)
        XCTAssertEqual((made.object["zones"] as? [[String: Any]])?.last?["serverErrorCode"] as? String, "BAD_REQUEST")

        XCTAssertEqual(s.ck("subscribe").status, 0)
        XCTAssertEqual(s.ck("--zone", "C", "subscribe", "zone").status, 0)
        assertFailure(s.ck("--zone", "Nope", "subscribe", "zone"), exit: 3, contains: "ZONE_NOT_FOUND")
        let unsubscribed = s.ck("subscription", "delete", "database", "nope", "zone-C")
        XCTAssertEqual(unsubscribed.status, 9, unsubscribed.stderr)
        let subs = unsubscribed.object["subscriptions"] as? [[String: Any]] ?? []
        XCTAssertEqual(subs.map { $0["serverErrorCode"] as? String }, [nil, "NOT_FOUND", nil])
        XCTAssertEqual(subs.dropFirst().first?["subscriptionID"] as? String, "nope")
        XCTAssertEqual((s.ck("subscription", "list").object["subscriptions"] as? [Any])?.count, 0)
        assertFailure(s.ck("subscription", "delete", "nope"), exit: 3, contains: "NOT_FOUND")
    }

    /// Record names as CloudKit takes them: '/', '+' and dots are ordinary; one that starts
    /// with '-' is reachable with --name (get, delete, save) and a negative number as it is.
    func testNamesWithSlashesAndLeadingDashes() {
        let s = signedIn()
        for name in ["2/2/4dca04a3", "AePrcOf/CTl//CIzZ6wpFz0/G4b+", "----Root-Folder----", "-5", "..", "a.b"] {
            let saved = s.run(["--zone", "Lists", "record", "save", "--type", "T", "--name", name, "v=1"])
            XCTAssertEqual(saved.status, 0, "\(name): \(saved.stderr)")
            let got = s.run(["--zone", "Lists", "record", "get", "--name", name])
            XCTAssertEqual(got.record["recordName"] as? String, name, got.stderr)
        }
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "get", "-5", "a.b"]).status, 0, "a negative number is a name")
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "get", "--", "----Root-Folder----"]).status, 0)
        let names = (s.ck("--zone", "Lists", "record", "get", "a.b", "--name", "-5").object["records"] as? [[String: Any]] ?? []).map { $0["recordName"] as? String }
        XCTAssertEqual(names, ["a.b", "-5"], "positionals, then each --name")
        s.assertUnchanged("a dash name without --name") {
            let r = s.run(["--zone", "Lists", "record", "get", "----Root-Folder----"])
            assertFailure(r, exit: 2, contains: "--name '----Root-Folder----'")
        }
        let del = s.run(["--zone", "Lists", "record", "delete", "--name", "----Root-Folder----"])
        XCTAssertEqual(del.status, 0, del.stderr)
        XCTAssertEqual(del.record["recordName"] as? String, "----Root-Folder----")
        let both = s.run(["--zone", "Lists", "record", "delete", "a.b", "--name", "-5"])
        XCTAssertEqual(both.status, 0, both.stderr)
        XCTAssertEqual((both.object["records"] as? [[String: Any]] ?? []).map { $0["recordName"] as? String }, ["a.b", "-5"], "positionals, then each --name")
    }
}
