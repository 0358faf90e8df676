import CKTestSupport
import Foundation
import XCTest

/// The isolation matrix: no read path shows a record to a user who may not read it.
///
/// The public database holds one record per (record type, creator) for a type of every kind of
/// READ grant — the defaults of a type made just in time, `_world`, `_icloud`, `_creator`, a
/// custom role, write-without-read, and no GRANT at all — each with a field value (its payload)
/// that appears nowhere else. Every reader (the device's own account, `--as`, `CK_USER`; every
/// account status) then goes through every read path — `record get` (one name, several names,
/// `--asset`), `record list`, `record query`, `export`, query-subscription notifications, the
/// error dictionaries of EXISTS and CONFLICT and the response of a write — and must see exactly
/// the records the GRANTs let it read, and never the payload of any other. A record it may not
/// read does not exist for it: NOT_FOUND (exit 3) on `get`, in the words a record that never
/// existed gets (Docs/schema.md), and left out everywhere else.
/// Private databases belong to their user: nothing of alice's ever reaches bob.
final class IsolationTests: XCTestCase {
    static let alice = "alice@example.com", bob = "bob@example.com", carol = "carol@example.com"
    static let creators = [alice, bob]

    /// One type per kind of READ grant. `Note` is made just in time (default GRANTs), `Locked`
    /// is made just in time and then imported without any GRANT.
    static let types = ["Note", "Open", "Members", "Mine", "Secret", "Drop", "Locked"]

    /// With the indexes the read paths' queries need (all types but the just-in-time `Note`,
    /// which `makeWorld` indexes).
    static let schema = """
    DEFINE SCHEMA
        CREATE ROLE Reader;
        RECORD TYPE Open ("___recordID" REFERENCE QUERYABLE, t STRING QUERYABLE, GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world");
        RECORD TYPE Members ("___recordID" REFERENCE QUERYABLE, t STRING QUERYABLE, GRANT WRITE TO "_creator", GRANT CREATE, READ TO "_icloud");
        RECORD TYPE Mine ("___recordID" REFERENCE QUERYABLE, t STRING QUERYABLE, f ASSET, GRANT READ, WRITE TO "_creator", GRANT CREATE TO "_icloud");
        RECORD TYPE Secret ("___recordID" REFERENCE QUERYABLE, t STRING QUERYABLE, GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO Reader);
        RECORD TYPE Drop ("___recordID" REFERENCE QUERYABLE, t STRING QUERYABLE, u STRING, GRANT READ TO "_creator", GRANT CREATE, WRITE TO "_icloud");
        RECORD TYPE Locked ("___recordID" REFERENCE QUERYABLE, t STRING QUERYABLE);
    """

    /// Whether `reader` (nil: nobody signed in, or the device's account is not available) may
    /// read a record of `type` created by `creator`, with `roleHolders` holding the Reader role.
    static func mayRead(_ reader: String?, _ type: String, _ creator: String, roleHolders: Set<String> = [carol]) -> Bool {
        switch type {
        case "Note", "Open": return true
        case "Members": return reader != nil
        case "Mine", "Drop": return reader == creator
        case "Secret": return reader.map(roleHolders.contains) ?? false
        case "Locked": return false
        default: fatalError("unknown type \(type)")
        }
    }

    struct Item: Hashable, CustomStringConvertible {
        let type: String
        let creator: String
        var short: String { String(creator.prefix { $0 != "@" }) }
        var name: String { "\(type)-\(short)" }
        /// The field value only this record holds; it must never reach a reader who may not read it.
        var payload: String { "payload:\(type)/\(short)" }
        var description: String { name }
    }

    static let items: [Item] = types.flatMap { t in creators.map { Item(type: t, creator: $0) } }

    /// Who runs a command: the device's account, `--as`, or `CK_USER`.
    struct Actor: CustomStringConvertible {
        let description: String
        let prefix: [String]
        let env: [String: String]
        static let device = Actor(description: "device", prefix: [], env: [:])
        static func flag(_ id: String) -> Actor { Actor(description: "--as \(id)", prefix: ["--as", id], env: [:]) }
        static func env(_ id: String) -> Actor { Actor(description: "CK_USER=\(id)", prefix: [], env: ["CK_USER": id]) }
    }

    /// Runs `ck` as `a`.
    @discardableResult
    func run(_ s: CLISandbox, _ a: Actor, _ args: [String], stdin: String? = nil, env: [String: String] = [:]) -> CKResult {
        s.run(a.prefix + args, stdin: stdin, env: a.env.merging(env) { _, new in new })
    }

    @discardableResult
    func ck(_ s: CLISandbox, _ args: String...) -> CKResult { run(s, .device, args) }

    func signIn(_ s: CLISandbox, _ appleID: String, file: StaticString = #filePath, line: UInt = #line) {
        let r = ck(s, "account", "signin", appleID)
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
    }

