import CKTestSupport
import Foundation
import XCTest

/// Record files are synced in batches, not at every commit (the history always is): until then
/// a restart of the machine can lose or tear them. Here the restart is played out on disk —
/// the applied cursor written in another boot, and the unsynced files as a power cut can
/// leave them — and readers must still see every committed change, the next writer must make
/// the files whole, and fsck must find nothing.
final class RestartRecoveryTests: XCTestCase {
    private func zoneDirectory(_ s: CLISandbox, _ zone: String) -> String? {
        let fm = FileManager.default
        guard let e = fm.enumerator(atPath: s.dataDir.path) else { return nil }
        while let rel = e.nextObject() as? String {
            if rel.hasSuffix("/zones/\(zone)") { return s.dataDir.appendingPathComponent(rel).path }
        }
        return nil
    }

    private func recordFile(_ zoneDir: String, _ name: String) -> String? {
        let fm = FileManager.default
        for shard in (try? fm.contentsOfDirectory(atPath: zoneDir + "/records")) ?? [] where fm.fileExists(atPath: "\(zoneDir)/records/\(shard)/\(name).json") {
            return "\(zoneDir)/records/\(shard)/\(name).json"
        }
        return nil
    }

    private func cursor(_ zoneDir: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: zoneDir + "/applied.json")))) as? [String: Any] ?? [:]
    }

    private func field(_ r: CKResult, _ name: String) -> Int? {
        ((r.record["fields"] as? [String: Any])?[name] as? [String: Any])?["value"] as? Int
    }

    func testAfterARestartReadersTakeUnsyncedChangesFromTheHistoryAndTheNextWriterRedoesThem() throws {
        guard FileManager.default.fileExists(atPath: "/proc/sys/kernel/random/boot_id") else { throw XCTSkip("the boot cannot be told here: every commit syncs") }
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        let base = (1...5).map { "{\"recordName\": \"r\($0)\", \"recordType\": \"T\", \"fields\": {\"n\": {\"value\": \($0)}}}" }.joined(separator: "\n")
        XCTAssertEqual(s.run(["--zone", "Z", "-q", "import"], stdin: base).status, 0)
        // The readers' query below has no filter: it needs "___recordID" QUERYABLE.
        XCTAssertEqual(s.ck("schema", "index", "add", "T", "___recordID", "QUERYABLE").status, 0)
        let z = try XCTUnwrap(zoneDirectory(s, "Z"))
        XCTAssertEqual(cursor(z)["durable"] as? Int, 5, "an import ends with its files synced")
        let r2Path = try XCTUnwrap(recordFile(z, "r2"))
        let r2Before = try Data(contentsOf: URL(fileURLWithPath: r2Path))

        // Three commits, their files published but not synced.
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "r1", "--force", "n=10").status, 0)
        XCTAssertEqual(s.ck("--zone", "Z", "record", "delete", "r2", "--force").status, 0)
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "r6", "n=6").status, 0)
        XCTAssertEqual(cursor(z)["seq"] as? Int, 8)
        XCTAssertEqual(cursor(z)["durable"] as? Int, 5)

        // The power goes: the cursor is from another boot now, r1's new file is torn, r2's
        // removal was never written, r6's file never reached the disk.
        var c = cursor(z)
        c["boot"] = "00000000-0000-4000-8000-000000000000"
        try JSONSerialization.data(withJSONObject: c).write(to: URL(fileURLWithPath: z + "/applied.json"))
        try Data().write(to: URL(fileURLWithPath: try XCTUnwrap(recordFile(z, "r1"))))
        XCTAssertNil(recordFile(z, "r2"))
        try r2Before.write(to: URL(fileURLWithPath: r2Path))
        try FileManager.default.removeItem(atPath: try XCTUnwrap(recordFile(z, "r6")))

        // Readers, before any writer: every committed change, from the history.
        XCTAssertEqual(field(s.ck("--zone", "Z", "record", "get", "r1"), "n"), 10)
        XCTAssertEqual(field(s.ck("--zone", "Z", "record", "get", "r6"), "n"), 6)
        let names = s.ck("--zone", "Z", "record", "query", "--type", "T", "--format", "ndjson").stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["recordName"] as? String
        }
        XCTAssertEqual(names.sorted(), ["r1", "r3", "r4", "r5", "r6"])

        // The next writer redoes the unsynced entries: the files are whole again.
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "r7", "n=7").status, 0)
        let r1 = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: try XCTUnwrap(recordFile(z, "r1"))))) as? [String: Any]
        XCTAssertEqual((((r1?["record"] as? [String: Any])?["fields"] as? [String: Any])?["n"] as? [String: Any])?["value"] as? Int, 10)
        XCTAssertNotNil(recordFile(z, "r6"))
        XCTAssertNil(recordFile(z, "r2"))
        XCTAssertEqual(cursor(z)["durable"] as? Int, 8, "the redone entries were synced")
        XCTAssertEqual(s.run(["fsck", "--dry-run"]).object["clean"] as? Bool, true)
    }
}
