import CKTestSupport
import Foundation
import XCTest

/// `--format table`, `csv` and `tsv` through the command line: column order, camelCase
/// headers, local ISO time from TZ, flattened values, escaping and quoting, what goes where
/// for the rest of a document, and commands whose output is not JSON ignoring --format.
final class TableFormatTests: XCTestCase {
    /// The record's metadata as JSON has it: created and modified timestamps and the user.
    private struct Meta { let created: Int64; let modified: Int64; let user: String }

    private func meta(_ s: CLISandbox, _ args: [String]) -> Meta {
        let r = s.run(["record", "get"] + args).record
        let created = r["created"] as? [String: Any] ?? [:], modified = r["modified"] as? [String: Any] ?? [:]
        return Meta(created: (created["timestamp"] as? NSNumber)?.int64Value ?? -1,
                    modified: (modified["timestamp"] as? NSNumber)?.int64Value ?? -1,
                    user: created["userRecordName"] as? String ?? "?")
    }

    /// An independent oracle for local ISO time: Foundation's formatter in the zone named.
    private func iso(_ ms: Int64, _ tz: String) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.calendar = Calendar(identifier: .gregorian)
        f.timeZone = TimeZone(identifier: tz)!
        f.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSxxxxx"
        return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    private func pad(_ s: String, _ n: Int) -> String { s + String(repeating: " ", count: max(0, n - s.count)) }

