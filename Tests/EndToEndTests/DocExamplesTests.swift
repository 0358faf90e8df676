import CKTestSupport
import Foundation
import XCTest

/// Every example in README.md and Docs/*.md runs here, against the built binary, so a doc that
/// says something false fails the build.
///
/// The convention, for whoever writes the docs:
///
/// - A ```` ```sh ```` block (or `bash`, `shell`) is an example, and it runs. Each command in it —
///   a line, or whatever bash reads as one: lines joined by `\`, a heredoc, a loop — must exit
///   0, unless its comment says otherwise with the words `exit N` (`# exit 4`,
///   `# CONFLICT, exit 4`). Its output is not checked.
/// - A ```` ```console ```` block is a transcript, and it runs too: `$ ` starts a command (same
///   rules for its exit status); the lines up to the next `$ ` are what a terminal shows — stdout
///   and stderr together — and are checked:
///   - JSON (one document, or one per line) is compared as values, so key order and spacing do
///     not matter; `…` stands for what varies or is not shown: a value (`"fields": { … }`), the
///     rest of an object's keys or of an array's items (`, …`), the rest of a string
///     (`"ck1.…"`). Values of the keys in `Expected.varying` (timestamps, uuids, user record
///     names, tokens) need only be of the same JSON type. Everything else must be equal.
///   - Anything else is compared line by line: `…` in a line matches any characters, and a line
///     holding only `…` matches any number of lines. Showing nothing means nothing is printed.
/// - Every other block (```` ```json ````, ```` ```text ````, a bare fence, …) is shown, not run.
/// - `<!-- not run: REASON -->` just before a ```` sh ```` or ```` console ```` block leaves it
///   out (it builds ck, waits for events, needs an editor…). Use it sparingly: say why.
/// - `<!-- setup: WHY`, then commands on the lines up to one starting with `-->`: an HTML
///   comment, so readers do not see it, whose commands run at that point as an `sh` block — the
///   state a reader of that page already has (signed in, a zone `Lists`, a `photo.jpg`).
///
/// Each document runs from the top in its own sandbox, in one bash (`set -o pipefail`), so
/// state and shell variables carry over from one example to the next as they do for a reader
/// following along: `ck` on PATH is the built binary, HOME, CK_DATA_DIR and the working
/// directory are in a fresh temporary directory, TZ is UTC, stdin is /dev/null. A command that
/// exits other than as documented stops its document. Commands that use `jq` are skipped, with
/// a note, when jq is not installed (`CK_DOCS_WITHOUT_JQ=1` simulates that).
final class DocExamplesTests: XCTestCase {
    func testREADME() throws { try DocRun.check("README.md") }
    func testCk() throws { try DocRun.check("Docs/ck.md") }
    func testRecords() throws { try DocRun.check("Docs/records.md") }
    func testAccount() throws { try DocRun.check("Docs/account.md") }
    func testChanges() throws { try DocRun.check("Docs/changes.md") }
    func testSchema() throws { try DocRun.check("Docs/schema.md") }
    func testStorage() throws { try DocRun.check("Docs/storage.md") }
    func testWire() throws { try DocRun.check("Docs/wire.md") }
    func testReliability() throws { try DocRun.check("Docs/reliability.md") }
    func testBenchmarks() throws { try DocRun.check("Docs/benchmarks.md") }
    func testFaults() throws { try DocRun.check("Docs/faults.md") }
    func testHistory() throws { try DocRun.check("Docs/history.md") }
    func testSharing() throws { try DocRun.check("Docs/sharing.md") }
    func testArchitecture() throws { try DocRun.check("Docs/architecture.md") }
    func testServe() throws { try DocRun.check("Docs/serve.md") }
    func testRemote() throws { try DocRun.check("Docs/remote.md") }
    func testConsole() throws { try DocRun.check("Docs/console.md") }

    /// A new page gets a test above, or its examples would go unchecked.
    func testEveryDocumentIsChecked() throws {
        let checked: Set<String> = ["README.md", "Docs/ck.md", "Docs/records.md", "Docs/account.md", "Docs/changes.md",
                                    "Docs/schema.md", "Docs/storage.md", "Docs/wire.md", "Docs/reliability.md", "Docs/benchmarks.md", "Docs/faults.md",
                                    "Docs/history.md", "Docs/sharing.md", "Docs/architecture.md", "Docs/serve.md", "Docs/remote.md", "Docs/console.md"]
        let docs = try FileManager.default.contentsOfDirectory(atPath: DocRun.repo.appendingPathComponent("Docs").path)
            .filter { $0.hasSuffix(".md") }.map { "Docs/" + $0 }
        XCTAssertEqual(Set(docs + ["README.md"]).subtracting(checked), [], "add a test method for these pages")
    }

