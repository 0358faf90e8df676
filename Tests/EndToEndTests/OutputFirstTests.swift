import CKTestSupport
import Foundation
import XCTest

/// "Output first, then state", on the built binary with real pipes and real files: what a
/// command commits after printing (a zone or database bookmark, read marks on notifications)
/// moves only once stdout has been written without error and, on a pipe, read by the reader.
/// A reader that goes away makes ck exit 141 without a word; any other write error exits 1 with
/// one stderr line; `--follow` notices a vanished reader within about a second.
///
/// Every pipeline runs under `/bin/bash -c` with POSIX tools only (true, head, sh, cat, sleep, dd, mv),
/// and against a deadline: a ck that hangs fails the test (and is killed) instead of hanging CI.
final class OutputFirstTests: XCTestCase {

    // MARK: - Running ck inside a shell pipeline

    /// What one pipeline did: ck's own exit status, ck's own stderr, whatever the rest of the
    /// pipeline printed, how long ck itself ran (until its exit status was recorded, however
    /// long the reader lives on), and when it was sent a signal, if it was.
    private struct PipeRun {
        let status: Int32
        let stderr: String
        let shellOut: String
        let seconds: Double
        let signalledAt: Double?
    }

    private var scratchDirs: [URL] = []

    override func tearDown() {
        for d in scratchDirs { try? FileManager.default.removeItem(at: d) }
        scratchDirs = []
        super.tearDown()
    }