    func testRecordTableOrdersNameTypeFieldsMetadataWithCamelCaseHeadersAndLocalTime() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        let save = s.run(["record", "save", "--zone", "Z", "--type", "Note", "--name", "n1",
                          "title:STRING=Hi\nthere\tyou\\", "n:INT64=3", "when:TIMESTAMP=2026-11-23T09:15:00.123Z",
                          "loc:LOCATION=1.5,2.25", "ref:REFERENCE=other", "tags:STRING_LIST=a,b"])
        XCTAssertEqual(save.status, 0, save.stderr)
        let m = meta(s, ["--zone", "Z", "n1"])
        let tz = "Europe/Paris"
        let r = s.run(["record", "get", "--zone", "Z", "n1", "--format", "table"], env: ["TZ": tz])
        XCTAssertEqual(r.status, 0, r.stderr)
        let created = iso(m.created, tz), modified = iso(m.modified, tz)
        XCTAssertEqual(created.count, 29)
        let w = m.user.count
        // The title's newline, tab and backslash are escaped: one line per record.
        let expected = """
        recordName  recordType  loc       n  ref    tags  title             when                           recordChangeTag  zoneName  created                        \(pad("createdBy", w))  modified                       \(pad("modifiedBy", w))  deleted
        n1          Note        1.5,2.25  3  other  a, b  Hi\\nthere\\tyou\\\\  2026-11-23T10:15:00.123+01:00  1                Z         \(created)  \(m.user)  \(modified)  \(m.user)  false

        """
        XCTAssertEqual(r.stdout, expected)
        XCTAssertEqual(r.stderr, "")
    }

    func testTimestampsFollowTZIncludingDaylightSavingAndHalfHourZones() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.run(["record", "save", "--type", "E", "--name", "e1",
                              "at:TIMESTAMP=2026-11-23T09:15:00.123Z", "summer:TIMESTAMP=2026-07-01T12:00:00Z"]).status, 0)
        let m = meta(s, ["e1"])
        let cases = [
            ("Europe/Paris", "2026-11-23T10:15:00.123+01:00", "2026-07-01T14:00:00.000+02:00"),
            ("America/New_York", "2026-11-23T04:15:00.123-05:00", "2026-07-01T08:00:00.000-04:00"),
            ("Asia/Kolkata", "2026-11-23T14:45:00.123+05:30", "2026-07-01T17:30:00.000+05:30"),
            ("UTC", "2026-11-23T09:15:00.123+00:00", "2026-07-01T12:00:00.000+00:00"),
        ]
        for (tz, at, summer) in cases {
            let r = s.run(["record", "get", "e1", "--format", "csv"], env: ["TZ": tz])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stdout, """
            recordName,recordType,at,summer,recordChangeTag,zoneName,created,createdBy,modified,modifiedBy,deleted\r
            e1,E,\(at),\(summer),1,_defaultZone,\(iso(m.created, tz)),\(m.user),\(iso(m.modified, tz)),\(m.user),false\r

            """, tz)
        }
    }

    func testALocalTimeWrittenWithoutOffsetShowsAsWritten() {
        let s = CLISandbox()
        s.signIn()
        let env = ["TZ": "America/New_York"]
        XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", "w", "when:TIMESTAMP=2026-03-08T01:30"], env: env).status, 0)
        let r = s.run(["record", "get", "w", "--format", "tsv"], env: env)
        XCTAssertEqual(r.stdout.split(separator: "\n").map { String($0.split(separator: "\t", omittingEmptySubsequences: false)[2]) },
                       ["when", "2026-03-08T01:30:00.000-05:00"])
    }

    func testCSVQuotesCommasQuotesAndLineBreaksRFC4180() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", "c1", "a:STRING=say \"hi\", ok",
                              "b:STRING=line1\nline2", "c:STRING=cr\r\nlf", "d:STRING=plain text", "e:DOUBLE_LIST=1.5,2"]).status, 0)
        let m = meta(s, ["c1"])
        let r = s.run(["record", "get", "c1", "--format", "csv"], env: ["TZ": "UTC"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let t = iso(m.created, "UTC"), u = iso(m.modified, "UTC")
        XCTAssertEqual(r.stdout, "recordName,recordType,a,b,c,d,e,recordChangeTag,zoneName,created,createdBy,modified,modifiedBy,deleted\r\n"
                       + "c1,T,\"say \"\"hi\"\", ok\",\"line1\nline2\",\"cr\r\nlf\",plain text,\"1.5, 2.0\",1,_defaultZone,\(t),\(m.user),\(u),\(m.user),false\r\n")
    }

    func testTSVEscapesTabsNewlinesBackslashesAndControlCharacters() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", "t1", "a:STRING=x\ty", "b:STRING=1\n2\r3",
                              "c:STRING=C:\\new", "d:STRING=esc\u{1B}[31m"]).status, 0)
        let m = meta(s, ["t1"])
        let r = s.run(["record", "get", "t1", "--format", "tsv"], env: ["TZ": "UTC"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let t = iso(m.created, "UTC"), u = iso(m.modified, "UTC")
        XCTAssertEqual(r.stdout, "recordName\trecordType\ta\tb\tc\td\trecordChangeTag\tzoneName\tcreated\tcreatedBy\tmodified\tmodifiedBy\tdeleted\n"
                       + "t1\tT\tx\\ty\t1\\n2\\r3\tC:\\\\new\tesc\\x1b[31m\t1\t_defaultZone\t\(t)\t\(m.user)\t\(u)\t\(m.user)\tfalse\n")
    }

    func testAFieldNamedLikeAMetadataColumnKeepsItsOwnColumn() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", "f1", "created:STRING=yesterday"]).status, 0)
        let m = meta(s, ["f1"])
        let r = s.run(["record", "get", "f1", "--format", "csv"], env: ["TZ": "UTC"])
        XCTAssertEqual(r.stdout, "recordName,recordType,fields.created,recordChangeTag,zoneName,created,createdBy,modified,modifiedBy,deleted\r\n"
                       + "f1,T,yesterday,1,_defaultZone,\(iso(m.created, "UTC")),\(m.user),\(iso(m.modified, "UTC")),\(m.user),false\r\n")
    }

    func testBatchErrorsAndTombstonesShareTheRecordColumns() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", "a", "v:INT64=1"]).status, 0)
        let m = meta(s, ["a"])
        let r = s.run(["record", "get", "a", "missing", "--format", "csv"], env: ["TZ": "UTC"])
        XCTAssertEqual(r.status, 9)
        XCTAssertEqual(r.stdout, "recordName,recordType,v,recordChangeTag,zoneName,created,createdBy,modified,modifiedBy,deleted,serverErrorCode,reason\r\n"
                       + "a,T,1,1,_defaultZone,\(iso(m.created, "UTC")),\(m.user),\(iso(m.modified, "UTC")),\(m.user),false,,\r\n"
                       + "missing,,,,,,,,,,NOT_FOUND,record 'missing' not found in zone _defaultZone of the private database\r\n")
        let d = s.run(["record", "delete", "a", "--format", "table"])
        XCTAssertEqual(d.status, 0, d.stderr)
        XCTAssertEqual(d.stdout, "recordName  deleted\na           true\n")
    }

    func testZonesAndSubscriptionsFlattenNestedValues() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Work").status, 0)
        let who = s.ck("whoami").object["userRecordName"] as? String ?? "?"
        let w = who.count
        let zones = s.run(["zone", "list", "--format", "table"])
        XCTAssertEqual(zones.status, 0, zones.stderr)
        XCTAssertEqual(zones.stdout, """
        zoneName      \(pad("ownerRecordName", w))  zoneType             atomic  isEligibleForHierarchicalShare  isEligibleForZoneShare
        _defaultZone  \(who)  DEFAULT_ZONE         false   false                           false
        Work          \(who)  REGULAR_CUSTOM_ZONE  true    true                            true

        """)

        XCTAssertEqual(s.run(["subscribe", "query", "--type", "T", "--filter", "n > 1", "--id", "big", "--alert-body", "Big one"]).status, 0)
        let subs = s.run(["subscription", "list", "--format", "tsv"])
        XCTAssertEqual(subs.status, 0, subs.stderr)
        XCTAssertEqual(subs.stdout, """
        subscriptionID\tsubscriptionType\tfiresOn\tfiresOnce\tnotificationInfo.alertBody\tnotificationInfo.shouldSendContentAvailable\tquery.filterBy\tquery.recordType\tzoneWide
        big\tquery\tcreate, update, delete\tfalse\tBig one\tfalse\tn GREATER_THAN 1\tT\ttrue

        """)
    }

    func testZoneChangesRowsAreRecordsAndTheTokenEndsTheTableOrGoesToStderr() throws {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        XCTAssertEqual(s.run(["record", "save", "--zone", "Z", "--type", "T", "--name", "r", "v:INT64=7"]).status, 0)
        let m = meta(s, ["--zone", "Z", "r"])
        let json = s.run(["zone", "changes", "--zone", "Z", "--from-start", "--no-save"]).zoneChanges
        let token = try XCTUnwrap(json["syncToken"] as? String)
        let t = iso(m.created, "Asia/Tokyo"), u = iso(m.modified, "Asia/Tokyo"), w = m.user.count
        let table = s.run(["zone", "changes", "--zone", "Z", "--from-start", "--no-save", "--format", "table"], env: ["TZ": "Asia/Tokyo"])
        XCTAssertEqual(table.status, 0, table.stderr)
        XCTAssertEqual(table.stdout, """
        recordName  recordType  v  recordChangeTag  zoneName  created                        \(pad("createdBy", w))  modified                       \(pad("modifiedBy", w))  deleted
        r           T           7  1                Z         \(t)  \(m.user)  \(u)  \(m.user)  false
        moreComing (Z): false
        syncToken (Z): \(token)

        """)
        let csv = s.run(["zone", "changes", "--zone", "Z", "--from-start", "--no-save", "--format", "csv"], env: ["TZ": "Asia/Tokyo"])
        XCTAssertEqual(csv.status, 0, csv.stderr)
        XCTAssertEqual(csv.stdout, "recordName,recordType,v,recordChangeTag,zoneName,created,createdBy,modified,modifiedBy,deleted\r\n"
                       + "r,T,7,1,Z,\(t),\(m.user),\(u),\(m.user),false\r\n")
        XCTAssertEqual(csv.stderr, "ck: moreComing (Z): false\nck: syncToken (Z): \(token)\n")
    }

    func testStreamedListsAndEventsUseTheSameColumnsAndLocalTime() throws {
        let s = CLISandbox()
        s.signIn()
        let events = s.ck("account", "events").object["events"] as? [[String: Any]] ?? []
        let e = try XCTUnwrap(events.first)
        let ts = try XCTUnwrap((e["timestamp"] as? NSNumber)?.int64Value)
        let user = e["userRecordName"] as? String ?? "?"
        let r = s.run(["account", "events", "--format", "csv"], env: ["TZ": "America/Sao_Paulo"])
        XCTAssertEqual(r.stdout, "seq,timestamp,userRecordName,appleID,status,type\r\n"
                       + "1,\(iso(ts, "America/Sao_Paulo")),\(user),alice@example.com,available,accountChanged\r\n")

        for n in ["b", "a"] { XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", n, "x:STRING=\(n)"]).status, 0) }
        let list = s.run(["record", "list", "--format", "tsv"], env: ["TZ": "UTC"])
        XCTAssertEqual(list.status, 0, list.stderr)
        let rows = list.stdout.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).prefix(4).joined(separator: "|") }
        XCTAssertEqual(rows.first, "recordName|recordType|x|recordChangeTag")
        XCTAssertEqual(Set(rows.dropFirst()), ["a|T|a|2", "b|T|b|1"])
        XCTAssertEqual(s.run(["record", "list", "--format", "tsv"], env: ["TZ": "UTC"]).stdout, list.stdout, "deterministic")
    }

    func testTableAlignsWideCharactersAndEscapesTerminalControls() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", "a", "title:STRING=日本語"]).status, 0)
        XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", "b", "title:STRING=x\u{9B}2Jy"]).status, 0)
        let r = s.run(["record", "get", "a", "b", "--format", "table"])
        XCTAssertEqual(r.status, 0, r.stderr)
        // 日本語 takes six terminal columns; U+009B (CSI) is shown, not obeyed.
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, r.stdout)
        for (line, start) in zip(lines, ["recordName  recordType  title       recordChangeTag  zoneName",
                                         "a           T           日本語      1                _defaultZone",
                                         "b           T           x\\u009b2Jy  2                _defaultZone"]) {
            XCTAssertTrue(line.hasPrefix(start), "\(line)\ndoes not start with\n\(start)")
        }
        // TSV keeps it: it is text, not a terminal control there.
        let tsv = s.run(["record", "get", "b", "--format", "tsv"])
        XCTAssertTrue(tsv.stdout.contains("\tx\u{9B}2Jy\t"), tsv.stdout)
    }

    func testAnEmptyListPrintsNothing() {
        let s = CLISandbox()
        s.signIn()
        for f in ["table", "csv", "tsv"] {
            let r = s.run(["record", "list", "--format", f])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stdout, "", f)
        }
    }

    func testCommandsWhoseOutputIsNotJSONSaySoAndIgnoreFormat() throws {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", "r", "v:INT64=1"]).status, 0)
        let ckdb = s.ck("schema", "export")
        XCTAssertTrue(ckdb.stdout.hasPrefix("DEFINE SCHEMA"), ckdb.stdout)
        for f in ["table", "csv", "tsv", "ndjson"] {
            XCTAssertEqual(s.run(["schema", "export", "--format", f]).stdout, ckdb.stdout, f)
        }
        let help = s.ck("schema", "export", "--help").stdout
        XCTAssertTrue(help.contains("not JSON") && help.contains("--format does not change it"), help)

        let file = s.root.appendingPathComponent("blob.bin")
        // What CSV, TSV or a table would quote or escape: comma, quote, newline, tab, backslash.
        let bytes = Data("a,\"b\"\n\tc\\".utf8)
        try bytes.write(to: file)
        XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", "a", "--force", "f:ASSET=@\(file.path)"]).status, 0)
        for f in ["json", "table", "csv", "tsv"] {
            let r = s.run(["record", "get", "a", "--asset", "f", "--format", f])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(Data(r.stdout.utf8), bytes, f)
        }
        let getHelp = s.ck("record", "get", "--help").stdout
        XCTAssertTrue(getHelp.contains("--asset FIELD, stdout is the bytes") && getHelp.contains("not JSON"), getHelp)
    }

    func testAssetsShowTheirChecksumPrefixAndSize() throws {
        let s = CLISandbox()
        s.signIn()
        let file = s.root.appendingPathComponent("hello.txt")
        try Data("hello".utf8).write(to: file)
        XCTAssertEqual(s.run(["record", "save", "--type", "T", "--name", "a", "f:ASSET=@\(file.path)"]).status, 0)
        let r = s.run(["record", "get", "a", "--fields", "f", "--format", "tsv"])
        XCTAssertEqual(r.status, 0, r.stderr)
        // sha256("hello") = 2cf24dba5fb0a30e…
        XCTAssertEqual(r.stdout.split(separator: "\n").map { String($0.split(separator: "\t", omittingEmptySubsequences: false)[2]) },
                       ["f", "2cf24dba5fb0 (5 bytes)"])
    }
}