    // MARK: the machinery itself

    func testMarkdownParsing() throws {
        let md = """
        Intro.

        ```sh
        ck a   # exit 4
        # a comment alone
        ck b \\
           --c
        f() {
          ck d
        }
        ```

        <!-- not run: waits forever -->
        ```sh
        ck e --follow
        ```

        <!-- setup: a reason
        ck f
        -->
        ```console
        $ ck g
        {"x": 1}
        $ ck h  # exit 6
        ck: BAD_REQUEST: …
        $ ck i <<'EOF'
        {"in": 1}
        EOF
        {"out": 1}
        ```

        ```json
        {"shown": true}
        ```
        """
        let steps = try DocParser.steps(md, file: "t.md")
        XCTAssertEqual(steps.map(\.code), ["ck a   # exit 4", "ck b \\\n   --c", "f() {\n  ck d\n}", "ck f", "ck g", "ck h  # exit 6",
                                            "ck i <<'EOF'\n{\"in\": 1}\nEOF"])
        XCTAssertEqual(steps.map(\.exit), [4, 0, 0, 0, 0, 6, 0])
        XCTAssertEqual(steps.map(\.line), [4, 6, 8, 19, 22, 24, 26])
        XCTAssertEqual(steps.map(\.output), [nil, nil, nil, nil, "{\"x\": 1}", "ck: BAD_REQUEST: …", "{\"out\": 1}"])
        XCTAssertThrowsError(try DocParser.steps("<!-- not run: x -->\nprose\n```sh\nck\n```\n", file: "t.md"))
        XCTAssertThrowsError(try DocParser.steps("```sh\nck 'unclosed\n```\n", file: "t.md"))
        XCTAssertThrowsError(try DocParser.steps("```console\nck without a prompt\n```\n", file: "t.md"))
    }

    /// A false example is caught: a wrong exit status stops the document, a wrong output is
    /// named, a command that hangs is stopped.
    func testFalseExamplesFail() throws {
        let md = """
        ```sh
        x=1
        ```

        ```console
        $ echo "$x"; ck account
        1
        {"status": "available"}
        $ ck record get nope      # exit 9
        ```

        ```sh
        ck account
        ```
        """
        let failures = try DocRun.run(md, document: "t.md")
        XCTAssertEqual(failures.count, 2, "\(failures)")
        XCTAssertTrue(failures.first?.hasPrefix("t.md:6: echo \"$x\"; ck account: the output differs from the doc: line 2:") == true, "\(failures)")
        XCTAssertTrue(failures.last?.hasPrefix("t.md:9: ck record get nope      # exit 9: exit 5, the doc says 9") == true, "\(failures)")

        let start = Date()
        let hang = try DocRun.run("```sh\nsleep 30\n```\n", document: "h.md", timeout: 1)
        XCTAssertEqual(hang, ["h.md:2: sleep 30: still running after 1 s (mark it `<!-- not run: … -->`?)"])
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
    }

