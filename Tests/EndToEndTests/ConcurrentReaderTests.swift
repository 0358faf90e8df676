import CKTestSupport
import Foundation
import XCTest

/// A client following a zone's change feed while other processes write to it — single saves,
/// forced updates, deletes and batches — must end with a replica exactly equal to the zone:
/// no record missing, none stale, no tombstone for a record that exists, and never an older
/// version after a newer one.
final class ConcurrentReaderTests: XCTestCase {
    final class Log: @unchecked Sendable {
        let lock = NSLock()
        var failures: [String] = []
        var deleted: Set<String> = []
        func fail(_ s: String) { lock.lock(); failures.append(s); lock.unlock() }
        func delete(_ n: String) { lock.lock(); deleted.insert(n); lock.unlock() }
    }

    func testAPollerFollowingWritersEndsWithAnExactReplica() throws {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        let log = Log()
        let writers = 3, rounds = 12 * Sandbox.stressScale
        let done = DispatchGroup()
        for w in 0..<writers {
            done.enter()
            DispatchQueue.global().async {
                defer { done.leave() }
                for i in 0..<rounds {
                    // A batch: new records, an update of an earlier one, a delete of another.
                    var ops = (0..<20).map { j in
                        "{\"operationType\": \"forceReplace\", \"record\": {\"recordName\": \"w\(w)-\(i)-\(j)\", \"recordType\": \"Item\", \"fields\": {\"n\": {\"value\": \(j)}}}}"
                    }
                    if i > 0 {
                        ops.append("{\"operationType\": \"forceUpdate\", \"record\": {\"recordName\": \"w\(w)-\(i - 1)-0\", \"fields\": {\"n\": {\"value\": 100}}}}")
                        ops.append("{\"operationType\": \"forceDelete\", \"record\": {\"recordName\": \"w\(w)-\(i - 1)-1\"}}")
                        log.delete("w\(w)-\(i - 1)-1")
                    }
                    let r = s.run(["--device", "w\(w)", "--zone", "Z", "record", "modify"], stdin: "{\"operations\": [\(ops.joined(separator: ","))]}")
                    if r.status != 0 { log.fail("writer \(w) batch \(i): \(r.stderr)") }
                    // Single saves of one shared record, forced, from every writer.
                    let u = s.run(["--device", "w\(w)", "--zone", "Z", "record", "save", "--type", "Item", "--name", "shared", "--force", "n=\(i)", "by=\(w)"])
                    if u.status != 0 { log.fail("writer \(w) update \(i): \(u.stderr)") }
                }
            }
        }
        final class Replica: @unchecked Sendable { var records: [String: Int] = [:]; var seen: [String: Int] = [:] }
        let replica = Replica()
        /// One fetch from the device's bookmark; returns whether more is coming.
        func poll() -> Bool {
            let r = s.run(["--device", "poller", "--zone", "Z", "zone", "changes", "--limit", "37"])
            // changes/zone: {zones: [{zoneID, records, syncToken, moreComing}]}, one entry per zone asked for.
            guard r.status == 0, let body = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any],
                  let zones = body["zones"] as? [[String: Any]], zones.count == 1, let page = zones.first, page["records"] is [Any] else {
                log.fail("poll failed: \(r.stderr) \(r.stdout.prefix(200))")
                return false
            }
            for rec in page["records"] as? [[String: Any]] ?? [] {
                let name = rec["recordName"] as! String
                if rec["deleted"] as? Bool == true {
                    if !log.deleted.contains(name) { log.fail("tombstone for \(name), which was never deleted") }
                    replica.records[name] = nil
                    continue
                }
                let seq = Int(rec["recordChangeTag"] as! String, radix: 36)!
                if let last = replica.seen[name], seq <= last { log.fail("\(name): version \(seq) after version \(last)") }
                replica.seen[name] = seq
                replica.records[name] = seq
            }
            return page["moreComing"] as? Bool ?? false
        }
        var writing = true
        var polls = 0
        while writing {
            _ = poll()
            polls += 1
            writing = done.wait(timeout: .now()) == .timedOut
        }
        while poll() { polls += 1 }
        XCTAssertEqual(log.failures, [], "\(log.failures.count) broken promises")
        var exported: [String: Int] = [:]
        for line in s.ck("--zone", "Z", "export").stdout.split(separator: "\n") {
            let r = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            exported[r["recordName"] as! String] = Int(r["recordChangeTag"] as! String, radix: 36)
        }
        XCTAssertEqual(exported.count, writers * rounds * 20 - writers * (rounds - 1) + 1)
        let missing = Set(exported.keys).subtracting(replica.records.keys)
        let extra = Set(replica.records.keys).subtracting(exported.keys)
        let stale = exported.filter { replica.records[$0.key] != nil && replica.records[$0.key] != $0.value }
        XCTAssertTrue(missing.isEmpty && extra.isEmpty && stale.isEmpty,
                      "replica differs from the zone: \(missing.count) missing, \(extra.count) extra, \(stale.count) stale, after \(polls) polls")
        XCTAssertGreaterThan(polls, 3, "the poller must have run during the writes")
        print("STRESS reader: \(writers) writers, \(writers * rounds) batches and \(writers * rounds) forced updates of one record, \(polls) polls; replica: \(missing.count) missing, \(stale.count) stale, \(extra.count) extra, \(log.failures.count) false tombstones or versions out of order")
    }
}
