import CKTestSupport
import Foundation
import XCTest

/// Crash at every point: each command below is run again and again, the Nth time dying (like
/// `kill -9`) just before its Nth operation that changes the disk (`CK_DEBUG_CRASH_AT_OP=N`),
/// for N = 1, 2, … until it completes. After every crash: another write, then `ck fsck`, then a
/// second fsck that must find nothing, then the store's promises are checked exactly — nothing
/// acknowledged lost, the change feed equal to the records, the database history agreeing with
/// the zones, a notification for every record created, none twice.
final class CrashRecoveryTests: XCTestCase {
    private var s: Sandbox!
    private var acknowledged: [String: String] = [:]   // recordName → zone, of every save that exited 0

    override func setUp() {
        s = Sandbox()
        s.signIn()
        ok(["zone", "create", "Z"])
        // Two watching devices (every device of the user hears every subscription): "v" keeps
        // its notifications to count one per record created; "w" reads them, to see new ones.
        ok(["--device", "v", "subscribe", "query", "--type", "T", "--fires-on", "create"])
        ok(["--device", "w", "subscribe"])
        save("seed-1", zone: "Z")
        save("seed-2", zone: "Z")
        // The readers' query has no filter: it needs "___recordID" QUERYABLE.
        ok(["schema", "index", "add", "T", "___recordID", "QUERYABLE"])
    }

