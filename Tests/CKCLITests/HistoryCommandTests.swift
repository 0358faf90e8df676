import CKTestSupport
import Foundation
import XCTest

/// An independent reading of a zone's history.log (not ck's code): each entry, and the state
/// of the zone after any change, replayed from the start.
struct HistoryReplayModel {
    struct Entry {
        var seq: Int
        var timestamp: Int64
        var op: String
        var name: String
        var user: String
        var device: String
        var fields: [String: NSDictionary]?
        var type: String?
    }
    var entries: [Entry] = []

    init(logFile: String) {
        let text = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            let o = try! JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let rec = o["record"] as? [String: Any]
            entries.append(Entry(seq: o["seq"] as! Int, timestamp: (o["timestamp"] as! NSNumber).int64Value, op: o["op"] as! String,
                                 name: o["recordName"] as! String, user: o["userRecordName"] as! String, device: o["deviceID"] as! String,
                                 fields: (rec?["fields"] as? [String: Any])?.mapValues { $0 as! NSDictionary }, type: rec?["recordType"] as? String))
        }
    }

    var head: Int { entries.last?.seq ?? 0 }

    /// name → fields, after change `seq`.
    func state(at seq: Int) -> [String: [String: NSDictionary]] {
        var s: [String: [String: NSDictionary]] = [:]
        for e in entries where e.seq <= seq { s[e.name] = e.op == "save" ? e.fields! : nil }
        return s
    }

    /// For each field of the record's current version, the seq of the change that last set it.
    func blame(_ name: String) -> [String: Int] {
        var last: [String: Int] = [:]
        var cur: [String: NSDictionary]?
        for e in entries where e.name == name {
            guard e.op == "save", let f = e.fields else { last = [:]; cur = nil; continue }
            for (k, v) in f where cur?[k] != v { last[k] = e.seq }
            for k in last.keys where f[k] == nil { last[k] = nil }
            cur = f
        }
        return last
    }
}

extension TestSandbox {
    func replay(_ suffix: String) -> HistoryReplayModel { HistoryReplayModel(logFile: historyZoneDirectory(suffix) + "/history.log") }
}

/// `ck log`, `show`, `diff`, `blame`, `--at`, `restore`, `revert` after a scripted day of edits
/// by two users on two devices, each answer checked against an independent replay of the
/// zone's history.log.
final class HistoryCommandTests: XCTestCase {
    /// Alice (phone, laptop) and Bob (laptop) edit the public database's default zone, where
    /// both write; each edits only records they made (public records are creator-only).
    func scriptedDay(_ s: CLISandbox) {
        s.signIn("alice@example.com")
        s.signIn("bob@example.com")
        let alice = ["--db", "public", "--as", "alice@example.com"], bob = ["--db", "public", "--as", "bob@example.com"]
        let phone = ["--device", "phone"], laptop = ["--device", "laptop"]
        let steps: [[String]] = [
            alice + phone + ["record", "save", "--type", "Note", "--name", "groceries", "title=Groceries", "items=milk"],
            bob + laptop + ["record", "save", "--type", "Note", "--name", "plan", "title=Plan", "day=monday"],
            alice + laptop + ["record", "save", "--name", "groceries", "--force", "items=milk,eggs"],
            alice + phone + ["record", "save", "--type", "Note", "--name", "todo", "title=Todo", "done=false"],
            bob + laptop + ["record", "save", "--name", "plan", "--force", "day=tuesday", "room=B"],
            alice + phone + ["record", "delete", "todo"],
            bob + phone + ["record", "save", "--name", "plan", "--force", "title=Plan v2"],
            alice + laptop + ["record", "save", "--type", "Note", "--name", "todo", "title=Todo again"],
            alice + phone + ["record", "save", "--name", "groceries", "--force", "items=bread", "shop=corner"],
        ]
        for st in steps { let r = s.run(st); XCTAssertEqual(r.status, 0, "\(st): \(r.stderr)") }
    }

    let pub = ["--db", "public"]