    /// A directory outside the sandbox root, so `Sandbox.snapshot()` sees only what ck wrote.
    private func scratch() -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("ck-of-" + UUID().uuidString)
        try! FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        scratchDirs.append(d)
        return d
    }

    /// Runs `ck ARGS… TAIL` in bash, where TAIL is shell text such as `| true`, `| head -c 1`,
    /// `> /dev/full` or `| cat > "$OFT_OUT"` (`$OFT_OUT` is a file in a scratch directory;
    /// `$OFT_CK` is the binary, for other ck runs inside the pipeline). `before` is shell text run
    /// first (background jobs are waited for). ck is started through
    /// `sh -c 'echo $$ > pidfile; exec ck …'`, so the test can signal exactly that process
    /// (`signal`: after so many seconds) and kill it past the deadline: a hanging ck fails the
    /// test instead of hanging CI.
    private func pipe(_ s: Sandbox, _ args: [String], _ tail: String, before: String = "", env: [String: String] = [:],
                      signal: (after: Double, number: Int32)? = nil, timeout: Double = 10,
                      file: StaticString = #filePath, line: UInt = #line) -> (PipeRun, URL) {
        let dir = scratch()
        let out = dir.appendingPathComponent("out")
        let pidFile = dir.appendingPathComponent("pid"), rcFile = dir.appendingPathComponent("rc")
        let script = """
        run_ck() { sh -c 'echo $$ > "$OFT_SCRATCH/pid.tmp" && mv "$OFT_SCRATCH/pid.tmp" "$OFT_SCRATCH/pid"; exec "$@"' ck-run "$OFT_CK" "$@"; }
        \(before)
        { run_ck "$@" 2>"$OFT_SCRATCH/ck-stderr"; echo $? > "$OFT_SCRATCH/rc.tmp"; mv "$OFT_SCRATCH/rc.tmp" "$OFT_SCRATCH/rc"; } \(tail)
        wait
        """
        _ = FileManager.default.createFile(atPath: dir.appendingPathComponent("shell-out").path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", script, "ck-pipeline"] + args
        p.environment = s.environment.merging(env) { _, new in new }
            .merging(["OFT_CK": Sandbox.binary.path, "OFT_SCRATCH": dir.path, "OFT_OUT": out.path]) { _, new in new }
        p.currentDirectoryURL = s.root
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle(forWritingAtPath: dir.appendingPathComponent("shell-out").path)
        p.standardError = FileHandle.nullDevice
        let done = DispatchSemaphore(value: 0)
        p.terminationHandler = { _ in done.signal() }
        let fm = FileManager.default
        func ckPID() -> pid_t? { pid_t(read(pidFile).trimmingCharacters(in: .whitespacesAndNewlines)) }
        let start = Date()
        try! p.run()
        var ckEnded: Double?
        var signalledAt: Double?
        while done.wait(timeout: .now() + 0.005) == .timedOut {
            let now = Date().timeIntervalSince(start)
            if ckEnded == nil, fm.fileExists(atPath: rcFile.path) { ckEnded = now }
            if let sig = signal, signalledAt == nil, now >= sig.after, let pid = ckPID() {
                kill(pid, sig.number)
                signalledAt = now
            }
            if now > timeout {
                if let pid = ckPID() { kill(pid, SIGKILL) }
                p.terminate()
                _ = done.wait(timeout: .now() + 5)
                XCTFail("ck \(args.joined(separator: " ")) \(tail): still running after \(timeout) s", file: file, line: line)
                break
            }
        }
        let total = Date().timeIntervalSince(start)
        let rc = Int32(read(rcFile).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        return (PipeRun(status: rc, stderr: read(dir.appendingPathComponent("ck-stderr")), shellOut: read(dir.appendingPathComponent("shell-out")),
                        seconds: ckEnded ?? total, signalledAt: signalledAt), out)
    }

    private func read(_ url: URL) -> String {
        FileManager.default.contents(atPath: url.path).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// The reader went away: exit 141 and not a word on stderr.
    private func assertBrokenPipe(_ r: PipeRun, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, 141, "\(what): exit status (stderr: \(r.stderr))", file: file, line: line)
        XCTAssertEqual(r.stderr, "", "\(what): a reader that went away is not an error to talk about", file: file, line: line)
    }

    /// Any other write error: exit 1 and exactly one stderr line saying so.
    private func assertWriteError(_ r: PipeRun, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, 1, "\(what): exit status (stderr: \(r.stderr))", file: file, line: line)
        XCTAssertEqual(r.stderr.filter { $0 == "\n" }.count, 1, "\(what): one stderr line: \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.hasPrefix("ck: cannot write output: "), "\(what): \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.hasSuffix("\n"), "\(what): \(r.stderr)", file: file, line: line)
    }

    /// Readers that go away without reading all of what ck wrote, and a full disk.
    /// `sh -c 'sleep 0.3; exit 3'` is still alive when ck has written, so ck must see it leave.
    private static let badTails: [(tail: String, exit: Int32)] = [
        ("| true", 141),
        ("| head -c 1 >/dev/null", 141),
        ("| sh -c 'sleep 0.3; exit 3'", 141),
        ("> /dev/full", 1),
    ]

    // MARK: - Fixtures

    private func zoneNames(_ json: String) -> [String] {
        guard let d = json.data(using: .utf8), let o = (try? JSONSerialization.jsonObject(with: d)) as? [String: Any] else { return ["<not JSON: \(json.prefix(200))>"] }
        return (o["zones"] as? [[String: Any]] ?? []).compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
    }

    private func notificationIDs(_ s: Sandbox, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        let r = s.ck("notifications")
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        return (r.object["notifications"] as? [[String: Any]] ?? []).compactMap { $0["notificationID"] as? String }
    }

    /// alice signed in, a custom zone Z with the default device's bookmark at its head, then
    /// two records saved from another device: the next `zone changes` should bring r1 and r2.
    private func zoneWithPendingChanges() -> Sandbox {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        XCTAssertEqual(names(s.ck("--zone", "Z", "zone", "changes").stdout), [], "the first fetch sets the bookmark")
        for n in ["r1", "r2"] {
            XCTAssertEqual(s.ck("--device", "phone", "--zone", "Z", "record", "save", "--type", "Item", "--name", n, "n=1").status, 0)
        }
        return s
    }

    /// alice signed in and subscribed (query subscription: one notification per created record),
    /// with two unread notifications on the default device.
    private func deviceWithUnreadNotifications() -> Sandbox {
        let s = Sandbox()
        s.signIn()
        let sub = s.ck("subscribe", "query", "--type", "Item")
        XCTAssertEqual(sub.status, 0, sub.stderr)
        for n in ["n1", "n2"] {
            XCTAssertEqual(s.ck("--device", "phone", "record", "save", "--type", "Item", "--name", n, "x=1").status, 0)
        }
        XCTAssertEqual(notificationIDs(s).count, 2, "fixture: two unread notifications")
        return s
    }

    // MARK: - zone changes

    func testZoneChangesKeepsTheBookmarkWhenTheReaderLeavesOrTheWriteFails() {
        let s = zoneWithPendingChanges()
        for (tail, exit) in Self.badTails {
            s.assertUnchanged("zone changes \(tail)") {
                let (r, _) = pipe(s, ["--zone", "Z", "zone", "changes"], tail)
                if exit == 141 { assertBrokenPipe(r, "zone changes \(tail)") } else { assertWriteError(r, "zone changes \(tail)") }
                XCTAssertTrue(r.stderr.contains("No space left") || exit == 141, r.stderr)
            }
        }
        // The bookmark never moved: a plain fetch still brings both records, then moves it.
        let next = s.ck("--zone", "Z", "zone", "changes")
        XCTAssertEqual(next.status, 0, next.stderr)
        XCTAssertEqual(names(next.stdout), ["r1", "r2"])
        XCTAssertEqual(names(s.ck("--zone", "Z", "zone", "changes").stdout), [])
    }

    func testZoneChangesMovesTheBookmarkOnceAReaderHasReadEverythingEvenASlowOne() {
        let s = zoneWithPendingChanges()
        let (r, out) = pipe(s, ["--zone", "Z", "zone", "changes"], "| cat > \"$OFT_OUT\"")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")
        XCTAssertEqual(names(read(out)), ["r1", "r2"], "the reader got the page")
        XCTAssertEqual(names(s.ck("--zone", "Z", "zone", "changes", "--no-save").stdout), [], "the bookmark moved to the page's token")

        // A reader slower than the writer: ck waits for it, then commits.
        s.ck("--device", "phone", "--zone", "Z", "record", "save", "--type", "Item", "--name", "r3", "n=3")
        let (slow, _) = pipe(s, ["--zone", "Z", "zone", "changes"], "| (sleep 0.3; cat >/dev/null)")
        XCTAssertEqual(slow.status, 0, slow.stderr)
        XCTAssertEqual(slow.stderr, "")
        XCTAssertEqual(names(s.ck("--zone", "Z", "zone", "changes", "--no-save").stdout), [], "a slow reader still gets the bookmark committed")

        // A regular file is not a pipe: written is delivered.
        s.ck("--device", "phone", "--zone", "Z", "record", "save", "--type", "Item", "--name", "r4", "n=4")
        let (toFile, out2) = pipe(s, ["--zone", "Z", "zone", "changes"], "> \"$OFT_OUT\"")
        XCTAssertEqual(toFile.status, 0, toFile.stderr)
        XCTAssertEqual(names(read(out2)), ["r4"])
        XCTAssertEqual(names(s.ck("--zone", "Z", "zone", "changes", "--no-save").stdout), [])
    }

    /// More than a pipe buffer (64 KiB) of output: ck blocks writing while the reader is still
    /// there, so the reader leaving is seen as EPIPE in the middle of the page.
    func testZoneChangesLargerThanThePipeBufferCommitsOnlyWhenAllIsRead() {
        let s = Sandbox()
        s.signIn()
        s.ck("zone", "create", "Big")
        XCTAssertEqual(names(s.ck("--zone", "Big", "zone", "changes").stdout), [])
        let filler = String(repeating: "x", count: 1500)
        let ops = (1...150).map { "{\"operationType\":\"create\",\"record\":{\"recordName\":\"b\($0)\",\"recordType\":\"Item\",\"fields\":{\"t\":{\"value\":\"\(filler)\"}}}}" }
        let m = s.run(["--device", "phone", "--zone", "Big", "record", "modify"], stdin: "{\"operations\":[\(ops.joined(separator: ","))]}")
        XCTAssertEqual(m.status, 0, m.stderr)
        for format in ["json", "ndjson"] {
            s.assertUnchanged("big page (\(format)) | head -c 1") {
                let (r, _) = pipe(s, ["--zone", "Big", "--format", format, "zone", "changes"], "| head -c 1 >/dev/null")
                assertBrokenPipe(r, "big page (\(format)) | head -c 1")
            }
            s.assertUnchanged("big page (\(format)) | sh -c 'sleep 0.3'") {
                let (r, _) = pipe(s, ["--zone", "Big", "--format", format, "zone", "changes"], "| sh -c 'sleep 0.3'")
                assertBrokenPipe(r, "big page (\(format)) | sh -c 'sleep 0.3'")
            }
        }
        let (good, out) = pipe(s, ["--zone", "Big", "zone", "changes"], "| (sleep 0.2; cat > \"$OFT_OUT\")")
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertGreaterThan(read(out).utf8.count, 1 << 16, "the page is larger than a pipe buffer")
        XCTAssertEqual(names(read(out)).count, 150)
        XCTAssertEqual(names(s.ck("--zone", "Big", "zone", "changes", "--no-save").stdout), [])
    }

    // MARK: - database changes

    func testDatabaseChangesKeepsTheBookmarkWhenTheReaderLeavesOrTheWriteFails() {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("database", "changes").status, 0, "the first fetch sets the bookmark")
        XCTAssertEqual(s.ck("--device", "phone", "zone", "create", "A").status, 0)
        XCTAssertEqual(s.ck("--device", "phone", "zone", "create", "B").status, 0)
        for (tail, exit) in Self.badTails {
            s.assertUnchanged("database changes \(tail)") {
                let (r, _) = pipe(s, ["database", "changes"], tail)
                if exit == 141 { assertBrokenPipe(r, "database changes \(tail)") } else { assertWriteError(r, "database changes \(tail)") }
            }
        }
        let next = s.ck("database", "changes")
        XCTAssertEqual(next.status, 0, next.stderr)
        XCTAssertEqual(zoneNames(next.stdout).sorted(), ["A", "B"], "the bookmark never moved")
        XCTAssertEqual(zoneNames(s.ck("database", "changes").stdout), [])
    }

    func testDatabaseChangesMovesTheBookmarkOnceAReaderHasReadEverythingEvenASlowOne() {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("database", "changes").status, 0)
        s.ck("--device", "phone", "zone", "create", "A")
        let (r, out) = pipe(s, ["database", "changes"], "| cat > \"$OFT_OUT\"")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(zoneNames(read(out)), ["A"])
        XCTAssertEqual(zoneNames(s.ck("database", "changes", "--no-save").stdout), [], "the bookmark moved")

        s.ck("--device", "phone", "zone", "create", "B")
        let (slow, _) = pipe(s, ["database", "changes"], "| (sleep 0.3; cat >/dev/null)")
        XCTAssertEqual(slow.status, 0, slow.stderr)
        XCTAssertEqual(zoneNames(s.ck("database", "changes", "--no-save").stdout), [], "a slow reader still gets the bookmark committed")
    }

    // MARK: - notifications --mark-read

    func testMarkReadLeavesNotificationsUnreadWhenTheReaderLeavesOrTheWriteFails() {
        let s = deviceWithUnreadNotifications()
        let before = notificationIDs(s)
        for (tail, exit) in Self.badTails {
            s.assertUnchanged("notifications --mark-read \(tail)") {
                let (r, _) = pipe(s, ["notifications", "--mark-read"], tail)
                if exit == 141 { assertBrokenPipe(r, "notifications --mark-read \(tail)") } else { assertWriteError(r, "notifications --mark-read \(tail)") }
            }
        }
        XCTAssertEqual(notificationIDs(s), before, "nothing was marked read")
    }

    func testMarkReadMarksWhatAGoodReaderHasRead() {
        let s = deviceWithUnreadNotifications()
        let before = notificationIDs(s)
        let (r, out) = pipe(s, ["--format", "ndjson", "notifications", "--mark-read"], "| cat > \"$OFT_OUT\"")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(read(out).split(separator: "\n").count, 2, "the reader got both notifications: \(read(out))")
        XCTAssertTrue(before.allSatisfy { read(out).contains($0) })
        XCTAssertEqual(notificationIDs(s), [], "both were marked read")

        s.ck("--device", "phone", "record", "save", "--type", "Item", "--name", "n3", "x=3")
        XCTAssertEqual(notificationIDs(s).count, 1)
        let (slow, _) = pipe(s, ["notifications", "--mark-read"], "| (sleep 0.3; cat >/dev/null)")
        XCTAssertEqual(slow.status, 0, slow.stderr)
        XCTAssertEqual(notificationIDs(s), [], "a slow reader still gets the read marks committed")
    }

    // MARK: - --follow

    func testNotificationsFollowExitsWithinASecondOfTheReaderLeaving() {
        let s = deviceWithUnreadNotifications()
        let before = notificationIDs(s)
        let (gone, _) = pipe(s, ["notifications", "--follow"], "| true", timeout: 8)
        assertBrokenPipe(gone, "notifications --follow | true")
        XCTAssertLessThan(gone.seconds, 1.5)

        // --mark-read while following: the reader read one byte and left, so nothing is read.
        let (head, _) = pipe(s, ["notifications", "--follow", "--mark-read"], "| head -c 1 >/dev/null", timeout: 8)
        assertBrokenPipe(head, "notifications --follow --mark-read | head -c 1")
        XCTAssertLessThan(head.seconds, 1.5)
        XCTAssertEqual(notificationIDs(s), before, "the notifications stay unread")

        // ck has printed everything and is idle (nothing new arrives) when the reader leaves.
        let (idle, _) = pipe(s, ["notifications", "--follow"], "| sh -c 'sleep 0.5'", timeout: 8)
        assertBrokenPipe(idle, "notifications --follow | sh -c 'sleep 0.5'")
        XCTAssertGreaterThan(idle.seconds, 0.4, "ck followed until the reader left")
        XCTAssertLessThan(idle.seconds, 0.5 + 1.2, "noticed within about a second of the reader leaving")

        // No notifications pending at all: nothing to write, only the reader's hang-up to see.
        let quiet = Sandbox()
        quiet.signIn()
        XCTAssertEqual(quiet.ck("subscribe").status, 0)
        let (q, _) = pipe(quiet, ["notifications", "--follow"], "| sh -c 'sleep 0.3'", timeout: 8)
        assertBrokenPipe(q, "notifications --follow (nothing pending) | sh -c 'sleep 0.3'")
        XCTAssertGreaterThan(q.seconds, 0.2, "ck followed until the reader left")
        XCTAssertLessThan(q.seconds, 0.3 + 1.2)
    }

    func testNotificationsFollowWithATimeoutAndAGoodReaderExitsZero() {
        let s = deviceWithUnreadNotifications()
        let (r, out) = pipe(s, ["notifications", "--follow", "--timeout", "1"], "| cat > \"$OFT_OUT\"", timeout: 8)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")
        XCTAssertGreaterThanOrEqual(r.seconds, 0.9)
        XCTAssertLessThan(r.seconds, 3)
        XCTAssertEqual(read(out).split(separator: "\n").count, 2, "the pending notifications as NDJSON lines")
        XCTAssertEqual(notificationIDs(s).count, 2, "without --mark-read nothing is marked")

        let (marked, _) = pipe(s, ["notifications", "--follow", "--mark-read", "--timeout", "1"], "| cat >/dev/null", timeout: 8)
        XCTAssertEqual(marked.status, 0, marked.stderr)
        XCTAssertEqual(notificationIDs(s), [], "--follow --mark-read marks what a good reader read")
    }

    func testAccountEventsFollowExitsWithinASecondOfTheReaderLeaving() {
        let s = Sandbox()
        s.signIn()
        let (gone, _) = pipe(s, ["account", "events", "--follow"], "| true", timeout: 8)
        assertBrokenPipe(gone, "account events --follow | true")
        XCTAssertLessThan(gone.seconds, 1.5)

        let (head, _) = pipe(s, ["account", "events", "--follow"], "| head -c 1 >/dev/null", timeout: 8)
        assertBrokenPipe(head, "account events --follow | head -c 1")
        XCTAssertLessThan(head.seconds, 1.5)

        let (idle, _) = pipe(s, ["account", "events", "--follow"], "| sh -c 'sleep 0.5'", timeout: 8)
        assertBrokenPipe(idle, "account events --follow | sh -c 'sleep 0.5'")
        XCTAssertGreaterThan(idle.seconds, 0.4, "ck followed until the reader left")
        XCTAssertLessThan(idle.seconds, 0.5 + 1.2, "noticed within about a second of the reader leaving")

        let (ok, out) = pipe(s, ["account", "events", "--follow", "--timeout", "1"], "| cat > \"$OFT_OUT\"", timeout: 8)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(ok.stderr, "")
        XCTAssertGreaterThanOrEqual(ok.seconds, 0.9)
        XCTAssertLessThan(ok.seconds, 3)
        let lines = read(out).split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "the sign-in event as one NDJSON line: \(read(out))")
        XCTAssertTrue(lines.first?.contains("accountChanged") ?? false)
    }

    // MARK: - read-only commands and error formats

    func testReadOnlyCommandsReportAFullDiskOnOneLineAndChangeNothing() {
        let s = Sandbox()
        s.signIn()
        s.ck("zone", "create", "Z")
        s.ck("--zone", "Z", "record", "save", "--type", "Item", "--name", "z1", "n=1")
        s.ck("record", "save", "--type", "Item", "--name", "d1", "title=hello")
        let token = s.ck("--zone", "Z", "zone", "changes").zoneChanges["syncToken"] as? String ?? ""
        let commands: [[String]] = [
            ["export"],
            ["record", "get", "d1"],
            ["zone", "list"],
            ["--zone", "Z", "zone", "changes", "--since", token],
            ["--zone", "Z", "zone", "changes", "--no-save"],
            ["account", "events"],
        ]
        for c in commands {
            s.assertUnchanged("\(c) > /dev/full") {
                let (r, _) = pipe(s, c, "> /dev/full")
                assertWriteError(r, "\(c) > /dev/full")
                XCTAssertTrue(r.stderr.contains("No space left on device"), r.stderr)
            }
            s.assertUnchanged("\(c) | true") {
                let (r, _) = pipe(s, c, "| true")
                assertBrokenPipe(r, "\(c) | true")
            }
        }
    }

    func testJSONErrorFormatReportsAFullDiskAsOneJSONLine() {
        let s = zoneWithPendingChanges()
        XCTAssertEqual(s.ck("notifications").status, 0, "registers the device, so the runs below have nothing to set up")
        let variants: [(args: [String], env: [String: String])] = [
            (["--error-format", "json", "zone", "list"], [:]),
            (["zone", "list", "--error-format", "json"], [:]),
            (["zone", "list"], ["CK_ERROR_FORMAT": "json"]),
            (["--error-format", "json", "--zone", "Z", "zone", "changes"], [:]),
            (["--error-format", "json", "notifications", "--mark-read"], [:]),
        ]
        for v in variants {
            s.assertUnchanged("\(v) > /dev/full") {
                let (r, _) = pipe(s, v.args, "> /dev/full", env: v.env)
                XCTAssertEqual(r.status, 1, "\(v): \(r.stderr)")
                XCTAssertEqual(r.stderr.filter { $0 == "\n" }.count, 1, "\(v): one stderr line: \(r.stderr)")
                XCTAssertTrue(r.stderr.hasSuffix("\n"))
                let obj = (try? JSONSerialization.jsonObject(with: Data(r.stderr.utf8))) as? [String: Any]
                XCTAssertNotNil(obj, "\(v): stderr is one JSON object: \(r.stderr)")
                XCTAssertFalse((obj?["serverErrorCode"] as? String ?? "").isEmpty, "\(v): \(r.stderr)")
                XCTAssertTrue((obj?["reason"] as? String ?? "").contains("cannot write output"), "\(v): \(r.stderr)")
            }
            // A vanished reader stays silent in JSON error format too.
            let (gone, _) = pipe(s, v.args, "| true", env: v.env)
            assertBrokenPipe(gone, "\(v) | true")
        }
        XCTAssertEqual(names(s.ck("--zone", "Z", "zone", "changes").stdout), ["r1", "r2"], "the bookmark never moved")
    }

    // MARK: - what a slow reader was shown is what gets committed

    /// ck commits the page it printed, not what arrived while it waited for the reader: the
    /// reader takes one byte (so ck has fetched), another device saves, then the reader reads on.
    func testASlowReaderCommitsWhatItWasShownNotWhatArrivedMeanwhile() {
        let s = zoneWithPendingChanges()
        XCTAssertEqual(s.ck("subscribe", "query", "--type", "Item").status, 0)
        let save = { (args: String) in "\"$OFT_CK\" --device phone \(args) >/dev/null 2>&1" }
        let (r, out) = pipe(s, ["--zone", "Z", "zone", "changes"],
                            "| { dd bs=1 count=1 2>/dev/null > \"$OFT_OUT\"; \(save("--zone Z record save --type Item --name r3 n=3")); cat >> \"$OFT_OUT\"; }")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(names(read(out)), ["r1", "r2"], "the page was fetched before r3 was saved")
        XCTAssertEqual(names(s.ck("--zone", "Z", "zone", "changes").stdout), ["r3"], "the bookmark moved to the printed page's token, not past r3")

        let shown = notificationIDs(s)
        XCTAssertEqual(shown.count, 1, "the query subscription saw r3")
        let (n, nout) = pipe(s, ["notifications", "--mark-read"],
                             "| { dd bs=1 count=1 2>/dev/null > \"$OFT_OUT\"; \(save("record save --type Item --name late x=1")); cat >> \"$OFT_OUT\"; }")
        XCTAssertEqual(n.status, 0, n.stderr)
        XCTAssertTrue(shown.allSatisfy { read(nout).contains($0) })
        let left = s.ck("notifications").object["notifications"] as? [[String: Any]] ?? []
        XCTAssertEqual(left.map { $0["recordName"] as? String ?? "?" }, ["late"], "only what was printed was marked read")
    }

    // MARK: - stop requests while the reader stalls

    /// `--follow` exits 0 on SIGTERM or SIGINT, also when its output is held up by a reader that
    /// does not read (waiting for delivery with --mark-read, or blocked writing a full pipe), and
    /// commits nothing it could not deliver.
    func testFollowStopsOnSIGTERMOrSIGINTEvenWhileTheReaderStalls() {
        // Never reads; leaves once ck has exited (or after 4 s), so the test does not wait on it.
        let stall = "| sh -c 'i=0; while [ ! -e \"$OFT_SCRATCH/rc\" ] && [ $i -lt 80 ]; do sleep 0.05; i=$((i+1)); done'"
        let s = deviceWithUnreadNotifications()
        let before = notificationIDs(s)
        for sig in [SIGTERM, SIGINT] {
            let (r, _) = pipe(s, ["notifications", "--follow", "--mark-read"], stall, signal: (0.5, sig), timeout: 8)
            XCTAssertEqual(r.status, 0, "signal \(sig) ends --follow cleanly: \(r.stderr)")
            XCTAssertEqual(r.stderr, "")
            XCTAssertNotNil(r.signalledAt)
            XCTAssertLessThan(r.seconds - (r.signalledAt ?? 0), 1.0, "signal \(sig): ck must not wait for a reader that does not read")
            XCTAssertEqual(notificationIDs(s), before, "signal \(sig): nothing was delivered, so nothing is marked read")
        }

        // More than a pipe buffer of pending notifications: ck is blocked in write().
        let ops = (1...300).map { "{\"operationType\":\"create\",\"record\":{\"recordName\":\"m\($0)\",\"recordType\":\"Item\",\"fields\":{}}}" }
        // Two requests: one holds at most 200 operations.
        for part in [ops[..<150], ops[150...]] {
            XCTAssertEqual(s.run(["--device", "phone", "record", "modify"], stdin: "{\"operations\":[\(part.joined(separator: ","))]}").status, 0)
        }
        XCTAssertGreaterThan(s.ck("--format", "ndjson", "notifications").stdout.utf8.count, 1 << 16, "fixture: more than a pipe buffer")
        let (big, _) = pipe(s, ["notifications", "--follow"], stall, signal: (0.5, SIGTERM), timeout: 8)
        XCTAssertEqual(big.status, 0, big.stderr)
        XCTAssertEqual(big.stderr, "")
        XCTAssertLessThan(big.seconds - (big.signalledAt ?? 0), 1.0, "a write blocked on a full pipe gives way to SIGTERM")
    }
}