    /// How many items the list under `key` of a command's JSON output holds (nil: no such list).
    func count(_ r: CKResult, _ key: String) -> Int? { (r.object[key] as? [Any])?.count }

    // MARK: fixture

    /// alice, bob and carol have signed in (the device is alice's); carol holds Reader; alice
    /// and bob each created one public record of every type.
    func makeWorld(file: StaticString = #filePath, line: UInt = #line) throws -> CLISandbox {
        let s = CLISandbox()
        for u in [Self.carol, Self.bob, Self.alice] { signIn(s, u) }
        for c in Self.creators { save(s, Item(type: "Locked", creator: c), file: file, line: line) }
        let f = s.root.appendingPathComponent("isolation.ckdb")
        try Self.schema.write(to: f, atomically: true, encoding: .utf8)
        let imported = ck(s, "schema", "import", f.path)
        XCTAssertEqual(imported.status, 0, imported.stderr, file: file, line: line)
        XCTAssertEqual(ck(s, "role", "assign", "Reader", Self.carol).status, 0, file: file, line: line)
        for item in Self.items where item.type != "Locked" { save(s, item, file: file, line: line) }
        XCTAssertEqual(ck(s, "schema", "index", "add", "Note", "___recordID", "QUERYABLE").status, 0, file: file, line: line)
        let export = ck(s, "schema", "export").stdout
        XCTAssertTrue(export.contains("RECORD TYPE Note"), "Note was made just in time", file: file, line: line)
        XCTAssertTrue(export.contains("GRANT READ TO Reader"), export, file: file, line: line)
        return s
    }

    func save(_ s: CLISandbox, _ item: Item, file: StaticString = #filePath, line: UInt = #line) {
        let r = run(s, .flag(item.creator), ["--db", "public", "record", "save", "--type", item.type, "--name", item.name, "t:STRING=" + item.payload])
        XCTAssertEqual(r.status, 0, "\(item): \(r.stderr)", file: file, line: line)
    }

    // MARK: helpers

    /// A field's value in a record, or in the one record of a records/lookup or records/modify
    /// response.
    func fieldValue(_ record: Any?, _ field: String = "t") -> String? {
        var r = record as? [String: Any]
        if let list = r?["records"] as? [[String: Any]], list.count == 1 { r = list[0] }
        return ((r?["fields"] as? [String: Any])?[field] as? [String: Any])?["value"] as? String
    }

