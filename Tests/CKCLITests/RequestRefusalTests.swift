import CKTestSupport
import Foundation
import XCTest

/// What a hostile review of the wire shapes found (issue 11 follow-up): requests that named a
/// zone other than their own, typeless values of the wrong kind, unnamed updates, empty tags,
/// C1 control characters, names compared by bytes, and bookmarks after a partial failure.
final class RequestRefusalTests: XCTestCase {
    private func sandbox() -> CLISandbox {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        return s
    }

    func testARecordNamingAnotherZoneIsRefusedWhole() {
        let s = sandbox()
        for body in [
            #"{"operations":[{"operationType":"create","record":{"recordName":"m","recordType":"T","zoneID":{"zoneName":"Elsewhere"}}}]}"#,
            #"{"zoneID":{"zoneName":"Z"},"operations":[{"operationType":"create","record":{"recordName":"m","recordType":"T","zoneID":{"zoneName":"_defaultZone"}}}]}"#,
        ] {
            s.assertUnchanged("a record of another zone") {
                assertFailure(s.run(["--zone", "Z", "record", "modify"], stdin: body), exit: 6, contains: "but the request is for zone 'Z'")
            }
        }
        // Its own zone, said again, is fine.
        let same = #"{"operations":[{"operationType":"create","record":{"recordName":"m","recordType":"T","zoneID":{"zoneName":"Z","ownerRecordName":"_x"}}}]}"#
        XCTAssertEqual(s.run(["--zone", "Z", "record", "modify"], stdin: same).status, 0)
    }

    func testTypelessValuesThatCannotBeTypedFailTheirRecordOnly() {
        let s = sandbox()
        let body = #"{"operations":[{"operationType":"create","record":{"recordName":"ok1","recordType":"T","fields":{"s":{"value":"fine"}}}},{"operationType":"create","record":{"recordName":"obj","recordType":"T","fields":{"ts":{"value":{"a":1}}}}}]}"#
        let r = s.run(["record", "modify", "--format", "ndjson"], stdin: body)
        XCTAssertEqual(r.status, 9, r.stderr)
        let lines = r.stdout.split(separator: "\n").map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual(lines[0]["recordName"] as? String, "ok1")
        XCTAssertEqual(lines[1]["serverErrorCode"] as? String, "BAD_REQUEST")
        XCTAssertTrue((lines[1]["reason"] as? String ?? "").contains("cannot infer the type of object value"))
        // With the schema's type known, the same object is "expected type X" for that record.
        XCTAssertEqual(s.ck("record", "save", "--type", "T", "--name", "t", "when:TIMESTAMP=2026-01-01T00:00:00Z").status, 0)
        let typed = s.run(["record", "modify"], stdin: #"{"operations":[{"operationType":"create","record":{"recordName":"o2","recordType":"T","fields":{"when":{"value":{"a":1}}}}}]}"#)
        XCTAssertEqual(typed.status, 9)
        XCTAssertTrue(typed.stdout.contains("Invalid value, expected type TIMESTAMP"), typed.stdout)
        assertFailure(s.ck("record", "get", "o2"), exit: 3)
    }

    func testUpdatesNameTheirRecordAndAnEmptyTagIsNoTag() {
        let s = sandbox()
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "u", "a=1").status, 0)
        s.assertUnchanged("unnamed update") {
            for t in ["update", "replace"] {
                let body = #"{"operations":[{"operationType":"\#(t)","record":{"recordType":"T","recordChangeTag":"1"}}]}"#
                let r = s.run(["--zone", "Z", "record", "modify"], stdin: body)
                assertFailure(r, exit: 6, contains: "operations[0]: \(t) needs a recordName")
                // The same bytes every time: no invented name.
                XCTAssertEqual(r.stderr, s.run(["--zone", "Z", "record", "modify"], stdin: body).stderr)
            }
            let empty = #"{"operations":[{"operationType":"update","record":{"recordName":"u","recordType":"T","recordChangeTag":""}}]}"#
            assertFailure(s.run(["--zone", "Z", "record", "modify"], stdin: empty), exit: 6, contains: "missing required field 'recordChangeTag'")
        }
    }

    func testC1ControlCharactersAreRefusedInNames() {
        let s = sandbox()
        s.assertUnchanged("C1 control character") {
            let body = "{\"operations\":[{\"operationType\":\"create\",\"record\":{\"recordName\":\"c1\\u0085x\",\"recordType\":\"T\"}}]}"
            assertFailure(s.run(["--zone", "Z", "record", "modify"], stdin: body), exit: 6, contains: "contains a control character (\\u{85})")
            assertFailure(s.ck("zone", "create", "z\u{9B}"), exit: 6, contains: "control character")
        }
    }

    func testRecordNamesInFiltersCompareByBytes() {
        let s = sandbox()
        for n in ["Todo", "todo", "caf\u{E9}", "cafe\u{301}"] {
            XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", n, "a=1").status, 0)
        }
        // A filter on recordName needs "___recordID" QUERYABLE.
        XCTAssertEqual(s.ck("schema", "index", "add", "T", "recordName", "QUERYABLE").status, 0)
        func query(_ filter: String) -> [String] {
            let r = s.ck("-q", "--zone", "Z", "record", "query", "--type", "T", "--filter", filter, "--format", "ndjson")
            XCTAssertEqual(r.status, 0, r.stderr)
            return names(r)
        }
        XCTAssertEqual(query("recordName == todo"), ["todo"])
        XCTAssertEqual(query("recordName == Todo"), ["Todo"])
        XCTAssertEqual(query("recordName == caf\u{E9}").map { Array($0.utf8) }, [Array("caf\u{E9}".utf8)])
    }

    func testSameZoneTwiceInNormalizationFormsIsTwoZones() {
        let s = sandbox()
        let nfc = "Z\u{E9}", nfd = "Ze\u{301}"
        XCTAssertEqual(s.ck("zone", "create", nfc, nfd).status, 0)
        s.assertUnchanged("two --zone spellings on a one-zone command") {
            assertFailure(s.ck("--zone", nfc, "--zone", nfd, "record", "save", "--type", "T", "--name", "q", "t=1"), exit: 2, contains: "--zone")
        }
        // zone changes takes both: they are two zones.
        let r = s.ck("--zone", nfc, "--zone", nfd, "zone", "changes")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual((r.object["zones"] as? [Any])?.count, 2)
    }

    func testAPartialFailureOfZoneChangesMovesNoBookmark() {
        let s = sandbox()
        XCTAssertEqual(s.ck("--zone", "Z", "zone", "changes").status, 0)
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "r1", "t=1").status, 0)
        s.assertUnchanged("zone changes with a missing zone") {
            let partial = s.ck("--zone", "Z", "--zone", "Nope", "zone", "changes")
            XCTAssertEqual(partial.status, 9)
            XCTAssertEqual(((partial.object["zones"] as? [[String: Any]])?.first?["records"] as? [Any])?.count, 1)
        }
        // A retry sees the change again.
        let again = s.ck("--zone", "Z", "zone", "changes")
        XCTAssertEqual((again.zoneChanges["records"] as? [Any])?.count, 1)
    }
}