    func testOutputMatching() {
        let ok: [(String, String)] = [
            ("{\"a\": 1, \"b\": [1, 2]}", "{\n  \"b\": [1, 2],\n  \"a\": 1\n}\n"),
            ("{\"a\": …, \"b\": { … }}", "{\"a\": \"x\", \"b\": {\"c\": null}}"),
            ("{\"a\": 1, …}", "{\"a\": 1, \"z\": 2}"),
            ("[1, …]", "[1, 2, 3]"),
            ("{\"t\": \"ck1.…\"}", "{\"t\": \"ck1.abc\"}"),
            ("{\"timestamp\": 1795393589656, \"uuid\": \"x\"}", "{\"timestamp\": 1, \"uuid\": \"y\"}"),
            ("{\"n\": 1}\n{\"n\": 2}", "{\"n\":1}\n{\"n\":2}\n"),
            ("ck: CONFLICT: record 'x' …", "ck: CONFLICT: record 'x' changed\n"),
            ("a\n…\nz", "a\nb\nc\nz\n"),
            ("a (\n    …\n)", "a (\n  b\n  c\n)\n"),
            ("{\"n\": 1}\n…", "{\"n\":1}\n{\"n\":2}\n"),
            ("", ""),
        ]
        for (e, a) in ok { XCTAssertNil(Expected.mismatch(expected: e, actual: a), "\(e) vs \(a)") }
        let bad: [(String, String)] = [
            ("{\"a\": 1}", "{\"a\": 1, \"b\": 2}"),
            ("{\"a\": 1}", "{\"a\": 2}"),
            ("{\"a\": true}", "{\"a\": 1}"),
            ("[1]", "[1, 2]"),
            ("{\"t\": \"ck1.…\"}", "{\"t\": \"ck2.abc\"}"),
            ("{\"timestamp\": 1}", "{\"timestamp\": \"1\"}"),
            ("{\"n\": 1}", "{\"n\": 1}…"),
            ("a\nb", "a\nc\n"),
            ("", "x\n"),
        ]
        for (e, a) in bad { XCTAssertNotNil(Expected.mismatch(expected: e, actual: a), "\(e) vs \(a)") }
    }

    /// The stderr summary of an atomic batch that failed names the operation that caused it,
    /// not the ATOMIC_ERROR of the others.
    func testAtomicBatchSummaryNamesTheCause() throws {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--type", "T", "--name", "b", "n=1").status, 0)
        let body = """
        {"operations": [
          {"operationType": "create", "record": {"recordName": "a", "recordType": "T", "fields": {"n": {"value": 1}}}},
          {"operationType": "create", "record": {"recordName": "b", "recordType": "T", "fields": {"n": {"value": 2}}}}
        ], "zoneID": {"zoneName": "Lists"}}
        """
        let r = s.run(["record", "modify"], stdin: body)
        XCTAssertEqual(r.status, 9, r.stderr)
        let codes = ((r.object["records"] as? [[String: Any]]) ?? []).map { $0["serverErrorCode"] as? String }
        XCTAssertEqual(codes, ["ATOMIC_ERROR", "EXISTS"])
        XCTAssertTrue(r.stderr.hasPrefix("ck: PARTIAL_FAILURE: 2 of 2 operations failed (cause: EXISTS: "), r.stderr)
        XCTAssertEqual(r.stderr.filter { $0 == "\n" }.count, 1, r.stderr)

        let j = s.run(["record", "modify", "--error-format", "json"], stdin: body)
        XCTAssertEqual(j.status, 9)
        let env = try JSONSerialization.jsonObject(with: Data(j.stderr.utf8)) as? [String: Any] ?? [:]
        XCTAssertEqual((env["cause"] as? [String: Any])?["serverErrorCode"] as? String, "EXISTS")
        XCTAssertEqual((env["firstError"] as? [String: Any])?["serverErrorCode"] as? String, "ATOMIC_ERROR")

        // Not atomic: the first failure is the one named.
        let lookup = s.ck("--zone", "Lists", "record", "get", "b", "nope", "gone")
        XCTAssertEqual(lookup.status, 9)
        XCTAssertTrue(lookup.stderr.hasPrefix("ck: PARTIAL_FAILURE: 2 of 3 records failed (first: NOT_FOUND: "), lookup.stderr)
    }
}

// MARK: - Reading examples out of Markdown

/// One command of a document, in the order a reader meets it.
struct DocStep {
    var line: Int                // where it starts in the document (1-based)
    var code: String             // what bash runs
    var exit: Int32              // the documented exit status
    var output: String?          // what a console block shows it printing (stdout and stderr)
}

struct DocError: Error, CustomStringConvertible { let description: String }

enum DocParser {
    static let runnable: Set<String> = ["sh", "bash", "shell"]

