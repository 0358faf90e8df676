import CKTestSupport
import Foundation
import XCTest

/// A bulk load's large batches (stored records read ahead and files renamed on every core, from
/// 64 operations): every record file in place and the applied cursor at the head when the
/// import ends, and an import killed part-way loses nothing it reported.
final class BulkImportTests: XCTestCase {
    private func records(_ n: Int, prefix: String) -> String {
        (0..<n).map { "{\"recordName\": \"\(prefix)\($0)\", \"recordType\": \"T\", \"fields\": {\"n\": {\"value\": \($0)}, \"s\": {\"value\": \"v\($0)\"}}}" }
            .joined(separator: "\n")
    }

    /// The zone's `applied.json` cursor (0 if none).
    private func appliedSeq(_ s: Sandbox, zone: String) -> Int64? {
        let fm = FileManager.default
        guard let e = fm.enumerator(atPath: s.dataDir.path) else { return nil }
        while let rel = e.nextObject() as? String {
            guard rel.hasSuffix("/zones/\(zone)/applied.json"),
                  let d = fm.contents(atPath: s.dataDir.appendingPathComponent(rel).path),
                  let j = try? JSONSerialization.jsonObject(with: d) as? [String: Any] else { continue }
            return (j["seq"] as? NSNumber)?.int64Value
        }
        return nil
    }

    func testAnImportEndsWithItsFilesAppliedAndFsckClean() {
        let s = Sandbox()
        s.signIn()
        // Ten batches of 100: each read ahead and published on both cores.
        let r = s.run(["--zone", "L", "import", "--batch", "100", "--format", "ndjson"], stdin: records(1000, prefix: "r"))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout.split(separator: "\n").count, 1000)
        XCTAssertEqual(appliedSeq(s, zone: "L"), 1000, "the cursor stands at the import's last entry")
        XCTAssertEqual(s.run(["fsck", "--dry-run"]).object["clean"] as? Bool, true)
        // Every record reads back whole, from its file.
        let exported = s.ck("--zone", "L", "export").stdout.split(separator: "\n")
        XCTAssertEqual(exported.count, 1000)
        XCTAssertTrue(exported.allSatisfy { $0.contains("\"s\":{\"type\":\"STRING\",\"value\":\"v") })
        // A second import over it (every record read ahead, none changed) writes nothing.
        s.assertUnchanged("re-import") {
            XCTAssertEqual(s.run(["--zone", "L", "-q", "import"], stdin: records(1000, prefix: "r")).status, 0)
        }
    }

    func testAKilledImportThenAnotherWriteLosesNothingItReported() {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "L").status, 0)
        var killedPartWay = 0
        for round in 0..<4 {
            let l = s.launch(["--zone", "L", "import", "--format", "ndjson"], stdin: .bytes(Data(records(4000, prefix: "k\(round)-").utf8)))
            usleep(useconds_t([150_000, 400_000, 800_000, 1_500_000][round]))
            kill(l.process.processIdentifier, SIGKILL)
            let out = l.collect()
            if l.process.terminationReason != .exit { killedPartWay += 1 }
            let reported = out.stdout.split(separator: "\n").filter { $0.hasSuffix("}") && !$0.contains("serverErrorCode") }.compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["recordName"] as? String
            }
            // Another write first (it finishes what the import left), then fsck.
            XCTAssertEqual(s.ck("--zone", "L", "record", "save", "--type", "T", "--name", "after\(round)", "n=1").status, 0)
            XCTAssertEqual(s.run(["fsck"]).status, 0)
            XCTAssertEqual(s.run(["fsck", "--dry-run"]).object["clean"] as? Bool, true, "round \(round): second fsck")
            let listed = Set(s.ck("--zone", "L", "record", "list", "--format", "ndjson").stdout.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["recordName"] as? String
            })
            let lost = reported.filter { !listed.contains($0) }
            XCTAssertEqual(lost, [], "round \(round): \(reported.count) reported, \(lost.count) lost")
            XCTAssertTrue(listed.contains("after\(round)"))
        }
        print("BulkImportTests: \(killedPartWay) of 4 imports killed part-way")
    }
}
