import CKJSON
import CKTestSupport
import CKModel
import XCTest
@testable import CKCore
@testable import CKStore

/// A zone's query indexes are kept as levels (IndexPolicy): a commit's share of their upkeep
/// grows with the logarithm of the zone, and the runs stacked at any moment hold exactly the
/// zone's records.
final class IndexLevelsTests: XCTestCase {
    /// Index lines written per changed record, over a zone grown to `n` records by maintenance
    /// batches of 256 changes, and the most deltas stacked meanwhile.
    private func upkeep(to n: Int) -> (linesPerChange: Double, mostDeltas: Int) {
        var base: Int64 = 0, deltas: [Int64] = [], written: Int64 = 0, most = 0
        for _ in 0..<(n / 256) {
            let level = IndexPolicy.level(changes: 256, deltas: deltas, base: base)
            if level == 0 {
                base += deltas.reduce(256, +); written += base; deltas = []
            } else {
                let run = deltas[(level - 1)...].reduce(256, +)
                written += run
                deltas = Array(deltas[..<(level - 1)]) + [run]
            }
            most = max(most, deltas.count)
        }
        return (Double(written) / Double(n), most)
    }

    func testUpkeepPerChangeGrowsWithTheLogarithmOfTheZone() {
        let small = upkeep(to: 10_000), large = upkeep(to: 1_000_000)
        // One delta rewritten whole at every batch cost ~119 lines a change at a million records
        // (and ten times that at ten million); levels keep it near a line per level and run.
        XCTAssertLessThan(large.linesPerChange, 20)
        XCTAssertLessThan(large.linesPerChange / small.linesPerChange, 2.5)
        XCTAssertGreaterThanOrEqual(large.mostDeltas, 3, "a large zone stacks deltas")
        XCTAssertLessThanOrEqual(large.mostDeltas, 8, "a reader merges a handful of runs")
    }

    /// The lines a type's runs stand for, newest first: a name's line in a newer run hides
    /// its lines in older ones, and a tombstone hides the name.
    private func effectiveLines(_ runs: TypeRuns, fieldRun: Bool) -> Set<[UInt8]> {
        var newest: [ArraySlice<UInt8>: [UInt8]] = [:]
        for run in runs.runs {
            var byName: [ArraySlice<UInt8>: [UInt8]] = [:]
            run.forEachLine { l in byName[IndexKey.nameKey(ofLine: l, fieldRun: fieldRun)] = Array(l); return true }
            for (k, v) in byName { newest[k] = v }
        }
        return Set(newest.values.filter { !IndexKey.isTombstone($0[...]) })
    }

    func testARunsFileNameSaysItsFieldAndLevel() {
        for (field, level) in [(nil, 0), (nil, 1), ("priority", 2), ("priority", 12)] as [(String?, Int)] {
            let name = ZoneIndex.runName(field: field, level: level)
            XCTAssertEqual(ZoneIndex.run(named: name)?.level, level, name)
            XCTAssertTrue(ZoneIndex.isRun(name, of: field), name)
            XCTAssertFalse(ZoneIndex.isRun(name, of: "other"), name)
        }
        for other in ["names.delta1", "names.delta02", "names.delta-3", ".tmp-1-x-2", "catalog.json", ".base"] {
            XCTAssertFalse(ZoneIndex.isRun(other), other)
        }
    }

    /// A delta left past a gap (a crash between two removals) is removed by the next rebuild.
    func testARebuildRemovesEveryDeltaEvenPastAGap() throws {
        let t = TempStore()
        let db = try t.db()
        _ = try ZoneLifecycle(db).create("Z")
        _ = try db.modify(zone: "Z", operations: (0..<10).map { op(.create, "r\($0)", ["n": .int(Int64($0))]) })
        let z = try db.zone("Z")
        let index = ZoneIndex(zone: z)
        try index.buildFromRecordFiles(schema: try db.schema(), head: try z.history.head())
        let dir = z.directory + "/indexes/Item"
        XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/names.delta3", contents: Data("not a run".utf8)))
        XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/fields/n.delta2", contents: Data("not a run".utf8)))
        try index.buildFromRecordFiles(schema: try db.schema(), head: try z.history.head())
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/names.delta3"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/fields/n.delta2"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/names.base"))
    }

    func testStackedDeltasHoldExactlyTheZonesRecords() throws {
        let t = TempStore()
        let db = try t.db()
        _ = try ZoneLifecycle(db).create("Z")
        // A base large enough (an eighth of it above what four rounds make) for deltas to stack.
        let count = 2_600
        for from in stride(from: 0, to: count, by: 200) {
            _ = try db.modify(zone: "Z", operations: (from..<min(from + 200, count)).map {
                op(.create, "r\($0)", ["n": .int(Int64($0 % 97))])
            })
        }
        let z = try db.zone("Z")
        let index = ZoneIndex(zone: z)
        XCTAssertEqual(ZoneIndex.indexedFields(try db.schema().types["Item"]), ["n"])
        var rng = SplitMix(seed: 38)
        var mostDeltas = 0
        var next = count
        for round in 0..<12 {
            // 60 changes: updates that move a record's key, deletes, creates.
            var ops: [RecordOperation] = []
            var used = Set<Int>()
            while ops.count < 60 {
                let i = Int.random(in: 0..<next, using: &rng)
                guard used.insert(i).inserted else { continue }
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: ops.append(op(.forceDelete, "r\(i)"))
                case 1: ops.append(op(.create, "r\(next)", ["n": .int(Int64.random(in: 0..<97, using: &rng))])); next += 1
                default: ops.append(op(.forceReplace, "r\(i)", ["n": .int(Int64.random(in: 0..<97, using: &rng))]))
                }
            }
            for from in stride(from: 0, to: ops.count, by: 200) {
                _ = try db.modify(zone: "Z", operations: Array(ops[from..<min(from + 200, ops.count)]), atomic: false)
            }
            // Brought to the head as a commit does once enough entries wait.
            db.forgetCachedSchema()
            try index.maintain(schema: try db.schema(), head: try z.history.head())
            let names = try XCTUnwrap(TypeRuns.open(index, type: "Item", field: nil))
            let field = try XCTUnwrap(TypeRuns.open(index, type: "Item", field: "n"))
            XCTAssertEqual(names.seqs, field.seqs, "round \(round): every run of a type at the same levels")
            XCTAssertEqual(names.coveredThrough, try z.history.head())
            mostDeltas = max(mostDeltas, names.deltas.count)
            var expectedNames = Set<[UInt8]>(), expectedKeys = Set<[UInt8]>()
            try z.forEachRecordFile { r in
                expectedNames.insert(IndexKey.hex(r.recordName))
                expectedKeys.insert(IndexKey.line(key: IndexKey.key(of: r, field: "n"), name: r.recordName))
                return true
            }
            XCTAssertEqual(effectiveLines(names, fieldRun: false), expectedNames, "round \(round): names")
            XCTAssertEqual(effectiveLines(field, fieldRun: true), expectedKeys, "round \(round): keys of n")
        }
        XCTAssertGreaterThanOrEqual(mostDeltas, 2, "deltas stacked on one another")
    }
}