    static func steps(_ text: String, file: String) throws -> [DocStep] {
        let lines = text.components(separatedBy: "\n")
        var steps: [DocStep] = []
        var pendingSkip: (line: Int, reason: String)?
        var i = 0
        while i < lines.count {
            let raw = lines[i]
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("<!-- not run:") {
                guard trimmed.hasSuffix("-->") else { throw DocError(description: "\(file):\(i + 1): '<!-- not run: …' must end on its line with '-->'") }
                pendingSkip = (i + 1, trimmed)
                i += 1
                continue
            }
            if trimmed.hasPrefix("<!-- setup:") {
                // The rest of the first line says why; the commands follow, up to `-->`.
                guard !trimmed.hasSuffix("-->") else { throw DocError(description: "\(file):\(i + 1): a setup comment has its commands on the lines after '<!-- setup:'") }
                var body: [String] = []
                var j = i + 1
                while j < lines.count, !lines[j].trimmingCharacters(in: .whitespaces).hasPrefix("-->") { body.append(lines[j]); j += 1 }
                guard j < lines.count else { throw DocError(description: "\(file):\(i + 1): setup comment never closed by a line '-->'") }
                steps += try shellSteps(body, firstLine: i + 2, file: file)
                i = j + 1
                continue
            }
            if let fence = openingFence(raw) {
                var body: [String] = []
                var j = i + 1
                while j < lines.count, !closes(lines[j], fence) {
                    body.append(String(lines[j].dropFirst(min(fence.indent, lines[j].prefix { $0 == " " }.count))))
                    j += 1
                }
                guard j < lines.count else { throw DocError(description: "\(file):\(i + 1): unclosed code block") }
                if pendingSkip != nil {
                    guard runnable.contains(fence.lang) || fence.lang == "console" else {
                        throw DocError(description: "\(file):\(pendingSkip!.line): 'not run' before a block that never runs")
                    }
                    pendingSkip = nil
                } else if runnable.contains(fence.lang) {
                    steps += try shellSteps(body, firstLine: i + 2, file: file)
                } else if fence.lang == "console" {
                    steps += try consoleSteps(body, firstLine: i + 2, file: file)
                }
                i = j + 1
                continue
            }
            if pendingSkip != nil && !trimmed.isEmpty {
                throw DocError(description: "\(file):\(pendingSkip!.line): 'not run' must come just before its block")
            }
            i += 1
        }
        if let p = pendingSkip { throw DocError(description: "\(file):\(p.line): 'not run' with no block after it") }
        return steps
    }

    struct Fence { let marker: String; let indent: Int; let lang: String }

    static func openingFence(_ line: String) -> Fence? {
        let indent = line.prefix { $0 == " " }.count
        let rest = line.dropFirst(indent)
        for ch: Character in ["`", "~"] {
            let run = rest.prefix { $0 == ch }.count
            if run >= 3 {
                let info = rest.dropFirst(run).trimmingCharacters(in: .whitespaces)
                let lang = info.split(separator: " ").first.map(String.init) ?? ""
                return Fence(marker: String(repeating: ch, count: run), indent: indent, lang: lang.lowercased())
            }
        }
        return nil
    }

    static func closes(_ line: String, _ fence: Fence) -> Bool {
        let t = line.trimmingCharacters(in: .whitespaces)
        return t.hasPrefix(fence.marker) && t.allSatisfy { $0 == fence.marker.first }
    }

    /// The commands of a script: blank and comment lines between them are dropped.
    static func shellSteps(_ body: [String], firstLine: Int, file: String) throws -> [DocStep] {
        var steps: [DocStep] = []
        var i = 0
        while i < body.count {
            let t = body[i].trimmingCharacters(in: .whitespaces)
            if t.isEmpty || t.hasPrefix("#") { i += 1; continue }
            let start = i
            var chunk = [body[i]]
            while !isComplete(chunk.joined(separator: "\n")) {
                i += 1
                guard i < body.count else {
                    throw DocError(description: "\(file):\(firstLine + start): not a complete shell command: \(chunk.joined(separator: "\n"))")
                }
                chunk.append(body[i])
            }
            let code = chunk.joined(separator: "\n")
            steps.append(DocStep(line: firstLine + start, code: code, exit: documentedExit(code), output: nil))
            i += 1
        }
        return steps
    }