    func testLogShowsEveryChangeNewestFirstWithItsAuthorAndDevice() {
        let s = CLISandbox()
        scriptedDay(s)
        let m = s.replay("public/zones/_defaultZone")
        XCTAssertEqual(m.head, 9)
        let log = s.ndjsonLines(pub + ["log", "--format", "ndjson"])
        XCTAssertEqual(log.map { $0["seq"] as? Int }, m.entries.reversed().map(\.seq))
        for (l, e) in zip(log, m.entries.reversed()) {
            XCTAssertEqual(l["operation"] as? String, e.op)
            XCTAssertEqual(l["recordName"] as? String, e.name)
            XCTAssertEqual(l["userRecordName"] as? String, e.user)
            XCTAssertEqual(l["deviceID"] as? String, e.device)
            XCTAssertEqual((l["timestamp"] as? NSNumber)?.int64Value, e.timestamp)
        }
        // --reverse, --limit, a record, a user, a device, a field, a range.
        XCTAssertEqual(s.ndjsonLines(pub + ["log", "--reverse", "--limit", "3", "--format", "ndjson"]).map { $0["seq"] as? Int }, [1, 2, 3])
        XCTAssertEqual(s.ndjsonLines(pub + ["log", "todo", "--format", "ndjson"]).map { $0["seq"] as? Int },
                       m.entries.filter { $0.name == "todo" }.reversed().map(\.seq))
        let bobName = s.run(["--as", "bob@example.com", "whoami"]).object["userRecordName"] as! String
        XCTAssertEqual(s.ndjsonLines(pub + ["log", "--user", "bob@example.com", "--format", "ndjson"]).map { $0["seq"] as? Int },
                       m.entries.filter { $0.user == bobName }.reversed().map(\.seq))
        XCTAssertEqual(s.ndjsonLines(pub + ["log", "--device", "phone", "--format", "ndjson"]).map { $0["seq"] as? Int },
                       m.entries.filter { $0.device == "phone" }.reversed().map(\.seq))
        XCTAssertEqual(s.ndjsonLines(pub + ["log", "--since", "_defaultZone@3", "--until", "_defaultZone@6", "--format", "ndjson"]).map { $0["seq"] as? Int },
                       [6, 5, 4])
        // --field items: the changes where `items` changed.
        var expected: [Int] = []
        var items: [String: NSDictionary?] = [:]
        for e in m.entries {
            let now = e.fields?["items"]
            if (items[e.name] ?? nil) != now { expected.append(e.seq) }
            items[e.name] = now
        }
        XCTAssertEqual(s.ndjsonLines(pub + ["log", "--field", "items", "--format", "ndjson"]).map { $0["seq"] as? Int }, expected.reversed())
        // --patch: each change's field diff against the state before it.
        for l in s.ndjsonLines(pub + ["log", "--patch", "--format", "ndjson"]) {
            let seq = l["seq"] as! Int, name = l["recordName"] as! String
            let before = m.state(at: seq - 1)[name] ?? [:], after = m.state(at: seq)[name] ?? [:]
            let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }
            XCTAssertEqual(Set((l["fields"] as? [String: Any] ?? [:]).keys), changed, "patch of change \(seq)")
        }
    }

    func testShowDiffAndTimeTravelMatchTheReplay() {
        let s = CLISandbox()
        scriptedDay(s)
        let m = s.replay("public/zones/_defaultZone")
        // show: each change, before and after.
        for e in m.entries {
            let r = s.run(pub + ["show", "_defaultZone@\(e.seq)"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let o = r.object
            XCTAssertEqual((o["change"] as? [String: Any])?["seq"] as? Int, e.seq)
            let before = m.state(at: e.seq - 1)[e.name], after = m.state(at: e.seq)[e.name]
            XCTAssertEqual((o["before"] as? [String: Any])?["fields"] as? NSDictionary, before.map { $0 as NSDictionary })
            XCTAssertEqual((o["after"] as? [String: Any])?["fields"] as? NSDictionary, after.map { $0 as NSDictionary })
        }
        // --at on list, export and get, at every point of the day.
        for k in 0...m.head {
            let want = m.state(at: k)
            let listed = s.ndjsonLines(pub + ["record", "list", "--at", "_defaultZone@\(k)", "--format", "ndjson"])
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: listed.map { ($0["recordName"] as! String, $0["fields"] as! NSDictionary) }),
                           want.mapValues { $0 as NSDictionary }, "record list --at \(k)")
            let exported = s.ndjsonLines(pub + ["export", "--at", "_defaultZone@\(k)"])
            XCTAssertEqual(Set(exported.map { $0["recordName"] as! String }), Set(want.keys), "export --at \(k)")
            for name in ["groceries", "plan", "todo"] {
                let r = s.run(pub + ["record", "get", name, "--at", "_defaultZone@\(k)"])
                if let f = want[name] {
                    XCTAssertEqual(r.status, 0, r.stderr)
                    XCTAssertEqual(r.record["fields"] as? NSDictionary, f as NSDictionary, "\(name) at \(k)")
                } else {
                    assertFailure(r, exit: 3, contains: "not found in zone _defaultZone of the public database as of _defaultZone@\(k)")
                }
            }
        }
        // query --at: the notes titled as then.
        let q = s.ndjsonLines(pub + ["record", "query", "--type", "Note", "--filter", "title BEGINS_WITH Todo", "--at", "_defaultZone@5", "--format", "ndjson"])
        XCTAssertEqual(q.map { $0["recordName"] as? String }, ["todo"])
        XCTAssertEqual(s.ndjsonLines(pub + ["record", "query", "--type", "Note", "--filter", "title BEGINS_WITH Todo", "--at", "_defaultZone@6", "--format", "ndjson"]).count, 0)
        // diff between pairs of points, both ways.
        for (a, b) in [(0, 9), (2, 7), (3, 6), (6, 3), (5, 5), (1, 8)] {
            let sa = m.state(at: a), sb = m.state(at: b)
            var want: [String: String] = [:]
            for n in Set(sa.keys).union(sb.keys) {
                switch (sa[n], sb[n]) {
                case (nil, _?): want[n] = "added"
                case (_?, nil): want[n] = "deleted"
                case (let x?, let y?) where x != y: want[n] = "changed"
                default: break
                }
            }
            let d = s.ndjsonLines(pub + ["diff", "_defaultZone@\(a)", "_defaultZone@\(b)", "--format", "ndjson"])
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: d.map { ($0["recordName"] as! String, $0["status"] as! String) }), want, "diff \(a) \(b)")
            for item in d {
                let n = item["recordName"] as! String
                let fields = item["fields"] as! [String: [String: Any]]
                for (f, ch) in fields {
                    XCTAssertEqual(ch["old"] as? NSDictionary, sa[n]?[f], "diff \(a) \(b): \(n).\(f) old")
                    XCTAssertEqual(ch["new"] as? NSDictionary, sb[n]?[f], "diff \(a) \(b): \(n).\(f) new")
                }
            }
            let stat = s.run(pub + ["diff", "_defaultZone@\(a)", "_defaultZone@\(b)", "--stat"]).object
            XCTAssertEqual(stat["added"] as? Int, want.values.filter { $0 == "added" }.count)
            XCTAssertEqual(stat["deleted"] as? Int, want.values.filter { $0 == "deleted" }.count)
            XCTAssertEqual(stat["changed"] as? Int, want.values.filter { $0 == "changed" }.count)
        }
        // A time: an entry's own timestamp stands for the last change at or before it.
        let e4 = m.entries[3]
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let at = iso.string(from: Date(timeIntervalSince1970: Double(e4.timestamp) / 1000))
        let last = m.entries.last { $0.timestamp <= e4.timestamp }!.seq
        let listed = s.ndjsonLines(pub + ["record", "list", "--at", at, "--format", "ndjson"])
        XCTAssertEqual(Set(listed.map { $0["recordName"] as! String }), Set(m.state(at: last).keys))
        XCTAssertEqual(s.ndjsonLines(pub + ["record", "list", "--at", "now", "--format", "ndjson"]).count, m.state(at: m.head).count)
        XCTAssertEqual(s.ndjsonLines(pub + ["record", "list", "--at", "HEAD", "--format", "ndjson"]).count, m.state(at: m.head).count)
    }

    func testBlameNamesTheChangeThatLastSetEachField() {
        let s = CLISandbox()
        scriptedDay(s)
        let m = s.replay("public/zones/_defaultZone")
        for name in ["groceries", "plan", "todo"] {
            let o = s.run(pub + ["blame", name]).object
            let fields = o["fields"] as! [[String: Any]]
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: fields.map { ($0["field"] as! String, $0["seq"] as! Int) }), m.blame(name), "blame \(name)")
            for f in fields {
                let e = m.entries.first { $0.seq == f["seq"] as! Int }!
                XCTAssertEqual(f["userRecordName"] as? String, e.user)
                XCTAssertEqual(f["deviceID"] as? String, e.device)
            }
        }
        // As of a point: plan at 5 had day and room from change 5, title from 2.
        let o = s.run(pub + ["blame", "plan", "--at", "_defaultZone@5"]).object
        let at5 = Dictionary(uniqueKeysWithValues: (o["fields"] as! [[String: Any]]).map { ($0["field"] as! String, $0["seq"] as! Int) })
        XCTAssertEqual(at5, ["title": 2, "day": 5, "room": 5])
    }

    func testRestoreAndRevertWriteNewChanges() {
        let s = CLISandbox()
        scriptedDay(s)
        let alice = pub + ["--as", "alice@example.com"]
        let before = s.replay("public/zones/_defaultZone")
        // Restore groceries as it was after change 3 (alice's, so alice may write it).
        let dry = s.run(alice + ["restore", "_defaultZone@3", "groceries", "--dry-run", "--format", "ndjson"])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertTrue(dry.stdout.contains("\"status\":\"changed\""), dry.stdout)
        XCTAssertEqual(s.replay("public/zones/_defaultZone").head, before.head, "--dry-run writes nothing")
        let r = s.run(alice + ["restore", "_defaultZone@3", "groceries"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let after = s.replay("public/zones/_defaultZone")
        XCTAssertEqual(after.head, before.head + 1, "one new change")
        XCTAssertEqual(after.state(at: after.head)["groceries"], before.state(at: 3)["groceries"])
        XCTAssertEqual(after.entries.last?.op, "save")
        // The deleted-then-remade todo: restoring it to 5 (when it was "Todo") writes that back.
        XCTAssertEqual(s.run(alice + ["restore", "_defaultZone@5", "todo"]).status, 0)
        XCTAssertEqual(s.replay("public/zones/_defaultZone").state(at: 99)["todo"], before.state(at: 5)["todo"])
        // Nothing to restore: no change, exit 0.
        let head = s.replay("public/zones/_defaultZone").head
        XCTAssertEqual(s.run(alice + ["restore", "_defaultZone@5", "todo"]).status, 0)
        XCTAssertEqual(s.replay("public/zones/_defaultZone").head, head)

        // revert: bob's change 7 set plan.title to "Plan v2"; undoing it sets "Plan" back and
        // keeps day and room from change 5.
        let bob = pub + ["--as", "bob@example.com"]
        let rv = s.run(bob + ["revert", "_defaultZone@7"])
        XCTAssertEqual(rv.status, 0, rv.stderr)
        let now = s.replay("public/zones/_defaultZone")
        XCTAssertEqual(now.state(at: now.head)["plan"], before.state(at: 5)["plan"])
        // Reverting change 5 now conflicts? No: change 7 touched only title; 5 set day and room.
        let rv5 = s.run(bob + ["revert", "_defaultZone@5", "--dry-run"])
        XCTAssertEqual(rv5.status, 0, rv5.stderr)
        // A change whose fields changed again since: CONFLICT, nothing written.
        s.assertUnchanged("a conflicting revert") {
            // Change 9 set items to bread; the restore above set them back since.
            assertFailure(s.run(alice + ["revert", "_defaultZone@9"]), exit: 4, contains: "changed again since")
        }
        // Reverting a deletion when the record exists again: CONFLICT.
        s.assertUnchanged("a revert of a deletion undone since") {
            assertFailure(s.run(alice + ["revert", "_defaultZone@6"]), exit: 4, contains: "exists again")
        }
    }

    func testBadReferencesFailClearlyAndChangeNothing() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.run(["zone", "create", "Lists", "Other"]).status, 0)
        for i in 1...3 { XCTAssertEqual(s.run(["--zone", "Lists", "record", "save", "--type", "T", "--name", "r\(i)", "n=\(i)"]).status, 0) }
        XCTAssertEqual(s.run(["--zone", "Other", "record", "save", "--type", "T", "--name", "o", "n=1"]).status, 0)
        let other = s.run(["--zone", "Other", "zone", "changes", "--from-start", "--no-save"]).zoneChanges["syncToken"] as! String
        let dbToken = s.run(["database", "changes", "--no-save"]).object["syncToken"] as! String
        s.assertUnchanged("bad references") {
            assertFailure(s.run(["--zone", "Lists", "record", "get", "r1", "--at", "nosuchtag"]), exit: 3, contains: "unknown tag or reference 'nosuchtag'")
            assertFailure(s.run(["--zone", "Lists", "diff", "Lists@99"]), exit: 6, contains: "has no change 99: its history ends at 3")
            assertFailure(s.run(["--zone", "Lists", "record", "list", "--at", "2001-01-01T10:00"]), exit: 6, contains: "is before the history of zone 'Lists'")
            assertFailure(s.run(["--zone", "Lists", "record", "get", "r1", "--at", other]), exit: 6, contains: "belongs to zone 'Other'")
            assertFailure(s.run(["--zone", "Lists", "show", dbToken]), exit: 6, contains: "database change token")
            assertFailure(s.run(["--zone", "Lists", "show", "ck1.forged.token"]), exit: 6, contains: "not valid")
            assertFailure(s.run(["--zone", "Lists", "diff", "Other@1"]), exit: 6, contains: "names zone 'Other', not zone 'Lists'")
            assertFailure(s.run(["--zone", "Lists", "show", "Lists@0"]), exit: 6, contains: "before any change")
            assertFailure(s.run(["--zone", "Lists", "restore", "Lists@99", "--dry-run"]), exit: 6, contains: "has no change 99")
            assertFailure(s.run(["--zone", "Lists", "revert", "nosuchtag"]), exit: 3, contains: "unknown tag")
            assertFailure(s.run(["--zone", "Nope", "log"]), exit: 3, contains: "ZONE_NOT_FOUND")
            assertFailure(s.run(["--zone", "Lists", "record", "get", "r9", "--at", "Lists@3"]), exit: 3, contains: "record 'r9' not found in zone Lists of the private database as of Lists@3")
            XCTAssertEqual(s.run(["--zone", "Lists", "log", "--limit", "0"]).status, 2)
            XCTAssertEqual(s.run(["diff"]).status, 2, "a reference is required")
            XCTAssertEqual(s.run(["diff", "a", "b", "c"]).status, 2)
            assertFailure(s.run(["tag", "create", "123"]), exit: 6, contains: "would read as")
            assertFailure(s.run(["tag", "create", "yesterday"]), exit: 6, contains: "would read as")
            assertFailure(s.run(["tag", "delete", "nosuchtag"]), exit: 3, contains: "unknown tag")
        }
    }

    func testTagsNameAPointInEveryZone() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.run(["zone", "create", "Lists"]).status, 0)
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "save", "--type", "T", "--name", "a", "n=1"]).status, 0)
        XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", "d", "n=1"]).status, 0)
        let t = s.run(["tag", "create", "before", "--message", "before the edits"])
        XCTAssertEqual(t.status, 0, t.stderr)
        XCTAssertEqual(t.object["message"] as? String, "before the edits")
        assertFailure(s.run(["tag", "create", "before"]), exit: 4, contains: "already exists")
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "save", "--name", "a", "--force", "n=2"]).status, 0)
        XCTAssertEqual(s.run(["record", "delete", "d"]).status, 0)
        XCTAssertEqual(s.run(["zone", "create", "Later"]).status, 0)
        XCTAssertEqual(s.run(["--zone", "Later", "record", "save", "--type", "T", "--name", "l", "n=1"]).status, 0)
        // The whole database: one change in each zone, and the zone made later counts from empty.
        let d = s.ndjsonLines(["diff", "before", "--format", "ndjson"])
        let got = Set(d.map { "\(($0["zoneID"] as! [String: Any])["zoneName"]!)/\($0["recordName"]!)/\($0["status"]!)" })
        XCTAssertEqual(got, ["_defaultZone/d/deleted", "Lists/a/changed", "Later/l/added"])
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "get", "a", "--at", "before"]).record["fields"] as? NSDictionary,
                       ["n": ["type": "INT64", "value": 1]] as NSDictionary)
        XCTAssertEqual(s.ndjsonLines(["export", "--at", "before"]).map { $0["recordName"] as! String }.sorted(), ["a", "d"])
        XCTAssertEqual((s.run(["tag", "list"]).object["tags"] as? [[String: Any]])?.map { $0["name"] as? String }, ["before"])
        // A restore to the tag, in one zone: tokens taken before it keep working.
        let token = s.run(["--zone", "Lists", "zone", "changes", "--from-start", "--no-save"]).zoneChanges["syncToken"] as! String
        XCTAssertEqual(s.run(["--zone", "Lists", "restore", "before"]).status, 0)
        let after = s.run(["--zone", "Lists", "zone", "changes", "--since", token, "--no-save"]).zoneChanges
        XCTAssertEqual((after["records"] as? [[String: Any]])?.map { $0["recordName"] as? String }, ["a"], "an ordinary update")
        XCTAssertEqual(s.run(["tag", "delete", "before"]).status, 0)
        assertFailure(s.run(["diff", "before"]), exit: 3, contains: "unknown tag")
    }
}
