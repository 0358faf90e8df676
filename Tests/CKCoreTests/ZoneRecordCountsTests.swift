import CKJSON
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKCore
@testable import CKStore

/// A zone's record counts: kept in its index catalog as of the runs, brought to the head over
/// the entries since (ZoneIndex.recordCounts), exact after every commit.
final class ZoneRecordCountsTests: XCTestCase {
    /// The zone's records by type, read from every record file: what a count must equal.
    private func counted(_ z: ZoneStore) throws -> [String: Int64] {
        var out: [String: Int64] = [:]
        try z.forEachRecordFile { r in out[r.recordType, default: 0] += 1; return true }
        return out
    }

    private func catalogPath(_ z: ZoneStore) -> URL { URL(fileURLWithPath: z.directory + "/indexes/catalog.json") }

    private func catalog(_ z: ZoneStore) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: try Data(contentsOf: catalogPath(z))) as? [String: Any])
    }

    /// A catalog written by hand (as an earlier ck wrote it, or forged).
    private func write(_ catalog: [String: Any], over z: ZoneStore) throws {
        try JSONSerialization.data(withJSONObject: catalog).write(to: catalogPath(z))
    }

    func testCountsFollowEveryCommitThroughCreatesDeletesAndRetypedNames() throws {
        let t = TempStore()
        let db = try t.db()
        _ = try ZoneLifecycle(db).create("Z")
        XCTAssertEqual(try db.recordCounts(in: try db.zone("Z")), nil, "a zone before its first commit keeps no counts")
        var rng = SplitMix(seed: 39)
        var next = 0
        var live: [Int: String] = [:]
        // Past several maintenances (every 256 entries): counts carried by the catalog, and
        // brought forward over the entries after it, with deltas stacked and merged.
        for round in 0..<140 {
            var ops: [RecordOperation] = []
            var touched = Set<Int>()
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                let pick = live.keys.randomElement(using: &rng)
                switch (Int.random(in: 0..<6, using: &rng), pick) {
                case (0, let i?) where touched.insert(i).inserted:
                    ops.append(op(.forceDelete, "r\(i)"))
                    live[i] = nil
                case (1, let i?) where touched.insert(i).inserted:
                    ops.append(op(.forceUpdate, "r\(i)", type: nil, ["n": .int(Int64(round))]))
                default:
                    // A new name, or a deleted one made again as another type.
                    let type = ["Item", "Note", "Task"].randomElement(using: &rng)!
                    let reuse = (0..<next).first { live[$0] == nil && !touched.contains($0) && Int.random(in: 0..<4, using: &rng) == 0 }
                    let i = reuse ?? next
                    if reuse == nil { next += 1 }
                    touched.insert(i)
                    ops.append(op(.create, "r\(i)", type: type, ["n": .int(1)]))
                    live[i] = type
                }
            }
            for r in try db.modify(zone: "Z", operations: ops) { XCTAssertNil(r.error, "round \(round): \(r)") }
            let z = try db.zone("Z")
            let expected = try counted(z)
            XCTAssertEqual(expected, Dictionary(grouping: live.values, by: { $0 }).mapValues { Int64($0.count) }, "round \(round): the test's own books")
            XCTAssertEqual(try db.recordCounts(in: z), expected, "round \(round)")
        }
        let z = try db.zone("Z")
        let kept = try catalog(z)
        XCTAssertGreaterThan(try z.history.head(), 3 * IndexPolicy.deltaEntries, "several maintenances ran")
        XCTAssertNotNil(kept["counts"], "the catalog keeps the counts: \(kept)")
        // A delete of everything: no type has records, the count is empty (not unknown).
        let all = live.keys.map { op(.forceDelete, "r\($0)") }
        for from in stride(from: 0, to: all.count, by: 200) { _ = try db.modify(zone: "Z", operations: Array(all[from..<min(from + 200, all.count)])) }
        XCTAssertEqual(try db.recordCounts(in: try db.zone("Z")), [:])
    }

    func testACatalogFromBeforeCountsGetsThemAtTheNextCommit() throws {
        let t = TempStore()
        let db = try t.db()
        _ = try ZoneLifecycle(db).create("Z")
        _ = try db.modify(zone: "Z", operations: (0..<40).map { op(.create, "r\($0)", type: $0 % 4 == 0 ? "Note" : "Item") })
        _ = try db.modify(zone: "Z", operations: (0..<10).map { op(.forceDelete, "r\($0)") })
        var z = try db.zone("Z")
        // Stacked deltas first, so the count is made from the runs (newest line of each name).
        let index = ZoneIndex(zone: z)
        try index.maintain(schema: try db.schema(), head: try z.history.head())
        _ = try db.modify(zone: "Z", operations: (10..<15).map { op(.forceDelete, "r\($0)") } + [op(.create, "late", type: "Note")])
        try index.maintain(schema: try db.schema(), head: try z.history.head())
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(TypeRuns.open(index, type: "Item", field: nil)).deltas.count, 1)
        // The catalog as ck wrote it before it kept counts.
        var old = try catalog(z)
        old["counts"] = nil
        try write(old, over: z)
        XCTAssertNil(try db.recordCounts(in: z), "no counts to bring forward: none are made up")
        _ = try db.modify(zone: "Z", operations: [op(.create, "after", type: "Item")])
        z = try db.zone("Z")
        XCTAssertEqual(try db.recordCounts(in: z), try counted(z))
        XCTAssertEqual(try db.recordCounts(in: z), ["Item": 20, "Note": 7])
    }

    func testACatalogWhoseCountsAreNotCountsGivesNone() throws {
        let t = TempStore()
        let db = try t.db()
        _ = try ZoneLifecycle(db).create("Z")
        _ = try db.modify(zone: "Z", operations: (0..<5).map { op(.create, "r\($0)") })
        let z = try db.zone("Z")
        XCTAssertEqual(try db.recordCounts(in: z), ["Item": 5])
        // Not whole numbers, or more records than the history has entries (each made by one):
        // no count — and nothing that adds them up overflows.
        let huge = Int64.max, half = Int64(1) << 62
        for (forged, seq) in [(["Item": -3], nil), (["Item": "5"], nil), (["Item": 2.5], nil), (["Item": 6], nil), (["Item": huge], nil),
                              (["Item": half, "Note": half], nil), (["Item": 5], Int64.min), (["Item": 5], -1)] as [(Any, Int64?)] {
            var c = try catalog(z)
            c["counts"] = forged
            if let seq { c["seq"] = seq }
            try write(c, over: z)
            XCTAssertNil(try db.recordCounts(in: z), "\(forged) at \(seq.map(String.init) ?? "its seq")")
            XCTAssertNil(try t.api.zoneRecordCounts(as: caller()).document["zones"]?.arrayValue?.compactMap { $0["recordCount"] }.first { _ in false })
        }
        // A write, with upkeep due, over a forged catalog: the commit stands, the counts are made again.
        var c = try catalog(z)
        c["counts"] = ["Item": huge]
        try write(c, over: z)
        for from in stride(from: 0, to: 300, by: 150) {
            for r in try db.modify(zone: "Z", operations: (from..<(from + 150)).map { op(.create, "more\($0)") }) { XCTAssertNil(r.error) }
        }
        XCTAssertEqual(try db.recordCounts(in: try db.zone("Z")), ["Item": 305])
        // A catalog that lies low (deletes past its count): none either, and upkeep counts anew.
        let y = try db.zone("Z")
        try ZoneIndex(zone: y).maintain(schema: try db.schema(), head: try y.history.head())
        c = try catalog(y)
        c["counts"] = ["Item": 1]
        try write(c, over: y)
        _ = try db.modify(zone: "Z", operations: (0..<3).map { op(.forceDelete, "r\($0)") })
        XCTAssertNil(try db.recordCounts(in: try db.zone("Z")))
        try ZoneIndex(zone: y).maintain(schema: try db.schema(), head: try y.history.head())
        _ = try db.modify(zone: "Z", operations: [op(.create, "last")])
        XCTAssertEqual(try db.recordCounts(in: try db.zone("Z")), ["Item": 303])
    }

    func testACountIsNotGivenFromFurtherBehindThanItMayCost() throws {
        let t = TempStore()
        let db = try t.db()
        _ = try ZoneLifecycle(db).create("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "first")])
        // An import defers index upkeep to its end: meanwhile the catalog falls behind.
        db.defersIndexMaintenance = true
        var made: Int64 = 1
        while made <= IndexPolicy.countReplayLimit + 1 {
            _ = try db.modify(zone: "Z", operations: (made..<(made + 200)).map { op(.create, "r\($0)") })
            made += 200
        }
        XCTAssertNil(try db.recordCounts(in: try db.zone("Z")), "too far behind to count at a record's cost")
        db.defersIndexMaintenance = false
        _ = try db.modify(zone: "Z", operations: [op(.create, "last")])
        XCTAssertEqual(try db.recordCounts(in: try db.zone("Z")), ["Item": made + 1], "first, the imported, last")
    }

    func testFsckFindsCountsThatAreNotTheZonesAndMakesThemAgain() throws {
        let t = TempStore()
        let a = api(t.root)
        try t.client().createZone("Z")
        _ = try a.modifyRecords(ModifyRequest(operations: (0..<5).map { op(.create, "r\($0)") } + [op(.create, "n", type: "Note")], zoneName: "Z"), as: caller())
        XCTAssertEqual(try a.fsck(FsckRequest()).jsonValue["clean"], true)
        let z = try t.zoneStore("Z")
        var c = try catalog(z)
        // Counts that could be (no more records than entries), but are not the zone's.
        c["counts"] = ["Item": 4, "Note": 2]
        try write(c, over: z)
        let dry = try a.fsck(FsckRequest(repair: false))
        let problem = try XCTUnwrap(dry.items.first?.jsonValue["problem"]?.stringValue, "\(dry.jsonValue)")
        XCTAssertTrue(problem.contains("Item 4, Note 2") && problem.contains("Item 5, Note 1"), problem)
        XCTAssertFalse(try a.fsck(FsckRequest()).problemsRemain)
        XCTAssertEqual(try t.db().recordCounts(in: try t.zoneStore("Z")), ["Item": 5, "Note": 1])
        XCTAssertEqual(try a.fsck(FsckRequest()).jsonValue["clean"], true)
    }

    func testACountReadDuringCommitsIsAlwaysAWholeCommit() throws {
        let t = TempStore()
        let db = try t.db()
        _ = try ZoneLifecycle(db).create("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "first")])
        let batches = 60, size = 10
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var writeError: Error?
        DispatchQueue.global().async {
            do {
                let writer = try t.db()
                // Past a few upkeeps (every 256 entries): catalogs replaced while readers read.
                for b in 0..<batches { _ = try writer.modify(zone: "Z", operations: (0..<size).map { op(.create, "b\(b)-\($0)") }) }
            } catch { writeError = error }
            done.signal()
        }
        // The reader takes no lock: every count it sees is the zone after some whole commit.
        let reader = try t.db()
        var seen: [Int64] = []
        while done.wait(timeout: .now()) == .timedOut {
            if let n = try reader.recordCounts(in: try reader.zone("Z"))?["Item"] { seen.append(n) }
        }
        XCTAssertNil(writeError)
        XCTAssertGreaterThan(seen.count, 10, "the reader read while the writer wrote")
        XCTAssertTrue(seen.allSatisfy { ($0 - 1) % Int64(size) == 0 }, "half a commit seen: \(seen.filter { ($0 - 1) % Int64(size) != 0 })")
        XCTAssertEqual(seen, seen.sorted(), "a count went back")
        XCTAssertEqual(try reader.recordCounts(in: try reader.zone("Z")), ["Item": Int64(batches * size + 1)])
    }
}