    /// `$ command` lines, each followed by what it prints.
    static func consoleSteps(_ body: [String], firstLine: Int, file: String) throws -> [DocStep] {
        var steps: [DocStep] = []
        var i = 0
        while i < body.count {
            guard body[i].hasPrefix("$ ") else {
                if body[i].trimmingCharacters(in: .whitespaces).isEmpty && steps.isEmpty { i += 1; continue }
                throw DocError(description: "\(file):\(firstLine + i): a console block starts each command with '$ '")
            }
            let start = i
            var chunk = [String(body[i].dropFirst(2))]
            while !isComplete(chunk.joined(separator: "\n")) {
                i += 1
                guard i < body.count else {
                    throw DocError(description: "\(file):\(firstLine + start): not a complete shell command: \(chunk.joined(separator: "\n"))")
                }
                chunk.append(body[i].hasPrefix("> ") ? String(body[i].dropFirst(2)) : body[i])
            }
            i += 1
            var out: [String] = []
            while i < body.count, !body[i].hasPrefix("$ ") { out.append(body[i]); i += 1 }
            while out.last?.isEmpty == true { out.removeLast() }
            let code = chunk.joined(separator: "\n")
            steps.append(DocStep(line: firstLine + start, code: code, exit: documentedExit(code), output: out.joined(separator: "\n")))
        }
        return steps
    }

    /// `exit N` in a comment of the command.
    static func documentedExit(_ code: String) -> Int32 {
        let re = try! NSRegularExpression(pattern: "(?:^|\\s)#[^\\n]*\\bexit (\\d+)\\b", options: [.anchorsMatchLines])
        let ns = code as NSString
        guard let m = re.firstMatch(in: code, range: NSRange(location: 0, length: ns.length)) else { return 0 }
        return Int32(ns.substring(with: m.range(at: 1))) ?? 0
    }

    /// Whether bash reads the text as whole commands (no open quote, heredoc, `\`, block).
    static func isComplete(_ code: String) -> Bool {
        if code.hasSuffix("\\") { return false }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-n", "-c", code]
        let err = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return true }
        let said = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        // An open heredoc is only a warning ("here-document … delimited by end-of-file").
        return p.terminationStatus == 0 && said.isEmpty
    }
}

// MARK: - Running a document

enum DocRun {
    /// The repository: three levels above this file.
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Tools an example may use that a fresh machine may lack: commands using one that is
    /// missing are skipped, with a note (`CK_DOCS_WITHOUT_JQ=1` simulates a missing jq).
    static let optionalTools = ["jq", "curl", "openssl"]

