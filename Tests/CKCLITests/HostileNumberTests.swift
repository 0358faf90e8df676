import CKTestSupport
import Foundation
import XCTest
@testable import CKCLI

/// Numbers a hostile user types (issue 30, item 3): each is BAD_REQUEST (exit 6) or a usage
/// error, never a trap (SIGILL, exit 132 from the binary; here it would end the test process).
final class HostileNumberTests: XCTestCase {
    static let hostileTimes = ["99999999999 weeks ago", "9223372036854775807s ago", "9223372036854775 days ago",
                               "1000000000000000 hours ago", "15000000 weeks ago"]

    func zone(_ s: CLISandbox) {
        s.signIn()
        XCTAssertEqual(s.run(["zone", "create", "Lists"]).status, 0)
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "save", "--type", "T", "--name", "r1", "n=1"]).status, 0)
    }

    func testEveryCommandTakingATimeReferenceRefusesOneOutOfRange() {
        let s = CLISandbox()
        zone(s)
        let before = s.snapshot()
        for t in Self.hostileTimes {
            let commands: [[String]] = [
                ["record", "get", "r1", "--at", t], ["record", "list", "--at", t], ["record", "query", "--type", "T", "--at", t],
                ["export", "--at", t], ["log", "--since", t], ["log", "--until", t], ["show", t], ["diff", t], ["blame", "r1", "--at", t],
                ["restore", t, "--dry-run"], ["revert", t, "--dry-run"], ["gc", "--keep-since", t], ["tag", "create", t],
            ]
            for c in commands {
                let r = s.run(["--zone", "Lists"] + c)
                XCTAssertTrue(r.status == 6 || r.status == 2, "\(c): exit \(r.status), \(r.stderr)")
                XCTAssertEqual(r.stdout, "", "\(c)")
                if r.status == 6 { XCTAssertTrue(r.stderr.contains("BAD_REQUEST"), "\(c): \(r.stderr)") }
            }
        }
        XCTAssertEqual(s.snapshot(), before, "refusals write nothing")
    }

    func testAnOutOfRangeTimeReferenceNamesTheRange() {
        let s = CLISandbox()
        zone(s)
        assertFailure(s.run(["--zone", "Lists", "record", "get", "r1", "--at", "99999999999 weeks ago"]), exit: 6, contains: "out of range")
        assertFailure(s.run(["--zone", "Lists", "log", "--since", "9223372036854775807s ago"]), exit: 6, contains: "out of range")
        assertFailure(s.run(["--zone", "Lists", "record", "get", "r1", "--at", "99999999999999999999999"]), exit: 6, contains: "too large")
        assertFailure(s.run(["--zone", "Lists", "record", "get", "r1", "--at", "Lists@99999999999999999999999"]), exit: 6, contains: "too large")
        // In range, long ago: before the history (a plain refusal, not a crash).
        XCTAssertNotEqual(s.run(["--zone", "Lists", "record", "get", "r1", "--at", "100000 weeks ago"]).status, 132)
    }

    func testTimestampFieldsOutOfRangeAreRefused() {
        let s = CLISandbox()
        zone(s)
        let before = s.snapshot()
        for v in ["-9223372036854775808", "9223372036854775807", "8640000000000001", "-8640000000000001"] {
            assertFailure(s.run(["--zone", "Lists", "record", "save", "--type", "T", "--name", "t1", "v:TIMESTAMP=\(v)"]), exit: 6, contains: "out of range")
        }
        let stdin = #"{"recordName": "t2", "recordType": "T", "fields": {"v": {"type": "TIMESTAMP", "value": -9223372036854775808}}}"#
        assertFailure(s.run(["--zone", "Lists", "record", "save", "--stdin"], stdin: stdin), exit: 6, contains: "out of range")
        XCTAssertEqual(s.snapshot(), before)
        // The edges themselves are values, and print in every format.
        for (name, v) in [("lo", "-8640000000000000"), ("hi", "8640000000000000")] {
            XCTAssertEqual(s.run(["--zone", "Lists", "record", "save", "--type", "T", "--name", name, "v:TIMESTAMP=\(v)"]).status, 0)
            for f in ["table", "csv", "tsv", "json"] {
                let r = s.run(["--zone", "Lists", "record", "get", name, "--format", f])
                XCTAssertEqual(r.status, 0, "\(f): \(r.stderr)")
            }
        }
    }

    func testALocationWhoseTimestampIsOutOfRangeIsRefused() {
        let s = CLISandbox()
        zone(s)
        let before = s.snapshot()
        for ts in ["9223372036854775807", "-9223372036854775808", "1e300", "1.5", "9.3e18"] {
            let stdin = #"{"recordName": "p1", "recordType": "T", "fields": {"where": {"type": "LOCATION", "value": {"latitude": 1, "longitude": 2, "timestamp": \#(ts)}}}}"#
            assertFailure(s.run(["--zone", "Lists", "record", "save", "--stdin"], stdin: stdin), exit: 6, contains: "timestamp")
        }
        XCTAssertEqual(s.snapshot(), before)
        let ok = #"{"recordName": "p1", "recordType": "T", "fields": {"where": {"type": "LOCATION", "value": {"latitude": 1, "longitude": 2, "timestamp": 1700000000000}}}}"#
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "save", "--stdin"], stdin: ok).status, 0)
    }

    /// A timestamp stored before the range was enforced (or written by hand) still prints.
    func testTableTimeOfAnyStoredTimestampDoesNotTrap() {
        let t = LocalTime(environment: ["TZ": "Europe/Paris"])
        XCTAssertEqual(t.iso(Int64.min), String(Int64.min))
        XCTAssertEqual(t.iso(Int64.max), String(Int64.max))
        XCTAssertEqual(t.iso(0), "1970-01-01T01:00:00.000+01:00")
    }
}
