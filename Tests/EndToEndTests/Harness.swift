import Foundation
import XCTest

/// Runs the built `ck` binary against a temporary data directory and captures everything.
struct CKResult {
    let stdout: String
    let stderr: String
    let status: Int32

    /// stdout parsed as JSON (fails the test when it is not).
    func json(file: StaticString = #filePath, line: UInt = #line) -> Any? {
        guard let d = stdout.data(using: .utf8), let v = try? JSONSerialization.jsonObject(with: d, options: [.fragmentsAllowed]) else {
            XCTFail("stdout is not JSON: \(stdout)", file: file, line: line)
            return nil
        }
        return v
    }

    var object: [String: Any] { (json() as? [String: Any]) ?? [:] }

    /// The first record of a records/lookup or records/modify response (`{records: [...]}`).
    var record: [String: Any] { (object["records"] as? [[String: Any]])?.first ?? [:] }

    /// The first zone entry of a changes/zone response (`{zones: [{zoneID, records, …}]}`).
    var zoneChanges: [String: Any] { (object["zones"] as? [[String: Any]])?.first ?? [:] }
}

final class Sandbox {
    let root: URL
    let dataDir: URL
    var environment: [String: String]

    /// How much longer `make stress` runs the loops of the stress-capable tests (1 in `make test`).
    static let stressScale = max(1, Int(ProcessInfo.processInfo.environment["CK_STRESS_SCALE"] ?? "") ?? 1)

    static var binary: URL {
        // `make stress` runs the release build (CK_TEST_BINARY).
        if let b = ProcessInfo.processInfo.environment["CK_TEST_BINARY"], !b.isEmpty { return URL(fileURLWithPath: b) }
        // The test bundle sits in the products directory, beside the `ck` executable.
        var dir = Bundle(for: Sandbox.self).bundleURL
        while dir.pathExtension == "xctest" || dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        let candidates = [dir.appendingPathComponent("ck"), Bundle.main.bundleURL.appendingPathComponent("ck")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("ck-e2e-" + UUID().uuidString)
        try! FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        dataDir = root.appendingPathComponent("data")
        // A clean environment: nothing from the developer's shell leaks in.
        environment = ["PATH": "/usr/bin:/bin", "HOME": root.path, "CK_DATA_DIR": dataDir.path]
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// Runs the binary. Off the main thread: waiting there for a child process costs tens of
    /// milliseconds more per command (the run loop's polling), and the suite runs thousands.
    @discardableResult
    func run(_ args: [String], stdin: String? = nil, stdinData: Data? = nil, env: [String: String] = [:], cwd: URL? = nil) -> CKResult {
        guard Thread.isMainThread else { return runHere(args, stdin: stdin, stdinData: stdinData, env: env, cwd: cwd) }
        final class Box: @unchecked Sendable { var result: CKResult? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            box.result = self.runHere(args, stdin: stdin, stdinData: stdinData, env: env, cwd: cwd)
            done.signal()
        }
        done.wait()
        return box.result!
    }

    private func runHere(_ args: [String], stdin: String?, stdinData: Data?, env: [String: String], cwd: URL?) -> CKResult {
        let l = launch(args, stdin: .bytes(stdinData ?? stdin.map { Data($0.utf8) } ?? Data()), env: env, cwd: cwd)
        return l.collect()
    }

    /// What a launched ck reads on stdin.
    enum Input { case bytes(Data), file(URL?) }

    /// A ck process started by `launch`: signal it, then `collect` its output and exit status.
    struct Launched {
        let process: Process
        fileprivate let out: Pipe, err: Pipe

        /// Reads both pipes (so a large output cannot block the child), then waits for it.
        func collect() -> CKResult {
            final class Box: @unchecked Sendable { var data = Data() }
            let outBox = Box()
            let group = DispatchGroup()
            group.enter()
            DispatchQueue.global().async { outBox.data = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
            let errData = err.fileHandleForReading.readDataToEndOfFile()
            group.wait()
            process.waitUntilExit()
            return CKResult(stdout: String(decoding: outBox.data, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self),
                            status: process.terminationStatus)
        }
    }

    /// Starts the binary without waiting for it.
    func launch(_ args: [String], stdin: Input = .bytes(Data()), env: [String: String] = [:], cwd: URL? = nil) -> Launched {
        let p = Process()
        p.executableURL = Sandbox.binary
        p.arguments = args
        p.environment = environment.merging(env) { _, new in new }
        p.currentDirectoryURL = cwd ?? root
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        switch stdin {
        case .bytes(let d):
            let inp = Pipe()
            p.standardInput = inp
            try! p.run()
            if !d.isEmpty { inp.fileHandleForWriting.write(d) }
            try? inp.fileHandleForWriting.close()
        case .file(let url):
            p.standardInput = url.flatMap { FileHandle(forReadingAtPath: $0.path) } ?? FileHandle.nullDevice
            try! p.run()
        }
        return Launched(process: p, out: out, err: err)
    }

    @discardableResult
    func ck(_ args: String..., stdin: String? = nil) -> CKResult { run(args, stdin: stdin) }

    /// Signs alice in; most tests write to the private database.
    func signIn(_ appleID: String = "alice@example.com") {
        let r = run(["account", "signin", appleID])
        precondition(r.status == 0, r.stderr)
    }

    /// Every path under the root with its mode and a digest of its bytes: two equal snapshots
    /// mean the data directory is byte-for-byte the same.
    func snapshot() -> [String: String] {
        var out: [String: String] = [:]
        let fm = FileManager.default
        guard let e = fm.enumerator(atPath: root.path) else { return out }
        while let rel = e.nextObject() as? String {
            let path = root.appendingPathComponent(rel).path
            let attrs = (try? fm.attributesOfItem(atPath: path)) ?? [:]
            let mode = (attrs[.posixPermissions] as? Int).map { String($0, radix: 8) } ?? "?"
            var content = "dir"
            if (attrs[.type] as? FileAttributeType) != .typeDirectory, let d = fm.contents(atPath: path) {
                content = d.base64EncodedString()
            }
            out[rel] = mode + " " + content
        }
        return out
    }

    /// Runs `body` and asserts the data directory did not change.
    func assertUnchanged(_ what: String, file: StaticString = #filePath, line: UInt = #line, _ body: () -> Void) {
        let before = snapshot()
        body()
        let after = snapshot()
        if before != after {
            let changed = Set(before.keys).symmetricDifference(after.keys).union(before.keys.filter { before[$0] != after[$0] && after[$0] != nil })
            XCTFail("\(what): data directory changed: \(changed.sorted().prefix(5))", file: file, line: line)
        }
    }
}

/// Assertion helpers for a failed command: nothing on stdout, one line on stderr, the exit code.
func assertFailure(_ r: CKResult, exit: Int32, contains: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(r.status, exit, "stderr: \(r.stderr)", file: file, line: line)
    XCTAssertEqual(r.stdout, "", "stdout must be empty on failure", file: file, line: line)
    if exit != 2 {
        XCTAssertEqual(r.stderr.filter { $0 == "\n" }.count, 1, "one line on stderr: \(r.stderr)", file: file, line: line)
    }
    if let c = contains { XCTAssertTrue(r.stderr.contains(c), "stderr '\(r.stderr)' lacks '\(c)'", file: file, line: line) }
}
