import CKTestSupport
import Foundation
import XCTest

/// `record query --all` reads its pages in one process, 2,000 records at a time
/// (`Database.streamedPage`), with record files read ahead in parallel batches when an index
/// answers. None of that may show: `--all` prints exactly the records that following every
/// continuation marker prints, one process per page, in the same order and the same bytes —
/// across the internal page boundary, with filters, sorts on duplicated and missing values,
/// small pages, `--at`, and the scan (`CK_DEBUG_NO_INDEX`). A corrupt record file fails the
/// command (exit 1, the file and `ck fsck` named) instead of being skipped, and changes nothing.
final class QueryAllTests: XCTestCase {
    /// One record as the test models it; nil is a missing field.
    struct Item {
        var name: String
        var type: String
        var priority: Int?
        var title: String?
        var due: Int64?
        var estimate: Double?

        var fields: [String: Any] {
            var f: [String: Any] = [:]
            if let p = priority { f["priority"] = ["value": p, "type": "INT64"] }
            if let t = title { f["title"] = ["value": t, "type": "STRING"] }
            if let d = due { f["dueDate"] = ["value": d, "type": "TIMESTAMP"] }
            if let e = estimate { f["estimate"] = ["value": e, "type": "DOUBLE"] }
            return f
        }

        var record: [String: Any] { ["recordName": name, "recordType": type, "fields": fields] }
    }

    static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    static func json(_ v: Any) -> String {
        String(data: try! JSONSerialization.data(withJSONObject: v, options: [.sortedKeys]), encoding: .utf8)!
    }

    /// Record `i` of the corpus: names out of insertion order, 1 in 12 a Note, 1 in 97 without
    /// any field; priority 0…5 (many duplicates, missing 1 in 11), titles from 200 values
    /// ("Idea …" 1 in 29, missing 1 in 23), due dates from 900 values (missing 1 in 13) and
    /// estimates (missing 1 in 5) on Tasks only.
    static func item(_ i: Int) -> Item {
        let h = (i &* 40503) % 65521
        var it = Item(name: "r" + pad((i * 7919) % 100_000, 5), type: i % 12 == 0 ? "Note" : "Task")
        guard i % 97 != 0 else { return it }
        if i % 11 != 0 { it.priority = h % 6 }
        if i % 23 != 0 { it.title = (i % 29 == 0 ? "Idea " : "task ") + pad(h % 200, 3) }
        if it.type == "Task" {
            if i % 13 != 0 { it.due = 1_700_000_000_000 + Int64(h % 900) * 60_000 }
            if i % 5 != 0 { it.estimate = Double(h % 400) / 4 - 20 }
        }
        return it
    }

