import CKTestSupport
import XCTest

/// `ck fault`: every fault code fails a command as CloudKit fails a request — its envelope,
/// exit code and one stderr line, nothing written — counts and seeded rates repeat exactly,
/// per-record faults fail one item of a batch, scopes match only their target.
final class FaultTests: XCTestCase {
    /// Each code: serverErrorCode, ckErrorCode, exit code, whether it carries retryAfter.
    static let codes: [(String, String, Int, Int32, Bool)] = [
        ("THROTTLED", "THROTTLED", 7, 8, true),
        ("REQUEST_RATE_LIMITED", "THROTTLED", 7, 8, true),
        ("ZONE_BUSY", "TRY_AGAIN_LATER", 23, 8, true),
        ("SERVICE_UNAVAILABLE", "SERVICE_UNAVAILABLE", 6, 8, true),
        ("TRY_AGAIN_LATER", "TRY_AGAIN_LATER", 6, 8, true),
        ("NETWORK_FAILURE", "NETWORK_FAILURE", 4, 8, false),
        ("QUOTA_EXCEEDED", "QUOTA_EXCEEDED", 25, 8, false),
        ("LIMIT_EXCEEDED", "LIMIT_EXCEEDED", 27, 8, false),
        ("INTERNAL_ERROR", "INTERNAL_ERROR", 1, 1, false),
        ("CHANGE_TOKEN_EXPIRED", "CHANGE_TOKEN_EXPIRED", 21, 7, false),
        ("AUTHENTICATION_REQUIRED", "AUTHENTICATION_REQUIRED", 9, 5, false),
        ("AUTHENTICATION_FAILED", "AUTHENTICATION_FAILED", 9, 5, false),
        ("ACCESS_DENIED", "ACCESS_DENIED", 10, 5, false),
        ("BAD_REQUEST", "BAD_REQUEST", 12, 6, false),
        ("ZONE_NOT_FOUND", "ZONE_NOT_FOUND", 26, 3, false),
        ("NOT_FOUND", "NOT_FOUND", 11, 3, false),
        ("CONFLICT", "CONFLICT", 14, 4, false),
        ("EXISTS", "EXISTS", 14, 4, false),
        ("VALIDATING_REFERENCE_ERROR", "VALIDATING_REFERENCE_ERROR", 31, 6, false),
    ]

