import CKTestSupport
import Foundation
import XCTest

/// Query indexes (issue 13): every query answered from the indexes is compared, byte for byte
/// and page by page, with the same query answered by reading every record
/// (`CK_DEBUG_NO_INDEX`), over random records and random queries — after imports, after
/// batches that write delta runs and merge them into bases, after crashes at random points of
/// a commit followed by another write, after damaged runs, and after `ck fsck`.
final class IndexTests: XCTestCase {
    /// The same records and queries on every run (KillLoopTests' splitmix64).
    struct RNG {
        var generator: SplitMix
        init(state: UInt64) { generator = SplitMix(seed: state) }
        mutating func next() -> UInt64 { generator.next() }
        mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func chance(_ p: Double) -> Bool { Double(next() % 10_000) / 10_000 < p }
    }

    static let titles = ["apple", "Apple", "APPLE", "banana", "band", "b", "cherry", "ćevapi", "e\u{301}clair", "\u{e9}clair", "zebra", "Zoo", "", "42", "a b"]
    static let names = (0..<400).map { i in i % 7 == 0 ? "Item-\(i)" : (i % 11 == 0 ? "é\(i)" : "item\(i)") }

    static func json(_ v: Any) -> String {
        String(data: try! JSONSerialization.data(withJSONObject: v, options: [.sortedKeys, .fragmentsAllowed]), encoding: .utf8)!
    }

    /// A random record of type Item (or Other), some fields missing.
    static func record(_ name: String, _ rng: inout RNG) -> [String: Any] {
        var fields: [String: Any] = [:]
        if !rng.chance(0.1) { fields["priority"] = ["value": rng.int(10) - 2, "type": "INT64"] }
        if !rng.chance(0.2) { fields["score"] = ["value": Double(rng.int(2000)) / 8 - 50, "type": "DOUBLE"] }
        if !rng.chance(0.1) { fields["title"] = ["value": titles[rng.int(titles.count)], "type": "STRING"] }
        if rng.chance(0.5) { fields["due"] = ["value": 1_700_000_000_000 + rng.int(1000) * 60_000, "type": "TIMESTAMP"] }
        if rng.chance(0.5) { fields["owner"] = ["value": ["recordName": names[rng.int(20)], "action": "NONE"], "type": "REFERENCE"] }
        return ["recordName": name, "recordType": rng.chance(0.85) ? "Item" : "Other", "fields": fields]
    }

    /// A random records/query body for type Item.
    static func query(_ rng: inout RNG) -> [String: Any] {
        var filters: [[String: Any]] = []
        let ops = ["EQUALS", "LESS_THAN", "LESS_THAN_OR_EQUALS", "GREATER_THAN", "GREATER_THAN_OR_EQUALS"]
        for _ in 0..<rng.int(3) {
            switch rng.int(9) {
            case 0, 1: filters.append(["fieldName": "priority", "comparator": ops[rng.int(ops.count)], "fieldValue": ["value": rng.int(10) - 2, "type": "INT64"]])
            case 2: filters.append(["fieldName": "score", "comparator": ops[rng.int(ops.count)], "fieldValue": ["value": Double(rng.int(2000)) / 8 - 50, "type": "DOUBLE"]])
            case 3: filters.append(["fieldName": "title", "comparator": ["BEGINS_WITH", "EQUALS", "GREATER_THAN", "LESS_THAN_OR_EQUALS"][rng.int(4)],
                                    "fieldValue": ["value": titles[rng.int(titles.count)], "type": "STRING"]])
            case 4: filters.append(["fieldName": "priority", "comparator": "IN", "fieldValue": ["value": [rng.int(10) - 2, rng.int(10) - 2], "type": "INT64_LIST"]])
            case 5: filters.append(["systemFieldName": "recordName", "comparator": ["EQUALS", "GREATER_THAN", "LESS_THAN"][rng.int(3)],
                                    "fieldValue": ["value": ["recordName": names[rng.int(names.count)]], "type": "REFERENCE"]])
            case 6: filters.append(["fieldName": "owner", "comparator": "EQUALS", "fieldValue": ["value": ["recordName": names[rng.int(20)]], "type": "REFERENCE"]])
            case 7: filters.append(["fieldName": "due", "comparator": ops[rng.int(ops.count)], "fieldValue": ["value": 1_700_000_000_000 + rng.int(1000) * 60_000, "type": "TIMESTAMP"]])
            default: filters.append(["fieldName": "priority", "comparator": "NOT_EQUALS", "fieldValue": ["value": rng.int(10) - 2, "type": "INT64"]])
            }
        }
        var sorts: [[String: Any]] = []
        for _ in 0..<rng.int(3) {
            let f = ["priority", "score", "title", "due", "modifiedTimestamp", "recordName", "owner"][rng.int(7)]
            sorts.append(["fieldName": f, "ascending": rng.chance(0.5)])
        }
        return ["query": ["recordType": "Item", "filterBy": filters, "sortBy": sorts], "resultsLimit": 1 + rng.int(rng.chance(0.3) ? 200 : 12),
                "zoneID": ["zoneName": "Z"]]
    }