    @discardableResult
    private func ok(_ args: [String], stdin: String? = nil, file: StaticString = #filePath, line: UInt = #line) -> CKResult {
        let r = s.run(args, stdin: stdin)
        XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)", file: file, line: line)
        return r
    }

    private func save(_ name: String, zone: String, file: StaticString = #filePath, line: UInt = #line) {
        ok(["--zone", zone, "record", "save", "--type", "T", "--name", name, "n=1"], file: file, line: line)
        acknowledged[name] = zone
    }

    private func json(_ r: CKResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any] ?? [:]
    }

    private func lines(_ r: CKResult) -> [[String: Any]] {
        r.stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// Runs `command` crashing at each operation in turn; returns how many crash points it has.
    @discardableResult
    private func sweep(_ label: String, before: (Int) -> Void = { _ in }, _ command: (Int) -> [String], stdin: ((Int) -> String)? = nil,
                       rightAfter: ((Int) -> Void)? = nil, anotherWrite: ((Int) -> Void)? = nil,
                       after: (Int, CKResult) -> Void = { _, _ in }, file: StaticString = #filePath, line: UInt = #line) -> Int {
        for n in 1...400 {
            before(n)
            let r = s.run(command(n), stdin: stdin?(n), env: ["CK_DEBUG_CRASH_AT_OP": String(n)])
            let crashed = r.status == 137
            if !crashed { XCTAssertEqual(r.status, 0, "\(label) at op \(n): \(r.stderr)", file: file, line: line) }
            // What readers see before anything is repaired.
            rightAfter?(n)
            // Another write, before any repair: it must work, and finish what the crash left.
            if let w = anotherWrite { w(n) } else { save("after-\(label)-\(n)", zone: "Z", file: file, line: line) }
            let fix = s.run(["fsck"])
            XCTAssertEqual(fix.status, 0, "\(label) at op \(n): fsck could not repair: \(fix.stdout)", file: file, line: line)
            let again = s.run(["fsck", "--dry-run"])
            XCTAssertEqual(again.status, 0, "\(label) at op \(n): second fsck: \(again.stdout)", file: file, line: line)
            XCTAssertEqual(json(again)["clean"] as? Bool, true, "\(label) at op \(n): second fsck: \(again.stdout)", file: file, line: line)
            after(n, r)
            checkPromises("\(label) at op \(n)", file: file, line: line)
            if !crashed {
                print("STRESS crash-points: \(label): crashed at each of its \(n - 1) disk operations, each followed by another write and fsck")
                return n - 1
            }
        }
        XCTFail("\(label) never completed", file: file, line: line)
        return 0
    }

    private func checkPromises(_ what: String, file: StaticString, line: UInt) {
        for broken in s.brokenPromises(acknowledged: acknowledged, watcher: "v") { XCTFail("\(what): \(broken)", file: file, line: line) }
    }

    func testSaveSurvivesACrashAtEveryOperation() {
        let points = sweep("save", { n in ["--zone", "Z", "record", "save", "--type", "T", "--name", "c\(n)", "n=\(n)", "label=x\(n)"] },
                           after: { n, r in if r.status == 0 { self.acknowledged["c\(n)"] = "Z" } })
        XCTAssertGreaterThan(points, 10, "a save has more crash points than that")
    }

    func testUpdateAndDeleteCascadeSurviveACrashAtEveryOperation() {
        // Each round: a parent, a child that DELETE_SELF-references it, then one batch that
        // updates the parent and deletes it (cascading to the child) and creates another record.
        sweep("modify", before: { n in
            self.ok(["--zone", "Z", "record", "save", "--type", "T", "--name", "p\(n)", "n=1"])
            self.ok(["--zone", "Z", "record", "save", "--type", "T", "--name", "k\(n)", "parent:REFERENCE=p\(n),DELETE_SELF"])
        }, { _ in ["--zone", "Z", "record", "modify"] }, stdin: { n in
            "{\"atomic\": true, \"operations\": [{\"operationType\": \"forceDelete\", \"record\": {\"recordName\": \"p\(n)\"}}, " +
                "{\"operationType\": \"create\", \"record\": {\"recordName\": \"m\(n)\", \"recordType\": \"T\", \"fields\": {\"n\": {\"value\": \(n)}}}}]}"
        }, rightAfter: { n in
            // Before any repair, readers see the whole batch or none of it: get, list, query.
            let got = ["p\(n)", "k\(n)", "m\(n)"].map { self.s.run(["--zone", "Z", "record", "get", $0]).status == 0 }
            XCTAssertTrue(got == [true, true, false] || got == [false, false, true], "modify at op \(n): get shows half a batch: \(got)")
            let listed = Set(self.lines(self.s.run(["--zone", "Z", "record", "list", "--format", "ndjson"])).compactMap { $0["recordName"] as? String })
            let seen = ["p\(n)", "k\(n)", "m\(n)"].map { listed.contains($0) }
            XCTAssertEqual(seen, got, "modify at op \(n): list disagrees with get")
            let queried = Set(self.lines(self.s.run(["--zone", "Z", "record", "query", "--type", "T", "--format", "ndjson", "--limit", "200"]))
                .compactMap { $0["recordName"] as? String })
            XCTAssertEqual(["p\(n)", "m\(n)"].map { queried.contains($0) }, [got[0], got[2]], "modify at op \(n): query disagrees with get")
        }, after: { n, r in
            let parent = self.s.run(["--zone", "Z", "record", "get", "p\(n)"]).status
            let child = self.s.run(["--zone", "Z", "record", "get", "k\(n)"]).status
            let made = self.s.run(["--zone", "Z", "record", "get", "m\(n)"]).status
            // Atomic: all of the batch or none of it.
            XCTAssertTrue((parent, child, made) == (3, 3, 0) || (parent, child, made) == (0, 0, 3),
                          "modify at op \(n): half a batch: parent \(parent), child \(child), new \(made)")
            if r.status == 0 { self.acknowledged["m\(n)"] = "Z" }
        })
    }

    /// A batch deleting two records (one of them deleted, made again and now deleted again)
    /// killed at each operation, then another write and fsck (whose second run finds every
    /// tombstone right): a client that was in sync, fed the pages since its token right after
    /// the crash and again after the repair, holds exactly the zone's records, and so does one
    /// fetching from scratch.
    func testDeletionsSurviveACrashAtEveryOperationInTheFeed() {
        var token = "", replica: [String: String] = [:]
        func exported() -> [String: String] {
            var out: [String: String] = [:]
            for r in lines(s.run(["--zone", "Z", "export"])) { out[r["recordName"] as! String] = r["recordChangeTag"] as? String }
            return out
        }
        /// Pages of 2 since `since` as `device`, applied to `into`, until moreComing is false.
        func fetch(_ device: String, since: String?, into: inout [String: String]) -> String {
            var since = since
            while true {
                let r = s.run(["--device", device, "--zone", "Z", "zone", "changes", "--limit", "2", "--no-save"] + (since.map { ["--since", $0] } ?? []))
                XCTAssertEqual(r.status, 0, r.stderr)
                let page = r.zoneChanges
                for rec in page["records"] as? [[String: Any]] ?? [] {
                    into[rec["recordName"] as! String] = rec["deleted"] as? Bool == true ? nil : rec["recordChangeTag"] as? String
                }
                since = page["syncToken"] as? String
                if page["moreComing"] as? Bool != true || since == nil { return since ?? "" }
            }
        }
        func inSync(_ what: String) {
            token = fetch("ipad", since: token, into: &replica)
            XCTAssertEqual(replica, exported(), "\(what): the client in sync")
        }
        token = fetch("ipad", since: nil, into: &replica)
        sweep("deletions", before: { n in
            self.save("e\(n)", zone: "Z")
            self.acknowledged["e\(n)"] = nil  // about to be deleted
            // Not of type T, which the watcher counts creations of: f is made twice.
            self.ok(["--zone", "Z", "record", "save", "--type", "U", "--name", "f\(n)", "n=1"])
            self.ok(["--zone", "Z", "record", "delete", "f\(n)"])
            self.ok(["--zone", "Z", "record", "save", "--type", "U", "--name", "f\(n)", "n=2"])
            inSync("before round \(n)")
        }, { _ in ["--zone", "Z", "record", "modify"] }, stdin: { n in
            "{\"atomic\": true, \"operations\": [{\"operationType\": \"forceDelete\", \"record\": {\"recordName\": \"e\(n)\"}}, " +
                "{\"operationType\": \"forceDelete\", \"record\": {\"recordName\": \"f\(n)\"}}]}"
        }, rightAfter: { n in
            inSync("deletions at op \(n), before any repair")
        }, anotherWrite: { n in
            // The next writer alone brings the tombstones up to date, before any fsck.
            self.save("after-deletions-\(n)", zone: "Z")
            let problems = self.json(self.s.run(["fsck", "--dry-run"]))["problems"] as? [[String: Any]] ?? []
            XCTAssertEqual(problems.compactMap { $0["problem"] as? String }.filter { $0.contains("tombstone") }, [], "deletions at op \(n)")
        }, after: { n, _ in
            inSync("deletions at op \(n), repaired")
            var fresh: [String: String] = [:]
            _ = fetch("fresh", since: nil, into: &fresh)
            XCTAssertEqual(fresh, exported(), "deletions at op \(n): a client from scratch")
        })
    }

    func testImportSurvivesACrashAtEveryOperation() {
        let input = (0..<3).map { "{\"recordName\":\"i-ROUND-\($0)\",\"recordType\":\"T\",\"fields\":{\"n\":{\"value\":\($0)}}}" }.joined(separator: "\n")
        for n in 1...400 {
            let r = s.run(["--zone", "Z", "import", "--batch", "2", "--format", "ndjson"], stdin: input.replacingOccurrences(of: "ROUND", with: "\(n)"),
                          env: ["CK_DEBUG_CRASH_AT_OP": String(n)])
            // Every line printed before the crash acknowledged a committed record.
            for l in lines(r) { if let name = l["recordName"] as? String, l["serverErrorCode"] == nil { acknowledged[name] = "Z" } }
            save("after-import-\(n)", zone: "Z")
            XCTAssertEqual(s.run(["fsck"]).status, 0)
            XCTAssertEqual(json(s.run(["fsck", "--dry-run"]))["clean"] as? Bool, true, "import at op \(n)")
            checkPromises("import at op \(n)", file: #filePath, line: #line)
            if r.status != 137 { XCTAssertEqual(r.status, 0, r.stderr); return }
        }
    }

    func testZoneCreateAndDeleteSurviveACrashAtEveryOperation() {
        sweep("zone-create", before: { _ in self.ok(["--device", "w", "notifications", "--mark-read"]) },
              { n in ["zone", "create", "Y\(n)"] }, after: { n, r in
            let exists = self.s.run(["--zone", "Y\(n)", "record", "list"]).status == 0
            if r.status == 0 { XCTAssertTrue(exists, "an acknowledged zone is missing") }
            if exists {
                // Database subscribers heard of it.
                let notes = self.json(self.s.run(["--device", "w", "notifications", "--mark-read"]))["notifications"] as? [[String: Any]] ?? []
                XCTAssertTrue(notes.contains { $0["notificationType"] as? String == "database" }, "zone Y\(n) was created without a database notification")
                self.ok(["zone", "delete", "Y\(n)"])
            }
        })
        sweep("zone-delete", before: { n in
            self.ok(["zone", "create", "D\(n)"])
            self.save("d\(n)", zone: "D\(n)")
            self.ok(["--device", "w", "notifications", "--mark-read"])
        }, { n in ["zone", "delete", "D\(n)"] }, after: { n, r in
            let exists = self.s.run(["--zone", "D\(n)", "record", "list"]).status == 0
            if r.status == 0 { XCTAssertFalse(exists, "an acknowledged deletion did not happen") }
            if exists {
                XCTAssertEqual(self.s.run(["--zone", "D\(n)", "record", "get", "d\(n)"]).status, 0, "a zone that survived lost its record")
                self.ok(["zone", "delete", "D\(n)"])
            } else {
                let db = self.json(self.s.run(["database", "changes", "--from-start", "--no-save"]))
                let deleted = (db["zones"] as? [[String: Any]] ?? []).filter { $0["deleted"] as? Bool == true }.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
                XCTAssertTrue(deleted.contains("D\(n)"), "zone D\(n) is gone but the database history does not say so")
                let notes = self.json(self.s.run(["--device", "w", "notifications", "--mark-read"]))["notifications"] as? [[String: Any]] ?? []
                XCTAssertTrue(notes.contains { $0["notificationType"] as? String == "database" }, "zone D\(n) was deleted without a database notification")
            }
        })
    }

    func testSchemaResetIsAllOrNothing() {
        sweep("reset", before: { n in
            self.ok(["zone", "create", "R"])
            self.save("r\(n)", zone: "R")
        }, { _ in ["schema", "reset"] }, anotherWrite: { n in
            // The reset may have taken zone Z away: write where it cannot.
            self.ok(["record", "save", "--type", "T", "--name", "after-reset-\(n)", "n=1"])
        }, after: { n, r in
            // After recovery the reset either happened whole or not at all.
            let zone = self.s.run(["--zone", "R", "record", "get", "r\(n)"]).status
            let seed = self.s.run(["--zone", "Z", "record", "get", "seed-1"]).status
            XCTAssertTrue((zone, seed) == (0, 0) || (zone, seed) == (3, 3), "reset at op \(n) is half done: R \(zone), Z \(seed)")
            if r.status == 0 { XCTAssertEqual(seed, 3) }
            if seed == 3 {
                // Start over: the reset removed the zones, subscriptions and acknowledged records.
                self.acknowledged = [:]
                self.ok(["zone", "create", "Z"])
                self.ok(["--device", "v", "subscribe", "query", "--type", "T", "--fires-on", "create"])
                self.ok(["--device", "w", "subscribe"])
            }
        })
    }

    func testSignInAndStatusChangesKeepTheirEvents() {
        func check(_ what: String) {
            let account = json(s.run(["account"]))
            let events = json(s.run(["account", "events"]))["events"] as? [[String: Any]] ?? []
            XCTAssertEqual(events.last?["status"] as? String, account["status"] as? String, "\(what): the last account event disagrees with the account")
            XCTAssertEqual(events.last?["appleID"] as? String, account["appleID"] as? String, "\(what): the last account event disagrees with the account")
            XCTAssertEqual(events.map { $0["seq"] as? Int ?? 0 }, Array(1...max(events.count, 1)).prefix(events.count).map { $0 }, "\(what): account events are not numbered 1…n")
        }
        for command in [["account", "signin", "bob@example.com"], ["account", "set-status", "restricted"], ["account", "signout"]] {
            sweep(command[1], { _ in command }, anotherWrite: { _ in
                // The crashed change stands or not; either way the log must say what the account is.
                check("\(command) after a crash")
                self.s.signIn()
            })
            s.signIn()
        }
    }

    /// Saves `name` into `zone` twice, the second time traced: the number (1-based) of the first
    /// operation that `matches`. A third save of the record makes the same operations.
    private func op(saving name: String, into zone: String, _ matches: (String) -> Bool) -> Int? {
        ok(["--zone", zone, "record", "save", "--type", "T", "--name", name, "--force", "n=1"])
        let trace = s.run(["--zone", zone, "record", "save", "--type", "T", "--name", name, "--force", "n=1"], env: ["CK_DEBUG_TRACE_OPS": "1"])
        return trace.stderr.split(separator: "\n").filter { $0.hasPrefix("op ") }.firstIndex { matches(String($0)) }.map { $0 + 1 }
    }

    private func n(_ r: CKResult) -> Int? { ((r.record["fields"] as? [String: Any])?["n"] as? [String: Any])?["value"] as? Int }

    /// A database entry synced, its zone's commit never made (a crash between the two), found
    /// by another process while a third holds the zone: indexed once, never twice, and the
    /// zone's next commits go on.
    func testADatabaseEntryLeftByACrashIsRecordedOnceWhoeverFindsIt() throws {
        XCTAssertEqual(s.run(["zone", "create", "A"]).status, 0)
        XCTAssertEqual(s.run(["zone", "create", "B"]).status, 0)
        // Just after the database's history is synced: the zone's entries not yet written.
        let dbSync = try XCTUnwrap(op(saving: "a1", into: "A") { $0.contains("fsync ") && $0.hasSuffix("/history.log") && !$0.contains("/zones/") })
        let crashed = s.run(["--zone", "A", "record", "save", "--type", "T", "--name", "a1", "--force", "n=2"], env: ["CK_DEBUG_CRASH_AT_OP": String(dbSync + 1)])
        XCTAssertEqual(crashed.status, 137)
        XCTAssertEqual(n(s.run(["--zone", "A", "record", "get", "a1"])), 1, "a commit the crash stopped before its zone's entries")
        // Another process holds A while a writer of B takes the database's lock.
        let lockPath = try FileManager.default.subpathsOfDirectory(atPath: s.dataDir.path).first { $0.hasSuffix("locks/A.lock") }!
        let fd = open(s.dataDir.appendingPathComponent(lockPath).path, O_RDWR)
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        XCTAssertEqual(s.run(["--zone", "B", "record", "save", "--type", "T", "--name", "b1", "n=1"]).status, 0)
        flock(fd, LOCK_UN)
        close(fd)
        XCTAssertEqual(s.run(["--zone", "A", "record", "save", "--type", "T", "--name", "a2", "n=1"]).status, 0)
        XCTAssertEqual(s.run(["fsck"]).status, 0)
        let again = s.run(["fsck", "--dry-run"])
        XCTAssertEqual(json(again)["clean"] as? Bool, true, again.stdout)
        let dbLog = try FileManager.default.subpathsOfDirectory(atPath: s.dataDir.path).first { $0.hasSuffix("/history.log") && !$0.contains("/zones/") }!
        let entries = try String(contentsOf: s.dataDir.appendingPathComponent(dbLog), encoding: .utf8).split(separator: "\n")
            .map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(entries.map { $0["seq"] as? Int ?? 0 }, Array(1...entries.count), "the database history is not numbered 1…n")
        XCTAssertEqual(entries.filter { $0["zoneName"] as? String == "B" && $0["op"] as? String == "change" }.count, 1, "B's save")
        checkPromises("after a database entry without its commit", file: #filePath, line: #line)
    }

    /// A crash after a zone's commit is synced, before its index words, leaves the commit and
    /// its database entry both unindexed. Another process's write indexes the database entry:
    /// it must recover the zone first, or a client could read the announcement, fetch the zone
    /// without the commit, and never hear of it again. While another process holds the zone's
    /// lock, that write waits, then fails to be tried again, and readers do without the entry.
    func testADatabaseEntryIsNeverIndexedBeforeTheZoneCommitItAnnounces() throws {
        XCTAssertEqual(s.run(["zone", "create", "A"]).status, 0)
        XCTAssertEqual(s.run(["zone", "create", "B"]).status, 0)
        let zoneSync = try XCTUnwrap(op(saving: "a1", into: "A") { $0.contains("fsync ") && $0.hasSuffix("/zones/A/history.log") })
        let fm = FileManager.default
        let zoneIndex = try XCTUnwrap(fm.subpathsOfDirectory(atPath: s.dataDir.path).first { $0.hasSuffix("/zones/A/history.idx") })
        func indexedEntries() throws -> Int { try Data(contentsOf: s.dataDir.appendingPathComponent(zoneIndex)).count / 8 }
        let before = try XCTUnwrap(json(s.run(["database", "changes", "--no-save"]))["syncToken"] as? String)
        func announcedSinceBefore() -> [String] {
            (json(s.run(["database", "changes", "--since", before, "--no-save"]))["zones"] as? [[String: Any]] ?? [])
                .compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        }
        let indexed = try indexedEntries()
        let crashed = s.run(["--zone", "A", "record", "save", "--type", "T", "--name", "a1", "--force", "n=2"], env: ["CK_DEBUG_CRASH_AT_OP": String(zoneSync + 1)])
        XCTAssertEqual(crashed.status, 137)
        XCTAssertEqual(try indexedEntries(), indexed, "the crash came before the zone's index words")

        // Another process holds A: a writer of B waits for it, then is told to try again; a
        // reader of the database's feed goes on without the entry.
        let lockPath = try XCTUnwrap(fm.subpathsOfDirectory(atPath: s.dataDir.path).first { $0.hasSuffix("locks/A.lock") })
        let fd = open(s.dataDir.appendingPathComponent(lockPath).path, O_RDWR)
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        let busy = s.run(["--zone", "B", "record", "save", "--type", "T", "--name", "b1", "n=1"])
        XCTAssertEqual(busy.status, 8, "a write indexed the database entry while its zone could not be recovered (8: try again)")
        XCTAssertTrue(busy.stderr.contains("TRY_AGAIN_LATER"), busy.stderr)
        XCTAssertEqual(announcedSinceBefore(), [], "the entry was read before its zone's commit was indexed")
        flock(fd, LOCK_UN)
        close(fd)

        // Once A is free, the next writer of B recovers A's commit before the entry announcing it.
        XCTAssertEqual(s.run(["--zone", "B", "record", "save", "--type", "T", "--name", "b1", "n=1"]).status, 0)
        XCTAssertEqual(try indexedEntries(), indexed + 1, "the database entry was indexed before its zone's commit")
        XCTAssertEqual(Set(announcedSinceBefore()), ["A", "B"])
        XCTAssertEqual(n(s.run(["--zone", "A", "record", "get", "a1"])), 2)
        XCTAssertEqual(s.run(["fsck"]).status, 0)
        XCTAssertEqual(json(s.run(["fsck", "--dry-run"]))["clean"] as? Bool, true)
    }

    /// A power loss just after a zone's commit is synced keeps what was synced and loses what
    /// was not (an intent, the index words): the database's history must still announce the
    /// change, or `database changes` would never send a client to that zone's new record.
    func testAZoneCommitThatSurvivesAPowerLossIsAnnouncedByTheDatabase() throws {
        XCTAssertEqual(s.run(["zone", "create", "A"]).status, 0)
        let zoneSync = try XCTUnwrap(op(saving: "a1", into: "A") { $0.contains("fsync ") && $0.hasSuffix("/zones/A/history.log") })
        let before = try XCTUnwrap(json(s.run(["database", "changes", "--no-save"]))["syncToken"] as? String)
        let crashed = s.run(["--zone", "A", "record", "save", "--type", "T", "--name", "a1", "--force", "n=2"], env: ["CK_DEBUG_CRASH_AT_OP": String(zoneSync + 1)])
        XCTAssertEqual(crashed.status, 137)
        // The power goes: no intent was ever synced.
        let fm = FileManager.default
        for p in try fm.subpathsOfDirectory(atPath: s.dataDir.path) where p.contains("/intents/") && p.hasSuffix(".json") {
            try fm.removeItem(at: s.dataDir.appendingPathComponent(p))
        }
        XCTAssertEqual(n(s.run(["--zone", "A", "record", "get", "a1"])), 2, "a commit synced before the power went")
        let changed = json(s.run(["database", "changes", "--since", before, "--no-save"]))["zones"] as? [[String: Any]] ?? []
        XCTAssertEqual(changed.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }, ["A"],
                       "the database's feed does not announce a zone commit that survived the power loss")
        XCTAssertEqual(s.run(["fsck"]).status, 0)
        XCTAssertEqual(json(s.run(["fsck", "--dry-run"]))["clean"] as? Bool, true)
    }

    /// A container whose identifier is 255 bytes long is checked and repaired like any other.
    func testFsckRepairsAStoreUnderALongContainerIdentifier() {
        let long = "iCloud." + String(repeating: "a", count: 248)
        XCTAssertEqual(s.run(["--container", long, "zone", "create", "Q"]).status, 0)
        let crashed = s.run(["--container", long, "--zone", "Q", "record", "save", "--type", "T", "--name", "q", "n=1"], env: ["CK_DEBUG_CRASH_AT_OP": "15"])
        XCTAssertEqual(crashed.status, 137)
        let fix = s.run(["fsck"])
        XCTAssertEqual(fix.status, 0, fix.stdout)
        XCTAssertTrue(fix.stdout.contains("\"zones\": 2") && fix.stdout.contains(long + "/development"), "the long container's zone is checked: \(fix.stdout)")
        XCTAssertTrue(s.run(["fsck", "--dry-run"]).stdout.contains("\"clean\": true"))
    }
}
