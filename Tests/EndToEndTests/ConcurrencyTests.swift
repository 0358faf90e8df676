import CKTestSupport
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
        let tag = s.run(["--zone", "Z", "record", "get", "shared"]).record["recordChangeTag"] as? String
        XCTAssertNotNil(tag)
    }

    /// Several first sign-ins of one Apple ID at once make one user, and one event each.
    func testConcurrentFirstSignInsAgreeOnTheUser() throws {
        let s = Sandbox()
        final class Names: @unchecked Sendable { let lock = NSLock(); var names: [String] = [] }
        let names = Names()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let r = s.run(["account", "signin", "carol@example.com"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let n = r.object["userRecordName"] as? String ?? "?"
            names.lock.lock(); names.names.append(n); names.lock.unlock()
        }
        XCTAssertEqual(Set(names.names).count, 1, "one Apple ID became several users: \(Set(names.names))")
        let events = s.run(["account", "events"]).object["events"] as? [[String: Any]] ?? []
        XCTAssertEqual(events.map { $0["seq"] as? Int ?? 0 }, Array(1...events.count), "event numbers repeat or skip")
        XCTAssertEqual(events.count, 1, "only the first sign-in changed the account")
    }

    /// fsck takes the writers' locks: run in a loop beside writers, it never cuts or adds a
    /// history entry, and every write is there at the end.
    func testFsckBesideWritersChangesNothingTheyWrote() throws {
        let s = Sandbox()
        s.signIn()
        let writers = 3, saves = 15
        let group = DispatchGroup()
        final class Flag: @unchecked Sendable { var done = false }
        let flag = Flag()
        for w in 0..<writers {
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                XCTAssertEqual(s.run(["zone", "create", "W\(w)"]).status, 0)
                for i in 0..<saves {
                    let r = s.run(["--zone", "W\(w)", "record", "save", "--type", "T", "--name", "r\(i)", "n=\(i)"])
                    XCTAssertEqual(r.status, 0, r.stderr)
                }
            }
        }
        group.enter()
        DispatchQueue.global().async {
            defer { group.leave() }
            var runs = 0
            while !flag.done || runs < 3 {
                let f = s.run(["fsck"])
                XCTAssertEqual(f.status, 0, "fsck beside writers: \(f.stdout)")
                XCTAssertFalse(f.stdout.contains("\"repaired\": true"), "fsck repaired something a live writer was doing: \(f.stdout)")
                runs += 1
            }
        }
        DispatchQueue.global().async {
            while true {
                let all = (0..<writers).allSatisfy { w in s.run(["--zone", "W\(w)", "record", "get", "r\(saves - 1)"]).status == 0 }
                if all { flag.done = true; return }
                usleep(50_000)
            }
        }
        group.wait()
        let logs = try FileManager.default.subpathsOfDirectory(atPath: s.dataDir.path).filter { $0.hasSuffix("/history.log") && !$0.contains("/zones/") }
        XCTAssertEqual(logs.count, 1)
        let entries = try String(contentsOf: s.dataDir.appendingPathComponent(logs[0]), encoding: .utf8).split(separator: "\n").count
        XCTAssertEqual(entries, writers * (1 + saves), "the database history must hold one entry per zone created and per commit")
        for w in 0..<writers {
            XCTAssertEqual(s.run(["--zone", "W\(w)", "record", "list", "--format", "ndjson"]).stdout.split(separator: "\n").count, saves)
        }
        XCTAssertTrue(s.run(["fsck", "--dry-run"]).stdout.contains("\"clean\": true"))
    }
}