    /// A signed-in store with zone Z holding records `range` (imported as NDJSON).
    private func seeded(_ range: Range<Int> = 0..<2500, file: StaticString = #filePath, line: UInt = #line) -> (Sandbox, [String: Item]) {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0, file: file, line: line)
        let items = range.map(QueryAllTests.item)
        let body = items.map { it -> String in
            var r = it.record
            r["zoneID"] = ["zoneName": "Z"]
            return QueryAllTests.json(r)
        }.joined(separator: "\n") + "\n"
        let imp = s.run(["-q", "import"], stdin: body)
        XCTAssertEqual(imp.status, 0, imp.stderr, file: file, line: line)
        // Queries without a filter need "___recordID" QUERYABLE, as in CloudKit.
        for type in ["Task", "Note"] {
            XCTAssertEqual(s.run(["schema", "index", "add", type, "___recordID", "QUERYABLE"]).status, 0, file: file, line: line)
        }
        return (s, Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0) }))
    }

    // MARK: - What the answer must be, computed from the model

    enum SortValue {
        case number(Double), text(String)

        static func compare(_ a: SortValue, _ b: SortValue) -> Int {
            switch (a, b) {
            case (.number(let x), .number(let y)): return x < y ? -1 : (x > y ? 1 : 0)
            case (.text(let x), .text(let y)):
                return x.unicodeScalars.elementsEqual(y.unicodeScalars) ? 0 : (x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars) { $0.value < $1.value } ? -1 : 1)
            default: return 0
            }
        }
    }

    static let priority: (Item) -> SortValue? = { $0.priority.map { .number(Double($0)) } }
    static let title: (Item) -> SortValue? = { $0.title.map { .text($0) } }
    static let due: (Item) -> SortValue? = { $0.due.map { .number(Double($0)) } }
    static let estimate: (Item) -> SortValue? = { $0.estimate.map { .number($0) } }

    /// The names a query must return, in order: the sorts, missing values last in either
    /// direction, then recordName.
    static func expected(_ model: [String: Item], type: String = "Task", where keep: (Item) -> Bool = { _ in true },
                         sorts: [((Item) -> SortValue?, Bool)] = []) -> [String] {
        model.values.filter { $0.type == type && keep($0) }.sorted { a, b in
            for (key, asc) in sorts {
                switch (key(a), key(b)) {
                case (nil, nil): continue
                case (nil, _): return false
                case (_, nil): return true
                case (let x?, let y?):
                    let c = SortValue.compare(x, y)
                    if c != 0 { return asc ? c < 0 : c > 0 }
                }
            }
            return a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
        }.map(\.name)
    }

    // MARK: - Running a query both ways

    private static func object(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    private static func lines(_ stdout: String) -> [String] {
        stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    /// Fails with the first differing line rather than two megabytes of output.
    private func assertSameLines(_ a: [String], _ b: [String], _ what: String, file: StaticString, line: UInt) {
        guard a != b else { return }
        let i = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
        let show = { (l: [String]) in i < l.count ? String(l[i].prefix(300)) : "<end>" }
        XCTFail("\(what): \(a.count) lines vs \(b.count); first difference at line \(i):\n  \(show(a))\n  \(show(b))", file: file, line: line)
    }

    /// Every record line equals the model's record (a record from the wrong version, or with a
    /// field lost or invented, fails).
    private func assertFieldsMatch(_ lines: [String], _ model: [String: Item], _ what: String, file: StaticString, line: UInt) {
        var bad: [String] = []
        for l in lines {
            guard let o = QueryAllTests.object(l), let n = o["recordName"] as? String, let it = model[n] else { bad.append(String(l.prefix(120))); continue }
            let f = o["fields"] as? [String: Any] ?? [:]
            func v(_ k: String) -> Any? { (f[k] as? [String: Any])?["value"] }
            let ok = o["recordType"] as? String == it.type && Set(f.keys) == Set(it.fields.keys)
                && (v("priority") as? Int) == it.priority && (v("title") as? String) == it.title
                && (v("dueDate") as? Int64) == it.due && (v("estimate") as? Double) == it.estimate
            if !ok { bad.append(String(l.prefix(300))) }
        }
        XCTAssertTrue(bad.isEmpty, "\(what): \(bad.count) records differ from what was saved, e.g. \(bad.prefix(2))", file: file, line: line)
    }

    /// Follows every marker, one process per page (`--format ndjson`: the records, then a line
    /// `{continuationMarker}` unless it is the last page); with `jsonToo` the first page is also
    /// read as JSON to check that it names the same marker and records. Returns the record
    /// lines in order.
    private func followed(_ s: Sandbox, _ args: [String], pageSize: Int, jsonToo: Bool, file: StaticString, line: UInt) -> [String] {
        var out: [String] = []
        var marker: String?
        var pages = 0
        repeat {
            let r = s.run(args + ["--format", "ndjson"] + (marker.map { ["--continue", $0] } ?? []))
            guard r.status == 0 else { XCTFail("page \(pages) of \(args): exit \(r.status): \(r.stderr)", file: file, line: line); return out }
            var page = QueryAllTests.lines(r.stdout)
            let first = marker == nil
            marker = nil
            if let last = page.last, let o = QueryAllTests.object(last), o["recordName"] == nil {
                marker = o["continuationMarker"] as? String
                XCTAssertNotNil(marker, "trailer \(last)", file: file, line: line)
                page.removeLast()
            }
            if first && jsonToo {
                let doc = s.run(args)
                XCTAssertEqual(doc.status, 0, doc.stderr, file: file, line: line)
                XCTAssertEqual(doc.object["continuationMarker"] as? String, marker, "JSON and NDJSON name the same marker", file: file, line: line)
                XCTAssertEqual((doc.object["records"] as? [[String: Any]])?.compactMap { $0["recordName"] as? String }, names(page.joined(separator: "\n")),
                               file: file, line: line)
            }
            if marker != nil { XCTAssertEqual(page.count, pageSize, "a page before the last is full", file: file, line: line) }
            out += page
            pages += 1
        } while marker != nil && pages < 2000
        return out
    }

    /// Runs the query page by page, then with `--all` (and, with `scan`, with `--all` over every
    /// record file), and checks all three print the same record lines, byte for byte, which are
    /// the records `expected` names with the fields `model` gives them. Returns the query plans
    /// of the indexed `--all` run.
    @discardableResult
    private func check(_ s: Sandbox, _ extra: [String], type: String = "Task", at: String? = nil, pageSize: Int = 200, scan: Bool = true,
                       expected: [String], model: [String: Item], file: StaticString = #filePath, line: UInt = #line) -> [String] {
        let args = ["--zone", "Z", "record", "query", "--type", type] + extra + (at.map { ["--at", $0] } ?? [])
        let what = args.dropFirst(2).joined(separator: " ")
        // (Each page --at reads every record: the JSON check is left to the queries without it.)
        let paged = followed(s, args, pageSize: pageSize, jsonToo: at == nil, file: file, line: line)
        assertSameLines(names(paged.joined(separator: "\n")), expected, "\(what): pages followed vs the expected names", file: file, line: line)
        assertFieldsMatch(paged, model, what, file: file, line: line)

        let all = s.run(args + ["--all", "--format", "ndjson"], env: ["CK_DEBUG_QUERY_PLAN": "1"])
        XCTAssertEqual(all.status, 0, all.stderr, file: file, line: line)
        XCTAssertTrue(all.stdout.isEmpty || all.stdout.hasSuffix("}\n"), "\(what) --all ends with a whole line", file: file, line: line)
        XCTAssertFalse(all.stdout.contains("continuationMarker"), "\(what) --all prints no marker", file: file, line: line)
        assertSameLines(QueryAllTests.lines(all.stdout), paged, "\(what): --all vs every page followed", file: file, line: line)
        if scan {
            let scanned = s.run(args + ["--all", "--format", "ndjson"], env: ["CK_DEBUG_NO_INDEX": "1"])
            XCTAssertEqual(scanned.status, 0, scanned.stderr, file: file, line: line)
            assertSameLines(QueryAllTests.lines(scanned.stdout), paged, "\(what): --all read by a scan vs every page followed", file: file, line: line)
        }
        return all.stderr.split(separator: "\n").filter { $0.hasPrefix("query plan: ") }.map { String($0.dropFirst(12)) }
    }

    // MARK: - Tests

    /// Queries whose answers run past the 2,000-record internal page.
    func testAllAcrossTheInternalPageEqualsEveryPageFollowed() {
        let (s, model) = seeded()
        var plans: [String] = []

        let every = QueryAllTests.expected(model)
        XCTAssertGreaterThan(every.count, 2200, "the corpus crosses the internal page")
        plans += check(s, [], expected: every, model: model)

        plans += check(s, ["--filter", "priority > 3"], expected: QueryAllTests.expected(model, where: { ($0.priority ?? -1) > 3 }), model: model)

        let twos = QueryAllTests.expected(model, where: { $0.priority == 2 }, sorts: [(QueryAllTests.title, false)])
        XCTAssertGreaterThan(twos.count, 200)
        plans += check(s, ["--filter", "priority == 2", "--sort", "title:desc"], expected: twos, model: model)

        let tasks = QueryAllTests.expected(model, where: { $0.title?.hasPrefix("task") == true })
        XCTAssertGreaterThan(tasks.count, 2000, "BEGINS_WITH matches more than one internal page")
        plans += check(s, ["--filter", "title BEGINS_WITH task"], expected: tasks, model: model)

        // The other record type: only its own records, past one 200-record page.
        let notes = QueryAllTests.expected(model, type: "Note")
        XCTAssertGreaterThan(notes.count, 200)
        plans += check(s, [], type: "Note", expected: notes, model: model)

        // As one JSON document: {records: [...]}, every record, no marker.
        let doc = s.run(["--zone", "Z", "record", "query", "--type", "Task", "--all"])
        XCTAssertEqual(doc.status, 0, doc.stderr)
        XCTAssertEqual(Array(doc.object.keys), ["records"])
        XCTAssertEqual((doc.object["records"] as? [[String: Any]])?.compactMap { $0["recordName"] as? String }, every)

        // The indexes answered (else the comparison with the scan proves little).
        XCTAssertFalse(plans.isEmpty)
        XCTAssertTrue(plans.allSatisfy { $0 != "scan" }, "\(plans)")
    }

    /// Sorts with duplicates and missing values at the internal page's edge, and small pages.
    func testAllSortedAndSmallPagesEqualEveryPageFollowed() {
        let (s, model) = seeded()
        var plans: [String] = []

        // Due dates: 900 values over ~2,100 records (ties at the 2,000th), then those without.
        let byDue = QueryAllTests.expected(model, sorts: [(QueryAllTests.due, true)])
        let dated = model.values.filter { $0.type == "Task" && $0.due != nil }.count
        XCTAssertGreaterThan(dated, 2000)
        XCTAssertEqual(Set(byDue.suffix(byDue.count - dated).map { model[$0]!.due == nil }), [true], "records without a due date come last")
        plans += check(s, ["--sort", "dueDate"], expected: byDue, model: model)

        // A field a fifth of the records lack: the 2,000th record is among those without it.
        let byEstimate = QueryAllTests.expected(model, sorts: [(QueryAllTests.estimate, false)])
        XCTAssertLessThan(model.values.filter { $0.type == "Task" && $0.estimate != nil }.count, 2000)
        plans += check(s, ["--sort", "estimate:desc"], expected: byEstimate, model: model)

        // Six priorities, ~350 records each, then by title descending, then by name.
        plans += check(s, ["--sort", "priority", "--sort", "title:desc"],
                       expected: QueryAllTests.expected(model, sorts: [(QueryAllTests.priority, true), (QueryAllTests.title, false)]), model: model)

        // --limit sets the size of the pages followed; --all still prints every page.
        let small = QueryAllTests.expected(model, where: { $0.title?.hasPrefix("task 01") == true }, sorts: [(QueryAllTests.due, false)])
        XCTAssertGreaterThan(small.count, 50)
        plans += check(s, ["--filter", "title BEGINS_WITH \"task 01\"", "--sort", "dueDate:desc", "--limit", "7"], pageSize: 7, expected: small, model: model)

        XCTAssertTrue(plans.contains { $0 != "scan" }, "\(plans)")
    }

    /// `--all --at REF` prints what following every page `--at REF` prints: the zone as it was
    /// at a tag, and at `Z@SEQ`, after records were deleted, changed, added and made again.
    func testAllAtAPointEqualsEveryPageFollowedAtIt() {
        let (s, model0) = seeded()
        XCTAssertEqual(s.run(["tag", "create", "before"]).status, 0)

        func modify(_ model: inout [String: Item], deletes: [String], saves: [Item]) {
            let ops: [[String: Any]] = deletes.map { ["operationType": "forceDelete", "record": ["recordName": $0]] }
                + saves.map { ["operationType": "forceReplace", "record": $0.record] }
            // A request holds at most 200 operations.
            for start in stride(from: 0, to: ops.count, by: 200) {
                let chunk = Array(ops[start..<min(start + 200, ops.count)])
                let r = s.run(["-q", "record", "modify"], stdin: QueryAllTests.json(["operations": chunk, "atomic": true, "zoneID": ["zoneName": "Z"]]))
                XCTAssertEqual(r.status, 0, r.stderr)
            }
            for d in deletes { model[d] = nil }
            for it in saves { model[it.name] = it }
        }

        // Batch 1: every 17th Task deleted, every 13th changed, 60 new records among them.
        var model1 = model0
        let tasks0 = QueryAllTests.expected(model0)
        let deleted1 = stride(from: 5, to: tasks0.count, by: 17).map { tasks0[$0] }
        let changed1 = stride(from: 3, to: tasks0.count, by: 13).map { tasks0[$0] }.filter { !deleted1.contains($0) }.map { n -> Item in
            var it = model0[n]!
            it.priority = 5
            it.due = nil
            it.estimate = (it.estimate ?? 0) + 1000
            return it
        }
        modify(&model1, deletes: deleted1, saves: changed1 + (2500..<2560).map(QueryAllTests.item))
        let log = s.run(["--zone", "Z", "log", "--limit", "1"])
        guard let mid = ((log.object["changes"] as? [[String: Any]])?.first?["seq"] as? Int) else { return XCTFail("no head: \(log.stdout) \(log.stderr)") }

        // Batch 2: other deletes, changes (some of records batch 1 changed), and records batch 1
        // deleted made again.
        var model2 = model1
        let tasks1 = QueryAllTests.expected(model1)
        let deleted2 = stride(from: 2, to: tasks1.count, by: 23).map { tasks1[$0] }
        let changed2 = stride(from: 0, to: tasks1.count, by: 11).map { tasks1[$0] }.filter { !deleted2.contains($0) }.map { n -> Item in
            var it = model1[n]!
            it.priority = nil
            it.title = "task 011"
            it.due = 1_600_000_000_000
            return it
        }
        let remade = deleted1.prefix(20).map { n -> Item in
            var it = model0[n]!
            it.priority = 4
            return it
        }
        modify(&model2, deletes: deleted2, saves: changed2 + remade)

        XCTAssertGreaterThan(QueryAllTests.expected(model1).count, 2000)
        XCTAssertNotEqual(QueryAllTests.expected(model0), QueryAllTests.expected(model1))

        // At Z@SEQ, between the batches: what batch 1 deleted is gone, what it added is there,
        // what batch 2 changed or deleted is as it was — past the internal page.
        check(s, [], at: "Z@\(mid)", scan: false, expected: tasks1, model: model1)
        // At the tag: the imported records, with their imported fields (batch 1's priorities of
        // 5 undone), sorted on a field batch 1 removed.
        let fives = { (m: [String: Item]) in QueryAllTests.expected(m, where: { ($0.priority ?? -1) > 4 }, sorts: [(QueryAllTests.due, false)]) }
        XCTAssertGreaterThan(fives(model0).count, 200)
        XCTAssertNotEqual(fives(model0), fives(model2))
        check(s, ["--filter", "priority > 4", "--sort", "dueDate:desc"], at: "before", scan: false, expected: fives(model0), model: model0)
        // Now: from the indexes (and the changes since they were written), and by a scan.
        check(s, [], expected: QueryAllTests.expected(model2), model: model2)
    }

    /// A record file in the middle of the answer that is not a record: `--all` fails (exit 1,
    /// INTERNAL_ERROR naming the file and `ck fsck`), whether the file falls in the first
    /// internal page or a later one, from the indexes or by a scan — it never skips the record
    /// and prints the rest — and the failed read changes nothing in the data directory.
    func testAllFailsOnACorruptRecordFileAndChangesNothing() {
        // No query has run in this store yet: none has issued a continuation marker.
        let (s, model) = seeded()
        let tasks = QueryAllTests.expected(model)
        XCTAssertGreaterThan(tasks.count, 2100)
        let records = s.zoneDirectory("Z") + "/records"
        func path(_ name: String) -> String {
            let shard = ((try? FileManager.default.contentsOfDirectory(atPath: records)) ?? []).first {
                FileManager.default.fileExists(atPath: records + "/" + $0 + "/" + name + ".json")
            }
            return records + "/" + (shard ?? "?") + "/" + name + ".json"
        }
        let base = ["--zone", "Z", "record", "query", "--type", "Task"]
        var failures: [(name: String, byDue: Bool, out: String)] = []

        /// Runs a failing `--all`: exit 1, the error names the file and fsck, nothing changed.
        func assertFails(_ name: String, _ extra: [String], env: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) {
            let rel = "zones/Z/records/" + URL(fileURLWithPath: path(name)).deletingLastPathComponent().lastPathComponent + "/" + name + ".json"
            s.assertUnchanged("query --all \(extra) \(env) over a corrupt \(rel)", file: file, line: line) {
                let r = s.run(base + extra + ["--all"], env: env)
                failures.append((name, extra.contains("dueDate"), r.stdout))
                guard r.status != 0 else {
                    let printed = names(r.stdout)
                    return XCTFail("exit 0, no error, \(printed.count) records printed\(printed.contains(name) ? "" : " without \(name)"): the corrupt file was skipped",
                                   file: file, line: line)
                }
                XCTAssertEqual(r.status, 1, "exit; stderr: \(r.stderr)", file: file, line: line)
                let last = r.stderr.split(separator: "\n").last.map(String.init) ?? ""
                XCTAssertTrue(last.hasPrefix("ck: INTERNAL_ERROR: corrupt"), last, file: file, line: line)
                XCTAssertTrue(last.contains(rel), "the error names \(rel): \(last)", file: file, line: line)
                XCTAssertTrue(last.contains("ck fsck"), last, file: file, line: line)
                XCTAssertFalse(r.stdout.contains("\"\(name)\""), "the corrupt record is not printed", file: file, line: line)
            }
        }

        // In the first internal page: garbage.
        let early = tasks[tasks.count / 2]
        let earlyBytes = FileManager.default.contents(atPath: path(early))
        XCTAssertNotNil(earlyBytes)
        XCTAssertTrue(FileManager.default.createFile(atPath: path(early), contents: Data("garbage{{{".utf8)))
        assertFails(early, ["--format", "ndjson"])
        assertFails(early, ["--format", "ndjson"], env: ["CK_DEBUG_NO_INDEX": "1"])
        assertFails(early, [])
        assertFails(early, ["--sort", "dueDate", "--format", "ndjson"])
        assertFails(early, ["--at", "HEAD", "--format", "ndjson"])
        XCTAssertTrue(FileManager.default.createFile(atPath: path(early), contents: earlyBytes))

        // In the second internal page (past the 2,000th record): JSON that holds no record.
        let late = tasks[2100]
        let lateBytes = FileManager.default.contents(atPath: path(late))
        XCTAssertTrue(FileManager.default.createFile(atPath: path(late), contents: Data("{}\n".utf8)))
        assertFails(late, ["--format", "ndjson"])
        assertFails(late, ["--format", "ndjson"], env: ["CK_DEBUG_NO_INDEX": "1"])
        assertFails(late, ["--at", "HEAD", "--format", "ndjson"])
        XCTAssertTrue(FileManager.default.createFile(atPath: path(late), contents: lateBytes))

        // Repaired, the same queries succeed; what the failed runs printed before failing was a
        // beginning of this, ending before the corrupt record (nothing skipped past it).
        let good = s.run(base + ["--all", "--format", "ndjson"])
        XCTAssertEqual(good.status, 0, good.stderr)
        let goodLines = QueryAllTests.lines(good.stdout)
        XCTAssertEqual(names(goodLines.joined(separator: "\n")), tasks)
        let byDue = QueryAllTests.lines(s.run(base + ["--sort", "dueDate", "--all", "--format", "ndjson"]).stdout)
        for f in failures where !f.out.isEmpty && !f.out.hasPrefix("{\n") {
            let printed = QueryAllTests.lines(f.out)
            let reference = f.byDue ? byDue : goodLines
            assertSameLines(printed, Array(reference.prefix(printed.count)), "what a run over a corrupt \(f.name) printed vs the beginning of the answer",
                            file: #filePath, line: #line)
        }
        for f in failures where f.out.hasPrefix("{\n") {
            XCTAssertNil(try? JSONSerialization.jsonObject(with: Data(f.out.utf8)), "a failed JSON run is not a whole document")
        }

        // Once markers have been issued in this store, too: corrupt again, fail again, unchanged.
        XCTAssertTrue(FileManager.default.createFile(atPath: path(late), contents: Data("garbage".utf8)))
        assertFails(late, ["--format", "ndjson"])
        XCTAssertTrue(FileManager.default.createFile(atPath: path(late), contents: lateBytes))
    }
}
