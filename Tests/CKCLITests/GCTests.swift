import CKTestSupport
import Foundation
import XCTest

/// `ck gc`: a compacted history expires old tokens (exit 7) while newer ones work, keeps
/// `--from-start`, export and fsck whole, refuses time travel before it, and survives a crash
/// in the middle of its switch.
final class GCTests: XCTestCase {
    /// A zone Lists with 10 changes: r1…r6 saved, r1 and r2 changed, r3 deleted, r7 saved.
    func tenChanges(_ s: CLISandbox) -> [String] {
        s.signIn()
        XCTAssertEqual(s.run(["zone", "create", "Lists"]).status, 0)
        var tokens: [String] = [s.run(["--zone", "Lists", "zone", "changes", "--from-start", "--no-save"]).zoneChanges["syncToken"] as! String]
        let steps: [[String]] = (1...6).map { ["record", "save", "--type", "T", "--name", "r\($0)", "n=\($0)"] }
            + [["record", "save", "--name", "r1", "--force", "n=10"], ["record", "save", "--name", "r2", "--force", "n=20"],
               ["record", "delete", "r3"], ["record", "save", "--type", "T", "--name", "r7", "n=7"]]
        for st in steps {
            XCTAssertEqual(s.run(["--zone", "Lists"] + st).status, 0)
            tokens.append(s.run(["--zone", "Lists", "zone", "changes", "--since", tokens.last!, "--no-save"]).zoneChanges["syncToken"] as! String)
        }
        return tokens  // tokens[k]: the token at seq k
    }

    func records(_ r: CKResult) -> [String: NSDictionary] {
        var out: [String: NSDictionary] = [:]
        for z in r.object["zones"] as? [[String: Any]] ?? [] {
            for rec in z["records"] as? [[String: Any]] ?? [] { out[rec["recordName"] as! String] = rec["fields"] as? NSDictionary ?? [:] }
        }
        return out
    }

