import CKTestSupport
import Foundation
import XCTest

/// What an interrupted append leaves at the end of a log — written here byte for byte — is
/// never read as data, is cut by the next writer, and never costs an acknowledged record.
final class TornTailTests: XCTestCase {
    private func file(_ s: CLISandbox, endingWith suffix: String) throws -> URL {
        let all = try FileManager.default.subpathsOfDirectory(atPath: s.dataDir.path).filter { $0.hasSuffix(suffix) }.sorted { $0.count < $1.count }
        guard let f = all.first else { throw XCTSkip("no \(suffix)") }
        return s.dataDir.appendingPathComponent(f)
    }

    private func append(_ url: URL, _ bytes: [UInt8]) throws {
        let h = try FileHandle(forWritingTo: url)
        try h.seekToEnd()
        try h.write(contentsOf: Data(bytes))
        try h.close()
    }

    private func json(_ r: CKResult) -> [String: Any] { (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any] ?? [:] }

    private func seeded() -> CLISandbox {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "A", "v=acknowledged-a").status, 0)
        return s
    }

    /// The case that once destroyed an acknowledged record: a whole entry a killed save wrote
    /// to the log but never committed, naming the record the next save writes.
    func testAWholeUncommittedEntryNeverBecomesARecord() throws {
        let s = seeded()
        let log = try file(s, endingWith: "zones/Z/history.log")
        let ghost = "{\"seq\":2,\"op\":\"save\",\"recordName\":\"B\",\"recordChangeTag\":\"2\",\"timestamp\":1,\"userRecordName\":\"x\",\"deviceID\":\"x\"," +
            "\"record\":{\"recordName\":\"B\",\"recordType\":\"T\",\"recordChangeTag\":\"2\",\"fields\":{\"v\":{\"type\":\"STRING\",\"value\":\"ghost\"}}," +
            "\"created\":{\"timestamp\":1,\"userRecordName\":\"x\",\"deviceID\":\"x\"},\"modified\":{\"timestamp\":1,\"userRecordName\":\"x\",\"deviceID\":\"x\"}," +
            "\"deleted\":false,\"zoneID\":{\"zoneName\":\"Z\",\"ownerRecordName\":\"x\"}}}\n"
        try append(log, Array(ghost.utf8))
        // Readers do not see it.
        let feed = s.ck("--zone", "Z", "zone", "changes", "--from-start", "--no-save").zoneChanges
        XCTAssertEqual((feed["records"] as? [[String: Any]])?.compactMap { $0["recordName"] as? String }, ["A"])
        // The next save is acknowledged, as seq 2, in place of the ghost.
        let saved = s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "B", "v=acknowledged-b").record
        XCTAssertEqual(saved["recordChangeTag"] as? String, "2")
        XCTAssertEqual(s.ck("fsck").status, 0)
        XCTAssertTrue(s.ck("fsck", "--dry-run").stdout.contains("\"clean\": true"))
        let b = s.ck("--zone", "Z", "record", "get", "B").record
        XCTAssertEqual(((b["fields"] as? [String: Any])?["v"] as? [String: Any])?["value"] as? String, "acknowledged-b")
        let all = s.ck("--zone", "Z", "zone", "changes", "--from-start", "--no-save").zoneChanges["records"] as? [[String: Any]] ?? []
        XCTAssertEqual(all.count, 2)
        XCTAssertFalse(try String(contentsOf: log, encoding: .utf8).contains("ghost"), "the uncommitted entry was cut")
    }

    /// Torn bytes at the end of every log: the history's log and index, the database's
    /// history, the account events, a notification log. Reads go on; the next write cuts them.
    func testTornTailsOfEveryLogAreCutAndNeverRead() throws {
        let s = seeded()
        XCTAssertEqual(s.ck("--device", "v", "subscribe", "zone", "--zone", "Z").status, 0)
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "C", "v=c").status, 0)
        try append(try file(s, endingWith: "zones/Z/history.log"), Array("{\"seq\":4,\"op\":\"sa".utf8))
        try append(try file(s, endingWith: "zones/Z/history.idx"), [0x80, 0x00, 0x00])
        let dbLog = try FileManager.default.subpathsOfDirectory(atPath: s.dataDir.path).first { $0.hasSuffix("/history.log") && !$0.contains("/zones/") }!
        try append(s.dataDir.appendingPathComponent(dbLog), Array("{\"seq\":9,\"op\":\"cre".utf8))
        try append(s.dataDir.appendingPathComponent("account-events.ndjson"), Array("{\"seq\":7,\"type\":\"accou".utf8))
        try append(try file(s, endingWith: "/v/log.ndjson"), Array("{\"seq\":3,\"notifi".utf8))

        XCTAssertEqual(s.ck("--zone", "Z", "zone", "changes", "--from-start", "--no-save").status, 0)
        XCTAssertEqual(s.ck("database", "changes", "--from-start", "--no-save").status, 0)
        XCTAssertEqual((json(s.ck("account", "events"))["events"] as? [Any])?.count, 1)
        let notes = s.ck("--device", "v", "notifications")
        XCTAssertEqual(notes.status, 0, notes.stderr)

        // Every write still works, and cuts what it finds.
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "D", "v=d").status, 0)
        XCTAssertEqual(s.ck("zone", "create", "Y").status, 0)
        XCTAssertEqual(s.ck("account", "signin", "bob@example.com").status, 0)
        s.signIn()
        XCTAssertEqual((json(s.ck("account", "events"))["events"] as? [[String: Any]])?.map { $0["seq"] as? Int }, [1, 2, 3])
        let v = json(s.ck("--device", "v", "notifications"))["notifications"] as? [[String: Any]] ?? []
        XCTAssertEqual(v.count, 1, "the zone notification for D arrived after the torn bytes (coalesced with C's)")
        let fsck = s.ck("fsck")
        XCTAssertEqual(fsck.status, 0, fsck.stdout)
        XCTAssertTrue(s.ck("fsck", "--dry-run").stdout.contains("\"clean\": true"))
        let feed = s.ck("--zone", "Z", "zone", "changes", "--from-start", "--no-save").zoneChanges["records"] as? [[String: Any]] ?? []
        XCTAssertEqual(feed.compactMap { $0["recordName"] as? String }.sorted(), ["A", "C", "D"])
    }

    /// fsck alone repairs torn tails, and says so; a second run is clean.
    func testFsckCutsTornTailsAndSaysSo() throws {
        let s = seeded()
        try append(try file(s, endingWith: "zones/Z/history.log"), Array("{\"seq\":2,\"op\":\"sa".utf8))
        try append(try file(s, endingWith: "zones/Z/history.idx"), [0x80, 0x00])
        try append(s.dataDir.appendingPathComponent("account-events.ndjson"), Array("{\"seq\":7,".utf8))
        let dry = s.ck("fsck", "--dry-run")
        XCTAssertEqual(dry.status, 1)
        for what in ["history log holds", "history index holds", "account event log ends in a torn line"] {
            XCTAssertTrue(dry.stdout.contains(what), "dry run must report '\(what)': \(dry.stdout)")
        }
        XCTAssertEqual(s.ck("fsck").status, 0)
        XCTAssertTrue(s.ck("fsck", "--dry-run").stdout.contains("\"clean\": true"))
        XCTAssertEqual(s.ck("account", "signin", "carol@example.com").status, 0)
    }
}