    func parseLine(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
        guard let o = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            XCTFail("not one JSON object: \(text)", file: file, line: line)
            return [:]
        }
        return o
    }

    /// What `record get` says of a record that is not there — or that the caller may not read.
    func notFoundLine(_ name: String) -> String { "ck: NOT_FOUND: record '\(name)' not found in zone _defaultZone of the public database\n" }

    /// Runs every public read path as `a` and checks it shows exactly what `reader` may read
    /// (nil: as nobody) and never the payload of anything else.
    func assertIsolation(_ s: CLISandbox, _ a: Actor, readsAs reader: String?, roleHolders: Set<String> = [carol],
                         export: Bool = true, file: StaticString = #filePath, line: UInt = #line) {
        let visible = Self.items.filter { Self.mayRead(reader, $0.type, $0.creator, roleHolders: roleHolders) }
        let hidden = Self.items.filter { !visible.contains($0) }
        XCTAssertFalse(hidden.isEmpty, "the matrix always hides something (Locked)", file: file, line: line)
        XCTAssertFalse(visible.isEmpty, "the matrix always shows something (Open)", file: file, line: line)
        func noLeak(_ r: CKResult, _ what: String) {
            for h in hidden where (r.stdout + r.stderr).contains(h.payload) {
                XCTFail("\(a) \(what) leaks \(h) (\(h.payload))", file: file, line: line)
            }
        }
        func expect(_ r: CKResult, _ what: String, _ want: [Item]) {
            XCTAssertEqual(r.status, 0, "\(a) \(what): \(r.stderr)", file: file, line: line)
            // A stream of no record prints nothing at all.
            XCTAssertEqual(r.stdout.isEmpty ? [] : Set(names(r)), Set(want.map(\.name)), "\(a) \(what)", file: file, line: line)
            for v in want { XCTAssertTrue(r.stdout.contains(v.payload), "\(a) \(what) shows \(v) whole", file: file, line: line) }
            noLeak(r, what)
        }

        expect(run(s, a, ["--db", "public", "record", "list", "--format", "ndjson"]), "record list", visible)
        for t in Self.types {
            let q = run(s, a, ["--db", "public", "record", "query", "--type", t, "--format", "ndjson"])
            expect(q, "record query --type \(t)", visible.filter { $0.type == t })
            let filtered = run(s, a, ["--db", "public", "record", "query", "--type", t, "--filter", "t BEGINS_WITH payload:", "--format", "ndjson"])
            expect(filtered, "record query --type \(t) --filter", visible.filter { $0.type == t })
        }
        if export { expect(run(s, a, ["--db", "public", "export"]), "export", visible) }

        for item in Self.items {
            let g = run(s, a, ["--db", "public", "record", "get", item.name])
            if visible.contains(item) {
                XCTAssertEqual(g.status, 0, "\(a) get \(item): \(g.stderr)", file: file, line: line)
                XCTAssertEqual(fieldValue(g.json(file: file, line: line)), item.payload, "\(a) get \(item)", file: file, line: line)
            } else {
                assertFailure(g, exit: 3, file: file, line: line)
                XCTAssertEqual(g.stderr, notFoundLine(item.name), "\(a) get \(item)", file: file, line: line)
                // The same answer as for a record that never was: nothing tells them apart.
                let ghost = run(s, a, ["--db", "public", "record", "get", "Ghost-" + item.name])
                XCTAssertEqual(ghost.status, g.status, file: file, line: line)
                XCTAssertEqual(ghost.stderr, notFoundLine("Ghost-" + item.name), file: file, line: line)
            }
            noLeak(g, "record get \(item)")
        }

        let batch = run(s, a, ["--db", "public", "--error-format", "json", "record", "get"] + Self.items.map(\.name))
        XCTAssertEqual(batch.status, 9, "\(a) batch get: some item is always denied", file: file, line: line)
        let results = batch.object["records"] as? [[String: Any]] ?? []
        XCTAssertEqual(results.count, Self.items.count, "\(a) batch get: one result per name", file: file, line: line)
        for (item, result) in zip(Self.items, results) {
            XCTAssertEqual(result["recordName"] as? String, item.name, file: file, line: line)
            if visible.contains(item) {
                XCTAssertEqual(fieldValue(result), item.payload, "\(a) batch get \(item)", file: file, line: line)
            } else {
                XCTAssertEqual(result["serverErrorCode"] as? String, "NOT_FOUND", "\(a) batch get \(item)", file: file, line: line)
                XCTAssertNil(result["fields"], "\(a) batch get \(item)", file: file, line: line)
                XCTAssertNil(result["serverRecord"], "\(a) batch get \(item)", file: file, line: line)
            }
        }
        noLeak(batch, "batch record get")
    }

    // MARK: the matrix

    /// Signed in and available: each GRANT admits exactly its readers, whoever is acting and
    /// however (the device's account, `--as`, `CK_USER`).
    func testEveryGrantDecidesWhatEachUserReadsOnEveryReadPath() throws {
        let s = try makeWorld()
        assertIsolation(s, .device, readsAs: Self.alice)
        assertIsolation(s, .flag(Self.alice), readsAs: Self.alice)
        assertIsolation(s, .flag(Self.bob), readsAs: Self.bob)
        assertIsolation(s, .env(Self.bob), readsAs: Self.bob)
        assertIsolation(s, .flag(Self.carol), readsAs: Self.carol)
        assertIsolation(s, .env(Self.carol), readsAs: Self.carol)

        // --as and CK_USER are one thing: the same bytes.
        let list = ["--db", "public", "record", "list"]
        XCTAssertEqual(run(s, .flag(Self.bob), list).stdout, run(s, .env(Self.bob), list).stdout)
        // --as wins over CK_USER, as a flag wins over its environment variable.
        let both = run(s, .flag(Self.bob), ["--db", "public", "record", "get", "Mine-bob"], env: ["CK_USER": Self.alice])
        XCTAssertEqual(fieldValue(both.json()), "payload:Mine/bob", both.stderr)

        // Pages are cut from what the reader may read: no page, and no continuation marker,
        // hints at a record it may not.
        let page = run(s, .env(Self.bob), ["--db", "public", "record", "query", "--type", "Drop", "--limit", "1"])
        XCTAssertEqual((page.object["records"] as? [Any])?.map { fieldValue($0) }, ["payload:Drop/bob"], page.stdout)
        XCTAssertNil(page.object["continuationMarker"], page.stdout)

        // A role is read access only while held.
        XCTAssertEqual(ck(s, "role", "remove", "Reader", Self.carol).status, 0)
        assertIsolation(s, .flag(Self.carol), readsAs: Self.carol, roleHolders: [])
        XCTAssertEqual(ck(s, "role", "assign", "Reader", Self.bob).status, 0)
        assertIsolation(s, .env(Self.bob), readsAs: Self.bob, roleHolders: [Self.bob])
    }

    /// Without an available account nobody is signed in, whoever acts: every status, for the
    /// device's own account, `--as` and `CK_USER` alike, reads only what `_world` may (so an
    /// `_icloud`, `_creator` or role GRANT is denied exactly as on a signed-out device), and
    /// private reads, notifications and every write fail with AUTHENTICATION_REQUIRED.
    func testWithoutAnAvailableAccountEveryActorReadsOnlyWorldRecords() throws {
        let s = try makeWorld()
        XCTAssertEqual(ck(s, "record", "save", "--type", "Diary", "--name", "diary", "t:STRING=payload:diary").status, 0)
        let words = ["restricted": "iCloud access is restricted on this device", "couldNotDetermine": "could not be determined",
                     "temporarilyUnavailable": "temporarily unavailable", "noAccount": "no iCloud account"]
        for status in ["restricted", "couldNotDetermine", "temporarilyUnavailable", "noAccount"] {
            if status == "noAccount" {
                XCTAssertEqual(ck(s, "account", "signout").status, 0)
            } else {
                signIn(s, Self.alice)
                XCTAssertEqual(ck(s, "account", "set-status", status).object["status"] as? String, status)
            }
            for a in [Actor.device, .flag(Self.alice), .flag(Self.bob), .env(Self.carol), .env(Self.alice)] {
                assertIsolation(s, a, readsAs: nil, export: false)
                s.assertUnchanged("\(status) \(a)") {
                    for args in [["record", "get", "diary"], ["record", "list"], ["record", "query", "--type", "Diary"], ["export"],
                                 ["--db", "public", "notifications"],
                                 ["--db", "public", "record", "save", "--type", "Open", "--name", "new", "t=x"],
                                 ["--db", "public", "record", "save", "--name", "Open-alice", "--force", "t=x"],
                                 ["--db", "public", "record", "delete", "Open-alice"],
                                 ["record", "save", "--type", "Diary", "--name", "diary2", "t=x"]] {
                        let r = run(s, a, args)
                        assertFailure(r, exit: 5, contains: "AUTHENTICATION_REQUIRED")
                        XCTAssertTrue(r.stderr.contains(words[status]!), "\(status) \(a) \(args): \(r.stderr)")
                        XCTAssertFalse(r.stderr.contains("payload:"), "\(status) \(a) \(args): \(r.stderr)")
                    }
                }
            }
        }
        // And back: the same actors read what they read before.
        signIn(s, Self.alice)
        assertIsolation(s, .flag(Self.bob), readsAs: Self.bob)
        XCTAssertEqual(fieldValue(ck(s, "record", "get", "diary").json()), "payload:diary")
    }

    /// `ck export` obeys the device's status as `get`, `list` and `query` do: on a device without
    /// an available account, its own account, `--as` and `CK_USER` export only what `_world` may
    /// read. (Export filters with `Database.canRead`, which must use `SchemaRules.reader`.)
    func testExportWithoutAnAvailableAccountShowsOnlyWorldReadableRecords() throws {
        let s = try makeWorld()
        let world = Set(Self.items.filter { Self.mayRead(nil, $0.type, $0.creator) }.map(\.name))
        for status in ["restricted", "noAccount"] {
            if status == "noAccount" { ck(s, "account", "signout") } else { XCTAssertEqual(ck(s, "account", "set-status", status).status, 0) }
            for a in [Actor.device, .flag(Self.alice), .env(Self.bob), .flag(Self.carol)] {
                let r = run(s, a, ["--db", "public", "export"])
                XCTAssertEqual(r.status, 0, r.stderr)
                XCTAssertEqual(Set(names(r)), world, "\(status) \(a) export shows records only a signed-in user may read")
            }
        }
    }

    // MARK: notifications

    /// A query subscription notifies its subscriber only of records the subscriber may read:
    /// creations, updates (also one the subscriber made, on another device, of a record it may
    /// not read) and deletions; a role counts while it is held.
    func testQueryNotificationsNameOnlyRecordsTheSubscriberMayRead() throws {
        let s = CLISandbox()
        for u in [Self.carol, Self.bob, Self.alice] { signIn(s, u) }
        let f = s.root.appendingPathComponent("isolation.ckdb")
        try Self.schema.write(to: f, atomically: true, encoding: .utf8)
        XCTAssertEqual(ck(s, "schema", "import", f.path).status, 0)
        XCTAssertEqual(ck(s, "role", "assign", "Reader", Self.carol).status, 0)
        let subscribers = [Self.alice, Self.bob, Self.carol]
        let watched = Self.types.filter { $0 != "Locked" }
        for u in subscribers {
            for t in watched {
                let r = run(s, .flag(u), ["--db", "public", "--device", "phone", "subscribe", "query", "--type", t, "--id", "q-\(t)",
                                          "--fires-on", "create,update,delete"])
                XCTAssertEqual(r.status, 0, "\(u) subscribes to \(t): \(r.stderr)")
            }
        }
        struct Event: Hashable { let item: Item; let reason: String }
        var events: [Event] = []
        for item in Self.items where item.type != "Locked" {
            save(s, item)
            events.append(Event(item: item, reason: "recordCreated"))
        }
        func change(_ who: String, _ args: [String], _ item: Item, _ reason: String) {
            let r = run(s, .flag(who), ["--db", "public"] + args)
            XCTAssertEqual(r.status, 0, "\(who) \(args): \(r.stderr)")
            events.append(Event(item: item, reason: reason))
        }
        for t in ["Mine", "Members", "Secret", "Open"] {
            change(Self.alice, ["record", "save", "--name", "\(t)-alice", "--force", "t:STRING=payload:\(t)/alice"], Item(type: t, creator: Self.alice), "recordUpdated")
        }
        // carol may write Drop records (WRITE "_icloud") but not read bob's.
        change(Self.carol, ["record", "save", "--name", "Drop-bob", "--force", "u=carol"], Item(type: "Drop", creator: Self.bob), "recordUpdated")
        change(Self.bob, ["record", "delete", "Mine-bob"], Item(type: "Mine", creator: Self.bob), "recordDeleted")
        change(Self.bob, ["record", "delete", "Open-bob"], Item(type: "Open", creator: Self.bob), "recordDeleted")
        change(Self.bob, ["record", "delete", "Secret-bob"], Item(type: "Secret", creator: Self.bob), "recordDeleted")

        func inbox(_ u: String, _ a: Actor) -> [[String: Any]] {
            let r = run(s, a, ["--db", "public", "--device", "phone", "notifications", "--format", "ndjson"])
            XCTAssertEqual(r.status, 0, "\(u): \(r.stderr)")
            XCTAssertFalse(r.stdout.contains("payload:"), "a notification carries no field")
            return r.stdout.split(separator: "\n").map { parseLine(String($0)) }
        }
        for (u, a) in [(Self.alice, Actor.device), (Self.bob, .flag(Self.bob)), (Self.carol, .env(Self.carol))] {
            let notes = inbox(u, a)
            let got = notes.map { "\($0["subscriptionID"] as? String ?? "?") \($0["recordName"] as? String ?? "?") \($0["queryNotificationReason"] as? String ?? "?")" }
            let want = events.filter { Self.mayRead(u, $0.item.type, $0.item.creator) }
                .map { "q-\($0.item.type) \($0.item.name) \($0.reason)" }
            XCTAssertEqual(got.sorted(), want.sorted(), "notifications of \(u)")
            XCTAssertTrue(notes.allSatisfy { $0["notificationType"] as? String == "query" })
        }
        // Sanity: each subscriber was denied something, so the comparison above can fail.
        for u in subscribers { XCTAssertTrue(events.contains { !Self.mayRead(u, $0.item.type, $0.item.creator) }) }

        // A role that is taken away stops the notifications; one that is given starts them.
        for u in subscribers { XCTAssertEqual(run(s, .flag(u), ["--db", "public", "--device", "phone", "notifications", "--mark-read"]).status, 0) }
        XCTAssertEqual(ck(s, "role", "remove", "Reader", Self.carol).status, 0)
        XCTAssertEqual(ck(s, "role", "assign", "Reader", Self.bob).status, 0)
        change(Self.alice, ["record", "save", "--name", "Secret-alice", "--force", "t=again"], Item(type: "Secret", creator: Self.alice), "recordUpdated")
        XCTAssertEqual(inbox(Self.carol, .flag(Self.carol)).count, 0, "carol no longer holds Reader")
        XCTAssertEqual(inbox(Self.alice, .device).count, 0, "alice created it but never held Reader")
        let bobs = inbox(Self.bob, .env(Self.bob))
        XCTAssertEqual(bobs.count, 1)
        XCTAssertEqual(bobs.first?["recordName"] as? String, "Secret-alice")

        // Without an available account there is no inbox to read, whoever acts.
        XCTAssertEqual(ck(s, "account", "set-status", "restricted").status, 0)
        for a in [Actor.device, .flag(Self.bob), .env(Self.carol)] {
            assertFailure(run(s, a, ["--db", "public", "--device", "phone", "notifications"]), exit: 5, contains: "AUTHENTICATION_REQUIRED")
        }
    }

    // MARK: errors and write responses

    /// EXISTS and CONFLICT carry `serverRecord` only to a caller who may read it; a refused
    /// write and a write-only user's successful write show nothing of the stored fields.
    func testErrorDictionariesAndWriteResponsesCarryOnlyReadableRecords() throws {
        let s = try makeWorld()
        // EXISTS, one record per GRANT, for every prober, from `record save` and `record modify`.
        for prober in [Self.alice, Self.bob, Self.carol] {
            for item in Self.items {
                let readable = Self.mayRead(prober, item.type, item.creator)
                let r = run(s, .flag(prober), ["--db", "public", "--error-format", "json", "record", "save", "--type", item.type,
                                               "--name", item.name, "t=probe"])
                assertFailure(r, exit: 4)
                let e = parseLine(r.stderr)
                XCTAssertEqual(e["serverErrorCode"] as? String, "EXISTS", "\(prober) \(item)")
                XCTAssertEqual(e["recordName"] as? String, item.name)
                if readable {
                    XCTAssertEqual(fieldValue(e["serverRecord"]), item.payload, "\(prober) may read \(item)")
                } else {
                    XCTAssertNil(e["serverRecord"], "\(prober) may not read \(item)")
                    XCTAssertFalse(r.stderr.contains(item.payload), "\(prober) \(item)")
                }
            }
            let ops = Self.items.map { #"{"operationType":"create","record":{"recordName":"\#($0.name)","recordType":"\#($0.type)","fields":{"t":{"value":"probe"}}}}"# }
            let m = run(s, .flag(prober), ["--db", "public", "record", "modify"], stdin: #"{"operations":[\#(ops.joined(separator: ","))]}"#)
            XCTAssertEqual(m.status, 9, m.stderr)
            let results = m.object["records"] as? [[String: Any]] ?? []
            XCTAssertEqual(results.count, Self.items.count)
            for (item, res) in zip(Self.items, results) {
                XCTAssertEqual(res["serverErrorCode"] as? String, "EXISTS")
                if Self.mayRead(prober, item.type, item.creator) {
                    XCTAssertEqual(fieldValue(res["serverRecord"]), item.payload, "modify: \(prober) may read \(item)")
                } else {
                    XCTAssertNil(res["serverRecord"], "modify: \(prober) may not read \(item)")
                }
            }
            for item in Self.items where !Self.mayRead(prober, item.type, item.creator) {
                XCTAssertFalse(m.stdout.contains(item.payload), "modify: \(prober) sees \(item)")
            }
        }
        // In text form an EXISTS error names the record and nothing more.
        let text = run(s, .flag(Self.bob), ["--db", "public", "record", "save", "--type", "Mine", "--name", "Mine-alice", "t=probe"])
        assertFailure(text, exit: 4)
        XCTAssertEqual(text.stderr, "ck: EXISTS: record to insert already exists: 'Mine-alice'\n")

        // CONFLICT: Drop lets every signed-in user write, but only the creator read.
        s.assertUnchanged("conflicts") {
            for prober in [Self.alice, Self.bob, Self.carol] {
                let r = run(s, .flag(prober), ["--db", "public", "--error-format", "json", "record", "save", "--name", "Drop-alice",
                                               "--tag", "zzz", "u=probe"])
                assertFailure(r, exit: 4)
                let e = parseLine(r.stderr)
                XCTAssertEqual(e["serverErrorCode"] as? String, "CONFLICT", "\(prober)")
                if prober == Self.alice {
                    XCTAssertEqual(fieldValue(e["serverRecord"]), "payload:Drop/alice")
                } else {
                    XCTAssertNil(e["serverRecord"], "\(prober) may write Drop-alice but not read it")
                    XCTAssertFalse(r.stderr.contains("payload:"), r.stderr)
                }
                let batch = run(s, .flag(prober), ["--db", "public", "record", "modify"], stdin:
                    #"{"operations":[{"operationType":"update","record":{"recordName":"Drop-alice","recordChangeTag":"zzz","fields":{"u":{"value":"probe"}}}}]}"#)
                XCTAssertEqual(batch.status, 9, batch.stderr)
                let res = (batch.object["records"] as? [[String: Any]])?.first ?? [:]
                XCTAssertEqual(res["serverErrorCode"] as? String, "CONFLICT")
                XCTAssertEqual(res["serverRecord"] == nil, prober != Self.alice, "\(prober): modify CONFLICT")
                if prober != Self.alice { XCTAssertFalse(batch.stdout.contains("payload:"), batch.stdout) }
            }
            // Where WRITE is the creator's, another user's tagged update is refused before any
            // tag is compared: ACCESS_DENIED when bob may read the record, and NOT_FOUND — as
            // for a record that is not there — when he may not; nothing of the record either way.
            for item in Self.items where item.creator == Self.alice && item.type != "Drop" {
                let r = run(s, .flag(Self.bob), ["--db", "public", "--error-format", "json", "record", "save", "--name", item.name, "--tag", "zzz", "t=probe"])
                let readable = Self.mayRead(Self.bob, item.type, item.creator)
                assertFailure(r, exit: readable ? 5 : 3)
                XCTAssertEqual(parseLine(r.stderr)["serverErrorCode"] as? String, readable ? "ACCESS_DENIED" : "NOT_FOUND", "\(item)")
                XCTAssertFalse(r.stderr.contains(item.payload), r.stderr)
            }
        }

        // A write-only user's write succeeds, and its response shows only what that user wrote.
        let write = run(s, .flag(Self.bob), ["--db", "public", "record", "save", "--name", "Drop-alice", "--force", "u=from-bob"])
        XCTAssertEqual(write.status, 0, write.stderr)
        XCTAssertEqual((write.record["fields"] as? [String: Any]).map { Set($0.keys) }, ["u"], write.stdout)
        XCTAssertEqual(fieldValue(write.json(), "u"), "from-bob")
        XCTAssertFalse(write.stdout.contains("payload:"), write.stdout)
        let modified = run(s, .env(Self.carol), ["--db", "public", "record", "modify"], stdin:
            #"{"operations":[{"operationType":"forceUpdate","record":{"recordName":"Drop-alice","fields":{"u":{"value":"from-carol"}}}}]}"#)
        XCTAssertEqual(modified.status, 0, modified.stderr)
        let saved = (modified.object["records"] as? [Any])?.first
        XCTAssertEqual(fieldValue(saved, "u"), "from-carol")
        XCTAssertNil(fieldValue(saved, "t"), modified.stdout)
        XCTAssertFalse(modified.stdout.contains("payload:"), modified.stdout)
        // The creator reads the whole record, the write merged in.
        let whole = ck(s, "--db", "public", "record", "get", "Drop-alice")
        XCTAssertEqual(fieldValue(whole.json(), "t"), "payload:Drop/alice")
        XCTAssertEqual(fieldValue(whole.json(), "u"), "from-carol")
        // A writer who may read sees the whole record in its write's response.
        let own = ck(s, "--db", "public", "record", "save", "--name", "Drop-alice", "--force", "u=from-alice")
        XCTAssertEqual(own.status, 0, own.stderr)
        XCTAssertEqual(fieldValue(own.json(), "t"), "payload:Drop/alice")

        // An asset's bytes go only to a reader of its record.
        let asset = s.root.appendingPathComponent("secret.bin")
        try Data("asset-bytes-of-alice".utf8).write(to: asset)
        XCTAssertEqual(ck(s, "--db", "public", "record", "save", "--type", "Mine", "--name", "Mine-asset", "f:ASSET=@" + asset.path).status, 0)
        XCTAssertEqual(ck(s, "--db", "public", "record", "get", "Mine-asset", "--asset", "f").stdout, "asset-bytes-of-alice")
        for a in [Actor.flag(Self.bob), .env(Self.carol)] {
            let r = run(s, a, ["--db", "public", "record", "get", "Mine-asset", "--asset", "f"])
            assertFailure(r, exit: 3)
            XCTAssertEqual(r.stderr, notFoundLine("Mine-asset"), "\(a)")
        }
        XCTAssertEqual(ck(s, "account", "set-status", "restricted").status, 0)
        let restricted = ck(s, "--db", "public", "record", "get", "Mine-asset", "--asset", "f")
        assertFailure(restricted, exit: 3)
        XCTAssertEqual(restricted.stderr, notFoundLine("Mine-asset"), "a restricted device reads as nobody, even its creator")
    }

    // MARK: private databases

    /// alice's private database never shows bob anything: not by name, zone, list, query,
    /// export, change feed, token, error dictionary or notification, whether bob acts with
    /// `--as` or `CK_USER`; the same names in bob's database are his own.
    func testPrivateDatabasesNeverLeakBetweenUsers() {
        let s = CLISandbox()
        for u in [Self.bob, Self.alice] { signIn(s, u) }
        XCTAssertEqual(ck(s, "record", "save", "--type", "Diary", "--name", "diary", "t:STRING=payload:alice-diary").status, 0)
        XCTAssertEqual(ck(s, "zone", "create", "Work").status, 0)
        XCTAssertEqual(ck(s, "--zone", "Work", "record", "save", "--type", "Diary", "--name", "w1", "t:STRING=payload:alice-work").status, 0)
        XCTAssertEqual(ck(s, "schema", "index", "add", "Diary", "___recordID", "QUERYABLE").status, 0)
        XCTAssertEqual(ck(s, "--device", "phone", "subscribe", "--id", "db").status, 0)
        XCTAssertEqual(ck(s, "--device", "phone", "subscribe", "query", "--type", "Diary", "--id", "q").status, 0)
        let aliceToken = ck(s, "--zone", "Work", "zone", "changes", "--from-start", "--no-save").zoneChanges["syncToken"] as? String ?? ""
        XCTAssertFalse(aliceToken.isEmpty)

        for a in [Actor.flag(Self.bob), .env(Self.bob)] {
            func noLeak(_ r: CKResult, _ what: String) {
                XCTAssertFalse((r.stdout + r.stderr).contains("payload:alice"), "\(a) \(what) leaks: \(r.stdout) \(r.stderr)")
            }
            s.assertUnchanged("\(a) reads") {
                let get = run(s, a, ["record", "get", "diary"])
                assertFailure(get, exit: 3)
                XCTAssertEqual(get.stderr, "ck: NOT_FOUND: record 'diary' not found in zone _defaultZone of the private database\n", "as if alice's record did not exist")
                let batch = run(s, a, ["--error-format", "json", "record", "get", "diary", "w1"])
                XCTAssertEqual(batch.status, 9)
                XCTAssertEqual((batch.object["records"] as? [[String: Any]])?.map { $0["serverErrorCode"] as? String }, ["NOT_FOUND", "NOT_FOUND"])
                noLeak(batch, "batch get")
                assertFailure(run(s, a, ["--zone", "Work", "record", "get", "w1"]), exit: 3, contains: "ZONE_NOT_FOUND")
                assertFailure(run(s, a, ["--zone", "Work", "record", "list"]), exit: 3, contains: "ZONE_NOT_FOUND")
                assertFailure(run(s, a, ["--zone", "Work", "zone", "changes", "--no-save"]), exit: 3, contains: "ZONE_NOT_FOUND")
                assertFailure(run(s, a, ["--zone", "Work", "export"]), exit: 3, contains: "ZONE_NOT_FOUND")
                for args in [["record", "list"], ["record", "query", "--type", "Diary"], ["--db", "shared", "zone", "list"]] {
                    let r = run(s, a, args)
                    XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
                    XCTAssertEqual(count(r, "records") ?? count(r, "zones"), 0, "\(a) \(args): \(r.stdout)")
                }
                let export = run(s, a, ["export"])
                XCTAssertEqual(export.status, 0, export.stderr)
                XCTAssertEqual(export.stdout, "", "\(a): bob's private database is empty")
                let zones = run(s, a, ["zone", "list"])
                XCTAssertEqual((zones.object["zones"] as? [[String: Any]])?.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }, ["_defaultZone"])
                let changes = run(s, a, ["database", "changes", "--no-save"])
                XCTAssertEqual(changes.status, 0, changes.stderr)
                XCTAssertEqual((changes.object["zones"] as? [Any])?.count, 0, changes.stdout)
                XCTAssertEqual(count(run(s, a, ["subscription", "list"]), "subscriptions"), 0, "alice's subscriptions are hers")
            }
            // (Reading notifications registers the device, so it is outside the unchanged block.)
            XCTAssertEqual(count(run(s, a, ["--device", "phone", "notifications"]), "notifications"), 0)
        }

        // The same names in bob's database are bob's: no EXISTS, no serverRecord of alice's.
        let bob = Actor.env(Self.bob)
        let mine = run(s, bob, ["--error-format", "json", "record", "save", "--type", "Diary", "--name", "diary", "t:STRING=payload:bob-diary"])
        XCTAssertEqual(mine.status, 0, mine.stderr)
        XCTAssertEqual(run(s, bob, ["zone", "create", "Work"]).status, 0)
        XCTAssertEqual(run(s, bob, ["--zone", "Work", "record", "save", "--type", "Diary", "--name", "w1", "t:STRING=payload:bob-work"]).status, 0)
        let again = run(s, bob, ["--error-format", "json", "record", "save", "--type", "Diary", "--name", "diary", "t=x"])
        assertFailure(again, exit: 4)
        XCTAssertEqual(fieldValue(parseLine(again.stderr)["serverRecord"]), "payload:bob-diary", "bob's own record")
        XCTAssertFalse(again.stderr.contains("payload:alice"))
        // alice's token for her Work zone is no token for bob's.
        let foreign = run(s, bob, ["--zone", "Work", "zone", "changes", "--since", aliceToken])
        assertFailure(foreign, exit: 6, contains: "BAD_REQUEST")
        XCTAssertFalse(foreign.stderr.contains("payload:"))
        let feed = run(s, bob, ["--zone", "Work", "zone", "changes", "--from-start", "--no-save"])
        XCTAssertFalse(feed.stdout.contains("payload:alice"), feed.stdout)
        XCTAssertTrue(feed.stdout.contains("payload:bob-work"), feed.stdout)
        for args in [["record", "list"], ["export"], ["--zone", "Work", "export"], ["record", "query", "--type", "Diary"]] {
            let r = run(s, bob, args)
            XCTAssertFalse(r.stdout.contains("payload:alice"), "\(args): \(r.stdout)")
            XCTAssertTrue(r.stdout.contains("payload:bob"), "\(args): \(r.stdout)")
        }
        // alice still has hers, and bob's writes notified nobody of hers.
        XCTAssertEqual(fieldValue(ck(s, "record", "get", "diary").json()), "payload:alice-diary")
        XCTAssertEqual(count(ck(s, "--device", "phone", "notifications"), "notifications"), 0, "bob's changes are not alice's")
        XCTAssertEqual(fieldValue(run(s, .flag(Self.bob), ["--zone", "Work", "record", "get", "w1"]).json()), "payload:bob-work")
    }
}