    static func locate(_ tool: String) -> String? {
        if tool == "jq", ProcessInfo.processInfo.environment["CK_DOCS_WITHOUT_JQ"] == "1" { return nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map { "\($0)/\(tool)" } + ["/usr/bin/\(tool)", "/usr/local/bin/\(tool)"])
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static let jq: String? = locate("jq")

    static func check(_ document: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let text = try String(contentsOf: repo.appendingPathComponent(document), encoding: .utf8)
        for failure in try run(text, document: document) { XCTFail(failure, file: file, line: line) }
    }

    /// Runs a document's examples; what went against the doc, if anything.
    static func run(_ text: String, document: String, timeout: TimeInterval = 45) throws -> [String] {
        var failures: [String] = []
        var steps = try DocParser.steps(text, file: document)
        for tool in optionalTools where locate(tool) == nil {
            let uses = try! NSRegularExpression(pattern: "(^|[|;&($\\s])\(tool)(\\s|$)")
            let skipped = steps.filter { uses.firstMatch(in: $0.code, range: NSRange(location: 0, length: ($0.code as NSString).length)) != nil }.map(\.line)
            steps.removeAll { skipped.contains($0.line) }
            if !skipped.isEmpty {
                print("note: \(tool) is not installed: \(document) lines \(skipped.map(String.init).joined(separator: ", ")) not run")
            }
        }
        guard !steps.isEmpty else { return [] }

        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ck-docs-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: root) }
        let bin = root.appendingPathComponent("bin"), work = root.appendingPathComponent("work"), results = root.appendingPathComponent("results")
        for d in [bin, work, results, root.appendingPathComponent("home")] { try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true) }
        try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent("ck").path, withDestinationPath: Sandbox.binary.path)
        if let jq { try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent("jq").path, withDestinationPath: jq) }

        // A server an example started in the background (`ck serve &`) ends with the document.
        var script = "set -o pipefail\ntrap 'kill $(jobs -p) 2>/dev/null' EXIT\n"
        for (n, s) in steps.enumerated() {
            let r = results.path + "/\(n)"
            script += "# \(document):\(s.line)\n{\n\(s.code)\n} >'\(r).out' " + (s.output == nil ? "2>'\(r).err'" : "2>&1") + " </dev/null\n"
            script += "__rc=$?; echo $__rc >'\(r).rc'; [ $__rc -eq \(s.exit) ] || exit 86\n"
        }
        let scriptURL = root.appendingPathComponent("doc.sh")
        try script.write(to: scriptURL, atomically: true, encoding: .utf8)

        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [scriptURL.path]
        p.currentDirectoryURL = work
        p.environment = ["PATH": bin.path + ":/usr/bin:/bin", "HOME": root.appendingPathComponent("home").path,
                         "CK_DATA_DIR": root.appendingPathComponent("data").path, "TZ": "UTC", "LANG": "C.UTF-8"]
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { p.waitUntilExit(); done.signal() }
        let timedOut = done.wait(timeout: .now() + timeout) == .timedOut
        // The step still running when time ran out: the first without an exit status.
        let hung = timedOut ? steps.indices.first { !FileManager.default.fileExists(atPath: results.path + "/\($0).rc") } : nil
        if timedOut {
            // The command that hangs is a child of this bash: end it first, then the script.
            let kill = Process()
            kill.executableURL = URL(fileURLWithPath: "/usr/bin/pkill")
            kill.arguments = ["-TERM", "-P", String(p.processIdentifier)]
            if (try? kill.run()) != nil { kill.waitUntilExit() }
            p.terminate()
            p.waitUntilExit()
        }

        func read(_ n: Int, _ ext: String) -> String? {
            (try? Data(contentsOf: results.appendingPathComponent("\(n).\(ext)"))).map { String(decoding: $0, as: UTF8.self) }
        }
        for (n, s) in steps.enumerated() {
            let at = "\(document):\(s.line): \(s.code.split(separator: "\n").first ?? "")"
            if n == hung {
                failures.append("\(at): still running after \(Int(timeout)) s (mark it `<!-- not run: … -->`?)")
                break
            }
            guard let rcText = read(n, "rc"), let rc = Int32(rcText.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                failures.append("\(at): did not run (did an earlier command end the script?)")
                break
            }
            let out = read(n, "out") ?? ""
            if rc != s.exit {
                let err = s.output == nil ? (read(n, "err") ?? "") : ""
                failures.append("\(at): exit \(rc), the doc says \(s.exit)\n--- output:\n\(out)\(err.isEmpty ? "" : "--- stderr:\n" + err)")
                break
            }
            if let expected = s.output, let why = Expected.mismatch(expected: expected, actual: out) {
                failures.append("\(at): the output differs from the doc: \(why)\n--- doc:\n\(expected)\n--- actual:\n\(out)")
            }
        }
        return failures
    }
}

// MARK: - Comparing what a doc shows with what ck printed

enum Expected {
    /// Keys whose values differ from run to run: only their JSON type is checked.
    static let varying: Set<String> = ["timestamp", "uuid", "userRecordName", "ownerRecordName", "syncToken",
                                       "continuationMarker", "notificationID", "downloadURL", "dataDirectory"]
    static let ellipsis = "…"

    /// nil when `actual` is what `expected` shows; else why not.
    static func mismatch(expected: String, actual: String) -> String? {
        var a = actual
        if a.hasSuffix("\n") { a.removeLast() }
        let e = expected.trimmingCharacters(in: .newlines)
        if e == ellipsis { return nil }
        // One JSON document?
        if let ej = try? J.parse(e, ellipsis: true) {
            guard let aj = try? J.parse(a, ellipsis: false) else { return "not one JSON document" }
            return compare(ej, aj, key: nil, path: "$")
        }
        let eLines = e.isEmpty ? [] : e.components(separatedBy: "\n")
        let aLines = a.isEmpty ? [] : a.components(separatedBy: "\n")
        // One JSON value per line?
        let eJSON = eLines.map { $0.trimmingCharacters(in: .whitespaces) == ellipsis ? nil : try? J.parse($0, ellipsis: true) }
        if !eLines.isEmpty, zip(eLines, eJSON).allSatisfy({ $0.0.trimmingCharacters(in: .whitespaces) == ellipsis || $0.1 != nil }) {
            return matchLines(eLines, aLines) { ei, al in
                guard let ej = eJSON[ei], let aj = try? J.parse(al, ellipsis: false) else { return false }
                return compare(ej, aj, key: nil, path: "$") == nil
            }
        }
        return matchLines(eLines, aLines) { ei, al in glob(eLines[ei], al) }
    }

