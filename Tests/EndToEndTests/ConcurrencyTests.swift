import XCTest

/// Several `ck` processes writing one zone at once lose nothing.
final class ConcurrencyTests: XCTestCase {
    func testConcurrentWritersLoseNothingAndHistoryIsGapless() throws {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "Counter", "--name", "shared", "n=0").status, 0)
        let writers = 4, perWriter = 15
        DispatchQueue.concurrentPerform(iterations: writers + 2) { w in
            if w < writers {
                for i in 0..<perWriter {
                    let r = s.run(["--zone", "Z", "record", "save", "--type", "Item", "--name", "w\(w)-\(i)", "i=\(i)"])
                    XCTAssertEqual(r.status, 0, r.stderr)
                }
            } else {
                for i in 0..<perWriter {
                    let r = s.run(["--zone", "Z", "record", "save", "--name", "shared", "--force", "n=\(i)", "by=\(w)"])
                    XCTAssertEqual(r.status, 0, r.stderr)
                }
            }
        }
        let list = s.run(["--zone", "Z", "record", "list", "--type", "Item", "--format", "ndjson"])
        XCTAssertEqual(list.stdout.split(separator: "\n").count, writers * perWriter)
        // One history entry per write, numbered 1…N with no gap or duplicate.
        let zoneDirs = try FileManager.default.subpathsOfDirectory(atPath: s.dataDir.path).filter { $0.hasSuffix("zones/Z/history.log") }
        XCTAssertEqual(zoneDirs.count, 1)
        let log = try String(contentsOf: s.dataDir.appendingPathComponent(zoneDirs[0]), encoding: .utf8)
        let seqs = log.split(separator: "\n").compactMap { line -> Int? in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return o["seq"] as? Int
        }
        let total = 1 + writers * perWriter + 2 * perWriter
        XCTAssertEqual(seqs, Array(1...total))
        let tag = s.run(["--zone", "Z", "record", "get", "shared"]).object["recordChangeTag"] as? String
        XCTAssertNotNil(tag)
    }
}