    /// Runs a query both ways, following every marker; fails on the first difference. Returns
    /// the plans the indexed run took.
    @discardableResult
    static func compare(_ s: Sandbox, _ body: [String: Any], pages: Int = 4, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        var indexed = body, scanned = body
        var plans: [String] = []
        for _ in 0..<pages {
            let a = s.run(["record", "query"], stdin: json(indexed), env: ["CK_DEBUG_QUERY_PLAN": "1"])
            let b = s.run(["record", "query"], stdin: json(scanned), env: ["CK_DEBUG_NO_INDEX": "1"])
            XCTAssertEqual(a.status, 0, a.stderr, file: file, line: line)
            XCTAssertEqual(a.stdout, b.stdout, "index and scan differ for \(json(indexed))", file: file, line: line)
            plans += a.stderr.split(separator: "\n").filter { $0.hasPrefix("query plan: ") }.map { String($0.dropFirst(12)) }
            guard a.stdout == b.stdout, let m = a.object["continuationMarker"] as? String else { break }
            indexed["continuationMarker"] = m
            scanned["continuationMarker"] = m
        }
        return plans
    }

    private func seeded(_ rng: inout RNG, count: Int = 300) -> Sandbox {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        let lines = IndexTests.names.prefix(count).map { n -> String in
            var r = IndexTests.record(n, &rng)
            r["zoneID"] = ["zoneName": "Z"]
            return IndexTests.json(r)
        }
        let imp = s.run(["-q", "import"], stdin: lines.joined(separator: "\n") + "\n")
        XCTAssertEqual(imp.status, 0, imp.stderr)
        // The indexes the random queries need beyond those fields get just in time (queries
        // without a filter, on or sorted by recordName, sorted by modifiedTimestamp or owner).
        for (field, indexes) in [("___recordID", ["QUERYABLE", "SORTABLE"]), ("___modTime", ["SORTABLE"]), ("owner", ["SORTABLE"])] {
            XCTAssertEqual(s.run(["schema", "index", "add", "Item", field] + indexes).status, 0)
        }
        return s
    }

    /// A records/modify body of `n` random operations (saves and deletes) on zone Z.
    static func modifyBody(_ n: Int, _ rng: inout RNG) -> String {
        modifyBodies(n, &rng)[0]
    }

    /// `n` random operations as records/modify bodies of at most 200 operations each (the most
    /// a request holds), in order.
    static func modifyBodies(_ n: Int, _ rng: inout RNG) -> [String] {
        var ops: [[String: Any]] = []
        var used = Set<String>()
        while ops.count < n {
            let name = names[rng.int(names.count)]
            guard used.insert(name).inserted else { continue }
            if rng.chance(0.2) {
                ops.append(["operationType": "forceDelete", "record": ["recordName": name]])
            } else {
                var r = record(name, &rng)
                r["recordType"] = "Item"
                ops.append(["operationType": "forceReplace", "record": r])
            }
        }
        return stride(from: 0, to: ops.count, by: 200).map { json(["operations": Array(ops[$0..<min($0 + 200, ops.count)]), "atomic": false, "zoneID": ["zoneName": "Z"]]) }
    }

    /// Applies a random batch; some operations fail (deleting a record that is gone, replacing
    /// an Other with an Item), as in any batch: exit 0 or 9 (partial failure).
    static func modify(_ s: Sandbox, _ n: Int, _ rng: inout RNG, env: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) {
        let r = s.run(["-q", "record", "modify"], stdin: modifyBody(n, &rng), env: env)
        XCTAssertTrue(r.status == 0 || r.status == 9, "exit \(r.status): \(r.stderr)", file: file, line: line)
    }