    func testGCExpiresOldTokensKeepsNewOnesAndTheState() {
        let s = CLISandbox()
        let tokens = tenChanges(s)
        let fromStart = records(s.run(["--zone", "Lists", "zone", "changes", "--from-start", "--no-save"]))
        let export = s.run(["--zone", "Lists", "export"]).stdout
        let sinceSeven = records(s.run(["--zone", "Lists", "zone", "changes", "--since", tokens[7], "--no-save"]))
        // Keep the last 3 changes (8, 9, 10): tokens at 7 and later stay valid.
        let gc = s.run(["--zone", "Lists", "gc", "--keep", "3"])
        XCTAssertEqual(gc.status, 0, gc.stderr)
        XCTAssertEqual(gc.object["retainedFrom"] as? Int, 8)
        XCTAssertEqual(gc.object["head"] as? Int, 10)
        // Changes 1…7 wrote: r1 (1, superseded by 7), r2 (2), r3 (3), r4, r5, r6, r1 (7).
        // Current at 7: r2@2, r3@3, r4@4, r5@5, r6@6, r1@7 — kept; r1@1 dropped.
        XCTAssertEqual(gc.object["dropped"] as? Int, 1)
        XCTAssertEqual(gc.object["kept"] as? Int, 6)
        XCTAssertLessThan(gc.object["logBytesAfter"] as! Int, gc.object["logBytesBefore"] as! Int)

        for old in 0...6 {
            s.assertUnchanged("an expired token") {
                assertFailure(s.run(["--zone", "Lists", "zone", "changes", "--since", tokens[old], "--no-save"]), exit: 7, contains: "CHANGE_TOKEN_EXPIRED")
            }
        }
        XCTAssertEqual(records(s.run(["--zone", "Lists", "zone", "changes", "--since", tokens[7], "--no-save"])), sinceSeven, "a token at the kept edge works")
        for k in 8...10 { XCTAssertEqual(s.run(["--zone", "Lists", "zone", "changes", "--since", tokens[k], "--no-save"]).status, 0) }
        XCTAssertEqual(records(s.run(["--zone", "Lists", "zone", "changes", "--from-start", "--no-save"])), fromStart, "--from-start still returns every record")
        XCTAssertEqual(s.run(["--zone", "Lists", "export"]).stdout, export)
        let fsck = s.run(["fsck"])
        XCTAssertEqual(fsck.status, 0, fsck.stdout)
        XCTAssertEqual(fsck.object["clean"] as? Bool, true, fsck.stdout)

        // Time travel before what remains: CHANGE_TOKEN_EXPIRED, nothing changed.
        s.assertUnchanged("time travel before the retained history") {
            assertFailure(s.run(["--zone", "Lists", "record", "get", "r1", "--at", "Lists@3"]), exit: 7, contains: "compacted")
            assertFailure(s.run(["--zone", "Lists", "diff", "Lists@2"]), exit: 7, contains: "compacted")
            assertFailure(s.run(["--zone", "Lists", "record", "list", "--at", "Lists@0"]), exit: 7, contains: "compacted")
        }
        // From the kept edge on, everything answers.
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "get", "r1", "--at", "Lists@7"]).record["fields"] as? NSDictionary,
                       ["n": ["type": "INT64", "value": 10]] as NSDictionary)
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "get", "r3", "--at", "Lists@8"]).record["recordName"] as? String, "r3")
        assertFailure(s.run(["--zone", "Lists", "record", "get", "r3", "--at", "Lists@9"]), exit: 3)
        XCTAssertEqual(s.ndjsonLines(["--zone", "Lists", "diff", "Lists@7", "--format", "ndjson"]).map { $0["recordName"] as! String }, ["r2", "r3", "r7"])
        // The log shows what remains.
        XCTAssertEqual(s.ndjsonLines(["--zone", "Lists", "log", "--format", "ndjson"]).map { $0["seq"] as! Int }, [10, 9, 8, 7, 6, 5, 4, 3, 2])
        // Writes go on; seq numbers and tags continue; a later gc compacts further.
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "save", "--name", "r4", "--force", "n=40"]).record["recordChangeTag"] as? String, "b")
        XCTAssertEqual(s.run(["--zone", "Lists", "zone", "changes", "--since", tokens[10], "--no-save"]).status, 0)
        let gc2 = s.run(["--zone", "Lists", "gc"])
        XCTAssertEqual(gc2.object["retainedFrom"] as? Int, 12)
        XCTAssertEqual(records(s.run(["--zone", "Lists", "zone", "changes", "--from-start", "--no-save"])).keys.sorted(), ["r1", "r2", "r4", "r5", "r6", "r7"])
        XCTAssertEqual(s.run(["fsck"]).object["clean"] as? Bool, true)
        // A bookmark of the head, saved before gc, keeps working.
        XCTAssertEqual(s.run(["--zone", "Lists", "zone", "changes"]).status, 0)
        XCTAssertEqual(s.run(["--zone", "Lists", "gc", "--keep", "0"]).status, 0)
        XCTAssertEqual(s.run(["--zone", "Lists", "zone", "changes"]).status, 0, "the head's bookmark survives gc")
    }

    func testKeepSinceATagAndBadArguments() {
        let s = CLISandbox()
        let tokens = tenChanges(s)
        XCTAssertEqual(s.run(["--zone", "Lists", "gc", "--keep-since", tokens[5]]).object["retainedFrom"] as? Int, 6)
        assertFailure(s.run(["--zone", "Lists", "zone", "changes", "--since", tokens[4], "--no-save"]), exit: 7)
        XCTAssertEqual(s.run(["--zone", "Lists", "zone", "changes", "--since", tokens[5], "--no-save"]).status, 0)
        s.assertUnchanged("bad gc arguments") {
            XCTAssertEqual(s.run(["--zone", "Lists", "gc", "--keep", "-1"]).status, 2)
            XCTAssertEqual(s.run(["--zone", "Lists", "gc", "--keep", "2", "--keep-since", "Lists@3"]).status, 2)
            assertFailure(s.run(["--zone", "Lists", "gc", "--keep-since", "Lists@99"]), exit: 6, contains: "has no change 99")
            assertFailure(s.run(["--zone", "Nope", "gc"]), exit: 3)
            // Compacting less than is already compacted changes nothing.
            XCTAssertEqual(s.run(["--zone", "Lists", "gc", "--keep", "100"]).object["dropped"] as? Int, 0)
        }
    }

    /// A crash between the two renames of the switch: the next writer finishes it.
    func testAnInterruptedSwitchIsFinishedByTheNextWriter() throws {
        let s = CLISandbox()
        _ = tenChanges(s)
        let dir = s.historyZoneDirectory("zones/Lists")
        let fm = FileManager.default
        let oldLog = try Data(contentsOf: URL(fileURLWithPath: dir + "/history.log"))
        let fromStart = records(s.run(["--zone", "Lists", "zone", "changes", "--from-start", "--no-save"]))
        XCTAssertEqual(s.run(["--zone", "Lists", "gc", "--keep", "2"]).status, 0)
        let newLog = try Data(contentsOf: URL(fileURLWithPath: dir + "/history.log"))
        // As if the process died after renaming the index: old log in place, new one aside.
        try newLog.write(to: URL(fileURLWithPath: dir + "/history.log.gc"))
        try oldLog.write(to: URL(fileURLWithPath: dir + "/history.log"))
        try Data("{\"retainedFrom\": 9, \"schemaVersion\": 2}".utf8).write(to: URL(fileURLWithPath: dir + "/history.gc.json"))
        for f in ["history.log.gc", "history.gc.json"] { try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: dir + "/" + f) }
        // The next write finishes the switch first.
        let w = s.run(["--zone", "Lists", "record", "save", "--type", "T", "--name", "r8", "n=8"])
        XCTAssertEqual(w.status, 0, w.stderr)
        XCTAssertFalse(fm.fileExists(atPath: dir + "/history.gc.json"))
        XCTAssertFalse(fm.fileExists(atPath: dir + "/history.log.gc"))
        var want = fromStart
        want["r8"] = ["n": ["type": "INT64", "value": 8]] as NSDictionary
        XCTAssertEqual(records(s.run(["--zone", "Lists", "zone", "changes", "--from-start", "--no-save"])), want)
        XCTAssertEqual(s.run(["fsck"]).object["clean"] as? Bool, true)

        // New files left aside before the switch began (no marker): removed, old files kept.
        try Data("junk\n".utf8).write(to: URL(fileURLWithPath: dir + "/history.log.gc"))
        try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: dir + "/history.log.gc")
        let f = s.run(["fsck"])
        XCTAssertTrue(f.stdout.contains("before it switched files"), f.stdout)
        XCTAssertFalse(fm.fileExists(atPath: dir + "/history.log.gc"))
        XCTAssertEqual(records(s.run(["--zone", "Lists", "zone", "changes", "--from-start", "--no-save"])), want)
    }
}