    private func envelope(_ r: CKResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(r.stderr.utf8))) as? [String: Any] ?? [:]
    }

    private func add(_ s: CLISandbox, _ args: String..., file: StaticString = #filePath, line: UInt = #line) {
        let r = s.run(["fault", "add"] + args)
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
    }

    func testEveryCodeFailsWithItsEnvelopeExitAndOneLine() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("record", "save", "--type", "T", "--name", "a", "x=1").status, 0)
        for (code, server, native, exit, retry) in Self.codes {
            let armed = s.run(["fault", "add", "--op", "records/query", "--error", code, "--times", "2"] + (retry ? ["--retry-after", "3"] : []))
            XCTAssertEqual(armed.status, 0, armed.stderr)
            let json = s.ck("record", "list", "--error-format", "json")
            assertFailure(json, exit: exit)
            let e = envelope(json)
            XCTAssertEqual(e["serverErrorCode"] as? String, server, code)
            XCTAssertEqual(e["ckErrorCode"] as? Int, native, code)
            XCTAssertEqual(e["retryAfter"] as? Int, retry ? 3 : nil, code)
            XCTAssertNotNil(e["uuid"] as? String, code)
            XCTAssertTrue((e["reason"] as? String ?? "").contains("(fault f"), code)
            let text = s.ck("record", "list")
            assertFailure(text, exit: exit, contains: "ck: \(server): ")
            XCTAssertEqual(text.stderr.contains("retry after 3 seconds"), retry, code)
            XCTAssertEqual(s.ck("record", "list").status, 0, "\(code): spent after two")
        }
        XCTAssertEqual((s.ck("fault", "list").object["faults"] as? [Any])?.count, 0)
    }

    func testFaultedZoneChangesWritesNothingAndKeepsTheBookmark() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
        XCTAssertEqual(s.ck("--zone", "Lists", "zone", "changes").status, 0, "sets the bookmark")
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--type", "T", "--name", "r1", "x=1").status, 0)
        add(s, "--op", "changes/zone", "--error", "ZONE_BUSY", "--retry-after", "1", "--zone", "Lists")
        s.assertUnchanged("faulted zone changes") {
            let r = s.ck("--zone", "Lists", "zone", "changes", "--error-format", "json")
            assertFailure(r, exit: 8)
            XCTAssertEqual(envelope(r)["retryAfter"] as? Int, 1)
            XCTAssertEqual(envelope(r)["ckErrorCode"] as? Int, 23)
            assertFailure(s.ck("--zone", "Lists", "zone", "changes"), exit: 8, contains: "TRY_AGAIN_LATER: zone busy")
            assertFailure(s.ck("--zone", "Lists", "zone", "changes", "--format", "ndjson"), exit: 8)
        }
        XCTAssertEqual(s.ck("fault", "clear").status, 0)
        let after = s.ck("--zone", "Lists", "zone", "changes")
        XCTAssertEqual((after.zoneChanges["records"] as? [[String: Any]])?.map { $0["recordName"] as? String }, ["r1"],
                       "the bookmark did not move while faulted")
    }

    func testFaultedWriteWritesNothing() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
        add(s, "--op", "*", "--error", "SERVICE_UNAVAILABLE")
        s.assertUnchanged("faulted writes") {
            assertFailure(s.ck("--zone", "Lists", "record", "save", "--type", "T", "--name", "a", "x=1"), exit: 8, contains: "SERVICE_UNAVAILABLE")
            assertFailure(s.ck("zone", "create", "Other"), exit: 8)
            assertFailure(s.ck("zone", "delete", "Lists"), exit: 8)
            assertFailure(s.ck("subscribe"), exit: 8)
            assertFailure(s.ck("record", "modify", stdin: #"{"operations": [{"operationType": "create", "record": {"recordType": "T", "recordName": "b"}}]}"#), exit: 8)
            assertFailure(s.ck("notifications", "--mark-read"), exit: 8)
            assertFailure(s.ck("database", "changes"), exit: 8)
            assertFailure(s.ck("whoami"), exit: 8)
            assertFailure(s.ck("account"), exit: 8)
        }
    }

    func testTimesFailsThatManyThenSucceeds() {
        let s = CLISandbox()
        s.signIn()
        add(s, "--op", "records/modify", "--error", "THROTTLED", "--times", "2")
        assertFailure(s.ck("record", "save", "--type", "T", "--name", "a", "x=1"), exit: 8, contains: "THROTTLED")
        XCTAssertEqual((s.ck("fault", "list").object["faults"] as? [[String: Any]])?.first?["times"] as? Int, 1)
        assertFailure(s.ck("record", "save", "--type", "T", "--name", "a", "x=1"), exit: 8, contains: "THROTTLED")
        let ok = s.ck("record", "save", "--type", "T", "--name", "a", "x=1")
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual((s.ck("fault", "list").object["faults"] as? [Any])?.count, 0, "a spent fault is gone")
    }

    /// The pass/fail sequence of `--rate 0.5 --seed 7` over 40 operations.
    private func rateSequence(seed: String) -> String {
        let s = CLISandbox()
        s.signIn()
        add(s, "--op", "records/query", "--error", "THROTTLED", "--rate", "0.5", "--seed", seed)
        return String((0..<40).map { _ in s.ck("record", "list").status == 0 ? "." : "x" })
    }

    func testRateIsReproducibleFromItsSeed() {
        let a = rateSequence(seed: "7"), b = rateSequence(seed: "7")
        XCTAssertEqual(a, b, "same seed, same sequence on two fresh data directories")
        let failed = a.filter { $0 == "x" }.count
        XCTAssertTrue((10...30).contains(failed), "about half of 40 fail: \(a)")
        XCTAssertNotEqual(a, rateSequence(seed: "8"), "another seed, another sequence")
        let s = CLISandbox()
        s.signIn()
        add(s, "--op", "records/query", "--error", "THROTTLED", "--rate", "1")
        XCTAssertEqual((0..<3).map { _ in s.ck("record", "list").status }, [8, 8, 8], "rate 1 fails every one")
        XCTAssertEqual((s.ck("fault", "list").object["faults"] as? [[String: Any]])?.first?["evaluations"] as? Int, 3)
    }

    private func results(_ r: CKResult) -> [[String: Any]] { r.object["records"] as? [[String: Any]] ?? [] }

    private let batch = #"""
    {"operations": [
      {"operationType": "create", "record": {"recordType": "T", "recordName": "a", "fields": {"x": {"value": 1}}}},
      {"operationType": "create", "record": {"recordType": "T", "recordName": "b", "fields": {"x": {"value": 2}}}},
      {"operationType": "create", "record": {"recordType": "T", "recordName": "c", "fields": {"x": {"value": 3}}}}
    ]}
    """#

    func testPerRecordFaultFailsOneItemOfABatch() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
        add(s, "--op", "records/modify", "--error", "CONFLICT", "--record", "b")
        // The default zone is not atomic: the others are saved.
        let plain = s.ck("record", "modify", stdin: batch)
        XCTAssertEqual(plain.status, 9, plain.stderr)
        XCTAssertTrue(plain.stderr.hasPrefix("ck: PARTIAL_FAILURE: 1 of 3 operations failed (first: CONFLICT"), plain.stderr)
        let items = results(plain)
        XCTAssertEqual(items.map { $0["recordName"] as? String }, ["a", "b", "c"])
        XCTAssertEqual(items.map { $0["serverErrorCode"] as? String }, [nil, "CONFLICT", nil])
        XCTAssertEqual(items[1]["ckErrorCode"] as? Int, 14)
        XCTAssertEqual(s.ck("record", "get", "a").status, 0)
        XCTAssertEqual(s.ck("record", "get", "b").status, 3, "the faulted record was not saved")
        // A custom zone's batch is atomic: the others fail with ATOMIC_ERROR, nothing is saved.
        s.assertUnchanged("atomic batch with a faulted record") {
            let atomic = s.ck("--zone", "Lists", "record", "modify", stdin: batch)
            XCTAssertEqual(atomic.status, 9, atomic.stderr)
            XCTAssertTrue(atomic.stderr.contains("(cause: CONFLICT"), atomic.stderr)
            XCTAssertEqual(results(atomic).map { $0["serverErrorCode"] as? String }, ["ATOMIC_ERROR", "CONFLICT", "ATOMIC_ERROR"])
        }
        // One record: its failure is the command's error.
        assertFailure(s.ck("record", "save", "--type", "T", "--name", "b", "x=1"), exit: 4, contains: "CONFLICT")
        XCTAssertEqual(s.ck("record", "save", "--type", "T", "--name", "d", "x=1").status, 0, "other records are untouched")

        // records/lookup: one name of several fails; alone it is the command's error.
        add(s, "--op", "records/lookup", "--error", "NOT_FOUND", "--record", "a", "--times", "1")
        let got = s.ck("record", "get", "a", "d")
        XCTAssertEqual(got.status, 9, got.stderr)
        XCTAssertEqual(results(got).map { $0["serverErrorCode"] as? String }, ["NOT_FOUND", nil])
        XCTAssertEqual(s.ck("record", "get", "a").status, 0, "the --times 1 lookup fault is spent")
        // A save's own lookups are not faulted: only the operation the command stands for.
        add(s, "--op", "records/lookup", "--error", "INTERNAL_ERROR", "--record", "a")
        XCTAssertEqual(s.ck("record", "save", "--name", "a", "--force", "x=5").status, 0)
        assertFailure(s.ck("record", "get", "a", "--error-format", "json"), exit: 1)
    }

    func testScopesMatchOnlyTheirTarget() {
        let s = CLISandbox()
        s.signIn("bob@example.com")
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
        XCTAssertEqual(s.ck("--as", "bob@example.com", "zone", "list").status, 0)

        add(s, "--op", "records/query", "--error", "THROTTLED", "--zone", "Lists")
        assertFailure(s.ck("--zone", "Lists", "record", "list"), exit: 8)
        XCTAssertEqual(s.ck("record", "list").status, 0, "another zone")
        XCTAssertEqual(s.ck("--zone", "Lists", "zone", "list").status, 0, "another operation")
        XCTAssertEqual(s.ck("fault", "clear").status, 0)

        add(s, "--op", "zones/modify", "--error", "ZONE_BUSY", "--zone", "Trips")
        assertFailure(s.ck("zone", "create", "Trips"), exit: 8, contains: "TRY_AGAIN_LATER")
        XCTAssertEqual(s.ck("zone", "create", "Other").status, 0)
        XCTAssertEqual(s.ck("fault", "clear").status, 0)

        add(s, "--op", "zones/list", "--error", "THROTTLED", "--user", "bob@example.com")
        XCTAssertEqual(s.ck("zone", "list").status, 0, "alice")
        assertFailure(s.ck("--as", "bob@example.com", "zone", "list"), exit: 8)
        XCTAssertEqual(s.ck("fault", "clear").status, 0)

        // A user record name matches the user it names.
        let me = s.ck("whoami").object["userRecordName"] as? String ?? ""
        add(s, "--op", "zones/list", "--error", "THROTTLED", "--user", me)
        assertFailure(s.ck("zone", "list"), exit: 8)
        XCTAssertEqual(s.ck("--as", "bob@example.com", "zone", "list").status, 0)
        XCTAssertEqual(s.ck("fault", "clear").status, 0)

        // The fault's device is the --device given on its line, not $CK_DEVICE.
        let added = s.run(["fault", "add", "--op", "zones/list", "--error", "THROTTLED", "--device", "phone"], env: ["CK_DEVICE": "laptop"])
        XCTAssertEqual((added.object["faults"] as? [[String: Any]])?.first?["device"] as? String, "phone")
        XCTAssertEqual(s.ck("zone", "list").status, 0, "device default")
        XCTAssertEqual(s.ck("--device", "laptop", "zone", "list").status, 0)
        assertFailure(s.ck("--device", "phone", "zone", "list"), exit: 8)
        assertFailure(s.run(["zone", "list"], env: ["CK_DEVICE": "phone"]), exit: 8)
    }

    func testFaultCommandsAreNeverFaulted() {
        let s = CLISandbox()
        s.signIn()
        add(s, "--op", "*", "--error", "INTERNAL_ERROR")
        assertFailure(s.ck("zone", "list"), exit: 1, contains: "INTERNAL_ERROR")
        for cmd in [["fault", "list"], ["help"], ["version"], ["status"], ["fsck"], ["export"], ["fault", "add", "--help"]] {
            let r = s.run(cmd)
            XCTAssertEqual(r.status, 0, "\(cmd): \(r.stderr)")
        }
        let cleared = s.ck("fault", "clear", "f1")
        XCTAssertEqual(cleared.status, 0, cleared.stderr)
        let gone = cleared.object["faults"] as? [[String: Any]] ?? []
        XCTAssertEqual(gone.map { $0["id"] as? String }, ["f1"])
        XCTAssertEqual(gone.map { $0["deleted"] as? Bool }, [true])
        XCTAssertEqual(s.ck("zone", "list").status, 0)
        assertFailure(s.ck("fault", "clear", "f1"), exit: 3, contains: "NOT_FOUND")
        XCTAssertEqual((s.ck("fault", "clear").object["faults"] as? [Any])?.count, 0, "nothing to clear")
    }

    func testFaultsAreCheckedInOrderAndListed() {
        let s = CLISandbox()
        s.signIn()
        add(s, "--op", "zones/list", "--error", "NOT_FOUND", "--times", "1")
        add(s, "--op", "*", "--error", "ACCESS_DENIED", "--times", "1")
        let list = s.ck("fault", "list").object["faults"] as? [[String: Any]] ?? []
        XCTAssertEqual(list.map { $0["id"] as? String }, ["f1", "f2"])
        XCTAssertEqual(list.map { ($0["envelope"] as? [String: Any])?["ckErrorCode"] as? Int }, [11, 10])
        assertFailure(s.ck("zone", "list"), exit: 3, contains: "(fault f1)")
        assertFailure(s.ck("zone", "list"), exit: 5, contains: "(fault f2)")
        XCTAssertEqual(s.ck("zone", "list").status, 0)
        let drop = s.ck("fault", "add", "--drop-rate", "0.25", "--seed", "3", "--device", "phone")
        let f = (drop.object["faults"] as? [[String: Any]])?.first ?? [:]
        XCTAssertEqual(f["op"] as? String, "notifications/deliver")
        XCTAssertEqual(f["drops"] as? Bool, true)
        XCTAssertEqual(f["rate"] as? Double, 0.25)
        XCTAssertEqual(f["id"] as? String, "f3", "IDs are not reused")
    }

    func testRefusalsAreUsageErrorsAndChangeNothing() {
        let s = CLISandbox()
        s.signIn()
        add(s, "--op", "zones/list", "--error", "THROTTLED")
        let long = String(repeating: "n", count: 300)
        let refused: [([String], String)] = [
            ([], "missing --op"),
            (["--op", "records/quer", "--error", "THROTTLED"], "did you mean 'records/query'"),
            (["--op", "nope", "--error", "THROTTLED"], "valid operations: records/modify"),
            (["--op", "zones/list"], "missing --error"),
            (["--op", "zones/list", "--error", "CONFLIT"], "did you mean 'CONFLICT'"),
            (["--op", "zones/list", "--error", "ATOMIC_ERROR"], "valid codes: THROTTLED"),
            (["--op", "zones/list", "--error", "NOT_FOUND", "--retry-after", "3"], "NOT_FOUND carries no retryAfter"),
            (["--op", "zones/list", "--error", "THROTTLED", "--retry-after", "-1"], "--retry-after"),
            (["--op", "zones/list", "--error", "THROTTLED", "--retry-after", "1.5"], "--retry-after"),
            (["--op", "zones/list", "--error", "THROTTLED", "--rate", "0"], "--rate must be"),
            (["--op", "zones/list", "--error", "THROTTLED", "--rate", "1.01"], "--rate must be"),
            (["--op", "zones/list", "--error", "THROTTLED", "--rate", "nan"], "--rate must be"),
            (["--op", "zones/list", "--error", "THROTTLED", "--rate", "0x1p-2"], "--rate must be"),
            (["--op", "zones/list", "--error", "THROTTLED", "--rate", "1e-320"], "--rate must be"),
            (["--op", "zones/list", "--error", "THROTTLED", "--times", "0"], "--times"),
            (["--op", "zones/list", "--error", "THROTTLED", "--times", "2", "--rate", "0.5"], "exclude each other"),
            (["--op", "zones/list", "--error", "THROTTLED", "--seed", "3"], "--seed goes with --rate"),
            (["--op", "zones/list", "--error", "THROTTLED", "--rate", "0.5", "--seed", "x"], "--seed"),
            (["--op", "zones/list", "--error", "THROTTLED", "--record", "a"], "a record scope applies to records/lookup and records/modify (or *), not zones/list"),
            (["--op", "records/modify", "--error", "THROTTLED", "--record", "a\u{1}b"], "control character"),
            (["--op", "records/modify", "--error", "THROTTLED", "--record", long], "the limit is 255 bytes"),
            (["--op", "records/modify", "--error", "THROTTLED", "--zone", "a/b"], "invalid zone name"),
            (["--op", "records/modify", "--error", "THROTTLED", "--user", "not@valid"], "not a valid Apple ID"),
            (["--op", "records/modify", "--error", "THROTTLED", "--user", "_x\u{7f}"], "control character"),
            (["--op", "notifications/deliver", "--error", "THROTTLED"], "takes no --error"),
            (["--drop-rate", "0.5", "--op", "zones/list"], "--drop-rate"),
            (["--op", "zones/list", "--error", "THROTTLED", "extra"], "unexpected argument"),
        ]
        s.assertUnchanged("refused fault add") {
            for (args, message) in refused {
                let r = s.run(["fault", "add"] + args)
                XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
                XCTAssertEqual(r.stdout, "", "\(args)")
                XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
            }
            XCTAssertEqual(s.ck("fault", "clear", "f1", "f2").status, 2)
        }
    }

    func testADamagedFaultsFileIsClearedByFaultClear() throws {
        let s = CLISandbox()
        s.signIn()
        add(s, "--op", "zones/list", "--error", "THROTTLED")
        try Data("{not json".utf8).write(to: s.dataDir.appendingPathComponent("faults.json"))
        let broken = s.ck("zone", "list")
        assertFailure(broken, exit: 1, contains: "is damaged")
        XCTAssertTrue(broken.stderr.contains("; clearing the faults removes it: ck fault clear\n"), broken.stderr)
        XCTAssertFalse(broken.stderr.contains("ck fsck"), "fsck does not mend the faults file: the hint must not send the user there")
        XCTAssertEqual(s.ck("fault", "clear").status, 0)
        XCTAssertEqual(s.ck("zone", "list").status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.dataDir.appendingPathComponent("faults.json").path))
    }
}