    /// Lines matched in order; an expected line holding only `…` (and spaces) matches any number of lines.
    static func matchLines(_ e: [String], _ a: [String], _ same: (Int, String) -> Bool) -> String? {
        let any = e.map { $0.trimmingCharacters(in: .whitespaces) == ellipsis }
        var memo: [Int: Bool] = [:]
        func m(_ i: Int, _ j: Int) -> Bool {
            if let v = memo[i * (a.count + 1) + j] { return v }
            let v: Bool
            if i == e.count { v = j == a.count }
            else if any[i] { v = m(i + 1, j) || (j < a.count && m(i, j + 1)) }
            else { v = j < a.count && same(i, a[j]) && m(i + 1, j + 1) }
            memo[i * (a.count + 1) + j] = v
            return v
        }
        if m(0, 0) { return nil }
        if any.contains(true) { return "no way to match the lines, with each line of only … standing for any lines" }
        // Name the first line that differs, for the message.
        for (k, line) in e.enumerated() {
            if k >= a.count { return "line \(k + 1) missing: \(line)" }
            if !same(k, a[k]) { return "line \(k + 1): expected \(line)\n  got \(a[k])" }
        }
        return a.count > e.count ? "unexpected line \(e.count + 1): \(a[e.count])" : "lines differ"
    }

    /// `…` matches any run of characters.
    static func glob(_ pattern: String, _ s: String) -> Bool {
        let parts = pattern.components(separatedBy: ellipsis)
        if parts.count == 1 { return pattern == s }
        guard s.hasPrefix(parts[0]) else { return false }
        var rest = Substring(s.dropFirst(parts[0].count))
        for mid in parts.dropFirst().dropLast() {
            guard let r = rest.range(of: mid) else { return false }
            rest = rest[r.upperBound...]
        }
        return rest.hasSuffix(parts.last!)
    }

    static func compare(_ e: J, _ a: J, key: String?, path: String) -> String? {
        if case .any = e { return nil }
        if let k = key, varying.contains(k) {
            return e.kind == a.kind ? nil : "\(path): expected a \(e.kind), got \(a.render)"
        }
        switch (e, a) {
        case (.string(let x), .string(let y)):
            return glob(x, y) ? nil : "\(path): expected \"\(x)\", got \"\(y)\""
        case (.number(let x), .number(let y)):
            return x == y ? nil : "\(path): expected \(x), got \(y)"
        case (.bool(let x), .bool(let y)):
            return x == y ? nil : "\(path): expected \(x), got \(y)"
        case (.null, .null): return nil
        case (.object(let xs, let open), .object(let ys, _)):
            let ym = Dictionary(ys, uniquingKeysWith: { f, _ in f })
            for (k, v) in xs {
                guard let y = ym[k] else { return "\(path): no key \"\(k)\"" }
                if let why = compare(v, y, key: k, path: path + "." + k) { return why }
            }
            if !open {
                let extra = ys.map(\.0).filter { k in !xs.contains { $0.0 == k } }
                if !extra.isEmpty { return "\(path): keys the doc does not show: \(extra.sorted().joined(separator: ", "))" }
            }
            return nil
        case (.array(let xs), .array(let ys)):
            let split = xs.firstIndex { if case .any = $0 { return true } else { return false } }
            let head = split.map { Array(xs[..<$0]) } ?? xs
            let tail = split.map { Array(xs[($0 + 1)...]) } ?? []
            if split == nil ? ys.count != xs.count : ys.count < head.count + tail.count {
                return "\(path): expected \(xs.count) items, got \(ys.count)"
            }
            for (i, x) in head.enumerated() { if let why = compare(x, ys[i], key: nil, path: "\(path)[\(i)]") { return why } }
            for (i, x) in tail.enumerated() {
                let k = ys.count - tail.count + i
                if let why = compare(x, ys[k], key: nil, path: "\(path)[\(k)]") { return why }
            }
            return nil
        default:
            return "\(path): expected a \(e.kind), got \(a.render)"
        }
    }
}