    func testRandomQueriesAnswerAsAScanDoes() {
        var rng = RNG(state: 13)
        let s = seeded(&rng)
        var plans: [String] = []
        for _ in 0..<25 { plans += IndexTests.compare(s, IndexTests.query(&rng)) }
        // Changes after the runs: read from the history by each query (no delta yet) …
        for _ in 0..<3 { IndexTests.modify(s, 40, &rng) }
        for _ in 0..<20 { plans += IndexTests.compare(s, IndexTests.query(&rng)) }
        // … then enough of them to write delta runs, and to merge deltas into new bases.
        for _ in 0..<4 { IndexTests.modify(s, 150, &rng) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: s.zoneDirectory("Z") + "/indexes/catalog.json"))
        for _ in 0..<25 { plans += IndexTests.compare(s, IndexTests.query(&rng)) }
        // The indexes answered most of them (the rest are sorts they cannot serve).
        XCTAssertGreaterThan(plans.filter { $0.hasPrefix("in order") }.count, 10, "\(plans)")
        XCTAssertGreaterThan(plans.filter { $0.hasPrefix("by filter") }.count, 5, "\(plans)")
        // Unsorted pages by a filter over few keys merged the keys' names.
        XCTAssertGreaterThan(plans.filter { $0.hasSuffix("merged in name order") }.count, 3, "\(plans)")
    }

    func testDeltaAndMergeKeepTheAnswers() {
        var rng = RNG(state: 7)
        let s = seeded(&rng, count: 120)
        // Many small commits: deltas rewritten at each threshold, merged when they outgrow an
        // eighth of the base.
        for i in 0..<12 {
            IndexTests.modify(s, 60, &rng)
            if i % 3 == 2 { for _ in 0..<6 { IndexTests.compare(s, IndexTests.query(&rng)) } }
        }
        let dir = s.zoneDirectory("Z") + "/indexes"
        let catalog = try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/catalog.json"))) as? [String: Any]
        XCTAssertNotNil(catalog?["seq"])
    }

    func testCrashesDuringCommitsThenAnotherWriteThenFsck() {
        var rng = RNG(state: 99)
        let s = seeded(&rng, count: 200)
        // Find how many disk operations a maintenance-sized batch performs: 260 operations, in
        // requests of 200 and 60 (a request holds at most 200).
        let body = IndexTests.modifyBodies(260, &rng)
        var counted = 0
        let trace = s.run(["-q", "record", "modify"], stdin: IndexTests.modifyBody(1, &rng), env: ["CK_DEBUG_TRACE_OPS": "1"])
        counted = trace.stderr.split(separator: "\n").filter { $0.hasPrefix("op ") }.count
        XCTAssertGreaterThan(counted, 0)
        func send(_ bodies: ArraySlice<String>) {
            for b in bodies { XCTAssertTrue([0, 9].contains(s.run(["-q", "record", "modify"], stdin: b).status)) }
        }
        for round in 0..<6 {
            let b = round == 0 ? body : IndexTests.modifyBodies(260, &rng)
            let all = s.run(["-q", "record", "modify"], stdin: b[0], env: ["CK_DEBUG_TRACE_OPS": "1", "CK_DEBUG_CRASH_AT_OP": "999999"])
            let ops = all.stderr.split(separator: "\n").filter { $0.hasPrefix("op ") }
            XCTAssertGreaterThan(ops.count, 0)
            send(b.dropFirst())
            // Crash the next batch at a random point past the history commit (in the derived
            // files, where the index work is), then write again (the rest of the batch, then
            // more) and compare queries.
            let crashAt = max(1, ops.count / 2 + rng.int(max(1, ops.count / 2)))
            let next = IndexTests.modifyBodies(260, &rng)
            let crashed = s.run(["-q", "record", "modify"], stdin: next[0], env: ["CK_DEBUG_CRASH_AT_OP": String(crashAt)])
            XCTAssertNotEqual(crashed.status, 0)
            send(next.dropFirst())
            IndexTests.modify(s, 5, &rng)
            for _ in 0..<4 { IndexTests.compare(s, IndexTests.query(&rng)) }
            // The zone's record counts, kept with the indexes, came through the crash exact:
            // fsck finds nothing to say of them.
            let check = s.run(["fsck", "--dry-run"])
            XCTAssertFalse(check.stdout.contains("record counts"), "round \(round): " + check.stdout)
        }
        let fsck = s.run(["fsck"])
        XCTAssertEqual(fsck.status, 0, fsck.stdout + fsck.stderr)
        XCTAssertFalse(fsck.stdout.contains("record counts"), fsck.stdout)
        for _ in 0..<10 { IndexTests.compare(s, IndexTests.query(&rng)) }
    }

    /// Queries running while other processes commit batches that rewrite deltas and merge them
    /// into bases: every page holds each record once, only records that match, in order; once
    /// the writers are done, every query answers exactly as the scan does.
    func testQueriesDuringWritersAndMerges() {
        var rng = RNG(state: 77)
        let s = seeded(&rng, count: 200)
        let writers = (0..<2).map { _ in (0..<3).map { _ in IndexTests.modifyBody(130, &rng) } }.map { bodies in
            bodies.map { s.launch(["-q", "record", "modify"], stdin: .bytes(Data($0.utf8))) }
        }
        let q: [String: Any] = ["query": ["recordType": "Item", "filterBy": [["fieldName": "priority", "comparator": "GREATER_THAN_OR_EQUALS", "fieldValue": ["value": 3]]],
                                          "sortBy": [["fieldName": "score", "ascending": false]]], "resultsLimit": 200, "zoneID": ["zoneName": "Z"]]
        var polls = 0
        for _ in 0..<12 {
            let r = s.run(["record", "query"], stdin: IndexTests.json(q))
            XCTAssertEqual(r.status, 0, r.stderr)
            let records = r.object["records"] as? [[String: Any]] ?? []
            let names = records.compactMap { $0["recordName"] as? String }
            XCTAssertEqual(Set(names).count, names.count, "a record twice in one page")
            let fields = records.map { $0["fields"] as? [String: Any] ?? [:] }
            XCTAssertTrue(fields.allSatisfy { (($0["priority"] as? [String: Any])?["value"] as? Int ?? -99) >= 3 }, "a record that does not match")
            let scores = fields.map { (($0["score"] as? [String: Any])?["value"] as? Double) ?? -.infinity }
            XCTAssertEqual(scores, scores.sorted(by: >), "a page out of order")
            polls += 1
        }
        for w in writers { for l in w { let r = l.collect(); XCTAssertTrue(r.status == 0 || r.status == 9, r.stderr) } }
        XCTAssertEqual(polls, 12)
        IndexTests.compare(s, q)
        for _ in 0..<10 { IndexTests.compare(s, IndexTests.query(&rng)) }
    }

    /// `ck gc` dropping the history the runs would be brought forward with: queries read the
    /// records instead, and the next commit makes the runs again.
    func testCompactedHistoryPastTheRunsStillAnswers() {
        var rng = RNG(state: 21)
        let s = seeded(&rng, count: 150)
        IndexTests.modify(s, 30, &rng)
        let gc = s.run(["--zone", "Z", "gc", "--keep", "0"])
        XCTAssertEqual(gc.status, 0, gc.stderr)
        for _ in 0..<8 { IndexTests.compare(s, IndexTests.query(&rng)) }
        for _ in 0..<2 { IndexTests.modify(s, 150, &rng) }
        var plans: [String] = []
        for _ in 0..<8 { plans += IndexTests.compare(s, IndexTests.query(&rng)) }
        XCTAssertTrue(plans.contains { $0 != "scan" }, "\(plans)")
    }

    func testDamagedRunsNeverChangeAnAnswerAndFsckRebuildsThem() throws {
        var rng = RNG(state: 5)
        let s = seeded(&rng, count: 200)
        let typeDir = s.zoneDirectory("Z") + "/indexes/Item"
        let base = typeDir + "/fields/priority.base"
        XCTAssertTrue(FileManager.default.fileExists(atPath: base))
        let q: [String: Any] = ["query": ["recordType": "Item", "filterBy": [["fieldName": "priority", "comparator": "GREATER_THAN", "fieldValue": ["value": 3]]],
                                          "sortBy": [["fieldName": "priority", "ascending": false]]], "resultsLimit": 7, "zoneID": ["zoneName": "Z"]]
        XCTAssertTrue(IndexTests.compare(s, q).allSatisfy { $0.contains("priority") })
        // Cut short: not used.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: base))
        try bytes.prefix(bytes.count - 10).write(to: URL(fileURLWithPath: base))
        XCTAssertFalse(IndexTests.compare(s, q).contains { $0.contains("priority") })
        // Garbage in place of a run: not used either.
        try Data("not a run".utf8).write(to: URL(fileURLWithPath: typeDir + "/names.base"))
        for _ in 0..<10 { IndexTests.compare(s, IndexTests.query(&rng)) }
        let check = s.run(["fsck", "--dry-run"])
        XCTAssertNotEqual(check.status, 0, check.stdout)
        XCTAssertTrue((check.stdout + check.stderr).contains("priority.base"), check.stdout + check.stderr)
        let repair = s.run(["fsck"])
        XCTAssertEqual(repair.status, 0, repair.stdout + repair.stderr)
        XCTAssertTrue(IndexTests.compare(s, q).allSatisfy { $0.contains("priority") })
        XCTAssertEqual(s.run(["fsck", "--dry-run"]).status, 0)
    }
}
