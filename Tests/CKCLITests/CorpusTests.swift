import CKTestSupport
import XCTest

/// The bad-input corpus (Tests/Corpus): every input, against every command that reads that
/// kind of input, must fail with a documented exit code and a one-line message, and leave the
/// sandbox — the data directory and everything around it — byte-for-byte as it was.
final class CorpusTests: XCTestCase {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Corpus")

    struct Case {
        var args: [String]
        var stdin = Data()
        var allowed: Set<Int32>
        var what: String
    }

    private func list(_ file: String) throws -> [String] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: Self.corpus.appendingPathComponent(file))) as! [String]
    }

    /// A store with something in it: a user, a zone, a record, a subscription.
    private static func seeded() -> CLISandbox {
        let s = CLISandbox()
        s.signIn()
        for args in [["zone", "create", "Z"], ["--zone", "Z", "record", "save", "--type", "T", "--name", "r1", "n=1"], ["subscribe"]] {
            precondition(s.run(args).status == 0)
        }
        return s
    }

    /// What is wrong with one case's outcome, if anything.
    private static func problems(_ s: CLISandbox, _ c: Case) -> [String] {
        let before = s.snapshot()
        let r = s.run(c.args, stdinData: c.stdin)
        var out: [String] = []
        let label = "\(c.what): \(c.args.map { String($0.prefix(40)) })"
        if !c.allowed.contains(r.status) { out.append("\(label) exited \(r.status), stderr: \(r.stderr.prefix(300))") }
        if !r.stdout.isEmpty { out.append("\(label) printed on stdout: \(r.stdout.prefix(200))") }
        let lines = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        if r.status == 2 {
            if !(lines.first?.hasPrefix("ck: error: ") ?? false) { out.append("\(label): no usage message: \(r.stderr.prefix(200))") }
        } else if lines.count != 1 || !(lines.first?.hasPrefix("ck: ") ?? false) {
            out.append("\(label): expected one line on stderr: \(r.stderr.prefix(300))")
        }
        if s.snapshot() != before { out.append("\(label) changed the sandbox") }
        return out
    }

    /// Runs the cases on one worker with its own sandbox, and reports every problem. (One: the
    /// commands run in this process, and `CLI.run` is made to run one command of one process at
    /// a time, never several at once beside each other.)
    private func run(_ cases: [Case], file: StaticString = #filePath, line: UInt = #line) {
        let workers = 1
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var problems: [String] = []
        }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            let s = Self.seeded()
            var mine: [String] = []
            for i in stride(from: w, to: cases.count, by: workers) { mine += Self.problems(s, cases[i]) }
            results.lock.lock()
            results.problems += mine
            results.lock.unlock()
        }
        for p in results.problems.sorted() { XCTFail(p, file: file, line: line) }
    }

    func testPayloadsOnStdin() throws {
        let dir = Self.corpus.appendingPathComponent("payloads")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 80)
        var inputs = try files.map { ($0, try Data(contentsOf: dir.appendingPathComponent($0))) }
        // Over the 1 MB record limit, built here rather than stored in the repository.
        inputs.append(("huge-string", Data(("{\"recordName\":\"x\",\"recordType\":\"T\",\"fields\":{\"big\":{\"value\":\"" + String(repeating: "x", count: 1_048_600) + "\"}}}").utf8)))
        let commands: [[String]] = [["record", "save", "--stdin"], ["record", "modify"], ["record", "query"], ["import"]]
        run(inputs.flatMap { name, data in commands.map { Case(args: ["--zone", "Z"] + $0, stdin: data, allowed: [2, 6, 8], what: name) } })
    }

    func testBadNames() throws {
        let names = try list("names.json")
        XCTAssertGreaterThanOrEqual(names.count, 12)
        var cases: [Case] = []
        for n in names where !n.contains("\u{0}") {  // argv cannot carry NUL; the payloads cover it
            // `/`, `\` and dots are ordinary in record names, as in CloudKit (HostilePathTests
            // shows such names stay inside the store); empty, over-long and control-character
            // names are bad everywhere.
            let badRecordName = n.isEmpty || n.utf8.count > 255 || n.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
            let recordUses: [[String]] = badRecordName ? [
                ["--zone", "Z", "record", "get", n], ["--zone", "Z", "record", "delete", n],
                ["--zone", "Z", "record", "save", "--type", "T", "--name", n, "a=1"],
            ] : []
            let uses: [[String]] = recordUses + [
                ["zone", "create", n], ["zone", "delete", n],
                ["--zone", n, "record", "list"], ["--zone", n, "record", "save", "--type", "T", "a=1"], ["subscribe", "--id", n],
                ["subscription", "get", n], ["subscription", "delete", n], ["--device", n, "notifications"], ["--zone", n, "zone", "changes"],
                ["--zone", n, "token", "expire"], ["--container", n, "record", "list"], ["--zone", n, "import"],
            ]
            cases += uses.map { Case(args: $0, allowed: [2, 6], what: "name '\(n.prefix(20))'") }
        }
        run(cases)
    }

    func testForgedTokens() throws {
        let tokens = try list("tokens.json")
        XCTAssertGreaterThanOrEqual(tokens.count, 12)
        run(tokens.flatMap { t in
            [Case(args: ["--zone", "Z", "zone", "changes", "--since", t], allowed: [6], what: "token '\(t.prefix(20))'"),
             Case(args: ["database", "changes", "--since", t], allowed: [6], what: "token '\(t.prefix(20))'")]
        })
    }

    func testUnknownFlagsOnEveryCommand() throws {
        let flags = try list("flags.json")
        let help = CLISandbox().ck("help", "--all").stdout
        // Every command listed by `ck help --all`: "  <path words>   <summary>" after "Commands:".
        var commands: [[String]] = []
        for line in help.split(separator: "\n").drop(while: { $0 != "Commands:" }).dropFirst() where line.hasPrefix("  ") {
            guard let gap = line.dropFirst(2).range(of: "  ") else { continue }
            commands.append(line.dropFirst(2)[..<gap.lowerBound].split(separator: " ").map(String.init))
        }
        XCTAssertGreaterThanOrEqual(commands.count, 30, "commands parsed from ck help: \(commands)")
        run(commands.flatMap { c in flags.map { Case(args: c + [$0], allowed: [2], what: "flag \($0)") } })
    }
}

extension CorpusTests {
    /// Files 0600 and directories 0700 everywhere in a store that has seen every kind of write.
    func testEveryFileIsPrivateToItsOwner() throws {
        let s = Self.seeded()
        s.ck("--device", "phone", "--zone", "Z", "record", "save", "--type", "T", "--name", "r2", "n=2")
        s.ck("notifications")
        s.ck("--zone", "Z", "zone", "changes")
        s.ck("--zone", "Z", "token", "expire")
        s.ck("permission", "request", "userDiscoverability")
        s.ck("schema", "deploy")
        let fm = FileManager.default
        let e = try XCTUnwrap(fm.enumerator(atPath: s.dataDir.path))
        var checked = 0
        while let rel = e.nextObject() as? String {
            let attrs = try fm.attributesOfItem(atPath: s.dataDir.appendingPathComponent(rel).path)
            let mode = (attrs[.posixPermissions] as? Int ?? 0) & 0o777
            let isDir = (attrs[.type] as? FileAttributeType) == .typeDirectory
            XCTAssertEqual(mode, isDir ? 0o700 : 0o600, rel)
            checked += 1
        }
        XCTAssertGreaterThan(checked, 30)
    }
}