/// JSON as a doc shows it: `…` (outside strings) may stand for a value, for the rest of an
/// object's members, or for any number of array items.
indirect enum J {
    case object([(String, J)], open: Bool), array([J]), string(String), number(Double), bool(Bool), null, any

    var kind: String {
        switch self {
        case .object: return "object"
        case .array: return "array"
        case .string: return "string"
        case .number: return "number"
        case .bool: return "boolean"
        case .null: return "null"
        case .any: return "anything"
        }
    }

    var render: String {
        switch self {
        case .string(let s): return "\"\(s)\""
        case .number(let n): return "\(n)"
        case .bool(let b): return "\(b)"
        case .null: return "null"
        default: return kind
        }
    }

    static func parse(_ text: String, ellipsis: Bool) throws -> J {
        var p = Parser(chars: Array(text.unicodeScalars), ellipsis: ellipsis)
        let v = try p.value()
        p.space()
        guard p.i == p.chars.count else { throw DocError(description: "trailing text") }
        return v
    }

    struct Parser {
        let chars: [Unicode.Scalar]
        let ellipsis: Bool
        var i = 0

        mutating func space() { while i < chars.count, [" ", "\n", "\t", "\r"].contains(chars[i]) { i += 1 } }
        func fail() -> DocError { DocError(description: "not JSON at \(i)") }

        mutating func isEllipsis() -> Bool {
            space()
            if ellipsis, i < chars.count, chars[i] == "…" { i += 1; return true }
            return false
        }

        mutating func value() throws -> J {
            if isEllipsis() { return .any }
            guard i < chars.count else { throw fail() }
            switch chars[i] {
            case "{":
                i += 1
                var members: [(String, J)] = []
                var open = false
                space()
                if i < chars.count, chars[i] == "}" { i += 1; return .object([], open: false) }
                while true {
                    if isEllipsis() { open = true } else {
                        space()
                        guard i < chars.count, chars[i] == "\"" else { throw fail() }
                        let k = try string()
                        space()
                        guard i < chars.count, chars[i] == ":" else { throw fail() }
                        i += 1
                        members.append((k, try value()))
                    }
                    space()
                    guard i < chars.count else { throw fail() }
                    if chars[i] == "," { i += 1; continue }
                    if chars[i] == "}" { i += 1; return .object(members, open: open) }
                    throw fail()
                }
            case "[":
                i += 1
                var items: [J] = []
                space()
                if i < chars.count, chars[i] == "]" { i += 1; return .array([]) }
                while true {
                    items.append(try value())
                    space()
                    guard i < chars.count else { throw fail() }
                    if chars[i] == "," { i += 1; continue }
                    if chars[i] == "]" { i += 1; return .array(items) }
                    throw fail()
                }
            case "\"": return .string(try string())
            case "t": try word("true"); return .bool(true)
            case "f": try word("false"); return .bool(false)
            case "n": try word("null"); return .null
            default:
                let start = i
                while i < chars.count, "+-0123456789.eE".unicodeScalars.contains(chars[i]) { i += 1 }
                guard i > start, let d = Double(String(String.UnicodeScalarView(chars[start..<i]))) else { throw fail() }
                return .number(d)
            }
        }

        mutating func word(_ w: String) throws {
            for c in w.unicodeScalars {
                guard i < chars.count, chars[i] == c else { throw fail() }
                i += 1
            }
        }

        mutating func string() throws -> String {
            i += 1
            var s = String.UnicodeScalarView()
            while i < chars.count, chars[i] != "\"" {
                if chars[i] == "\\" {
                    i += 1
                    guard i < chars.count else { throw fail() }
                    switch chars[i] {
                    case "n": s.append("\n")
                    case "t": s.append("\t")
                    case "r": s.append("\r")
                    case "b": s.append("\u{8}")
                    case "f": s.append("\u{C}")
                    case "u":
                        guard i + 4 < chars.count, let v = UInt32(String(String.UnicodeScalarView(chars[(i + 1)...(i + 4)])), radix: 16) else { throw fail() }
                        i += 4
                        var code = v
                        // A surrogate pair.
                        if (0xD800..<0xDC00).contains(v), i + 6 < chars.count, chars[i + 1] == "\\", chars[i + 2] == "u",
                           let lo = UInt32(String(String.UnicodeScalarView(chars[(i + 3)...(i + 6)])), radix: 16) {
                            code = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00)
                            i += 6
                        }
                        s.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                    default: s.append(chars[i])
                    }
                    i += 1
                } else {
                    s.append(chars[i])
                    i += 1
                }
            }
            guard i < chars.count else { throw fail() }
            i += 1
            return String(s)
        }
    }
}
