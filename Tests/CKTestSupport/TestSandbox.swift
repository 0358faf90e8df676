import Foundation
import XCTest

/// A temporary directory with a data directory in it, and a way to run `ck` there: what the
/// two sandboxes share. `Sandbox` runs the built binary (a process per command); `CLISandbox`
/// runs `CLI.run` in this process. A test written against one reads the same against the other.
open class TestSandbox {
    public let root: URL
    public let dataDir: URL
    /// The whole environment a command sees (nothing of the developer's shell leaks in).
    public var environment: [String: String]

    public init(prefix: String) {
        root = FileManager.default.temporaryDirectory.appendingPathComponent(prefix + UUID().uuidString)
        try! FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        dataDir = root.appendingPathComponent("data")
        environment = ["PATH": "/usr/bin:/bin", "HOME": root.path, "CK_DATA_DIR": dataDir.path]
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// Runs one command: `stdin` (or the bytes `stdinData`) on its standard input, `env` over
    /// `environment`, in `cwd` (the root by default).
    @discardableResult
    public func run(_ args: [String], stdin: String? = nil, stdinData: Data? = nil, env: [String: String] = [:], cwd: URL? = nil) -> CKResult {
        execute(args, stdin: stdinData ?? stdin.map { Data($0.utf8) } ?? Data(), environment: environment.merging(env) { _, new in new },
                directory: cwd ?? root)
    }

    /// How a sandbox runs a command.
    open func execute(_ args: [String], stdin: Data, environment: [String: String], directory: URL) -> CKResult {
        fatalError("\(type(of: self)) does not run commands")
    }

    @discardableResult
    public func ck(_ args: String..., stdin: String? = nil) -> CKResult { run(args, stdin: stdin) }

    /// Signs alice in; most tests write to the private database.
    public func signIn(_ appleID: String = "alice@example.com") {
        let r = run(["account", "signin", appleID])
        precondition(r.status == 0, r.stderr)
    }

    /// NDJSON stdout as objects.
    public func ndjsonLines(_ args: [String], file: StaticString = #filePath, line: UInt = #line) -> [[String: Any]] {
        let r = run(args)
        XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)", file: file, line: line)
        return r.stdout.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
    }

    /// Every path under the root with its mode and a digest of its bytes: two equal snapshots
    /// mean the data directory is byte-for-byte the same.
    public func snapshot() -> [String: String] {
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
    public func assertUnchanged(_ what: String, file: StaticString = #filePath, line: UInt = #line, _ body: () -> Void) {
        let before = snapshot()
        body()
        let after = snapshot()
        if before != after {
            let changed = Set(before.keys).symmetricDifference(after.keys).union(before.keys.filter { before[$0] != after[$0] && after[$0] != nil })
            XCTFail("\(what): data directory changed: \(changed.sorted().prefix(5))", file: file, line: line)
        }
    }

    // MARK: - Where the store keeps a zone (tests that damage or inspect its files)

    /// The directory of a zone of the signed-in user's private database (development).
    public func zoneDirectory(_ zone: String) -> String {
        let fm = FileManager.default
        let dbs = (try? fm.subpathsOfDirectory(atPath: dataDir.path)) ?? []
        let hit = dbs.first { $0.hasSuffix("/private/" + ($0.split(separator: "/").dropLast(2).last.map(String.init) ?? "") + "/zones/" + zone) }
            ?? dbs.first { $0.contains("/development/private/") && $0.hasSuffix("/zones/" + zone) }
        return dataDir.path + "/" + (hit ?? "missing-zone-" + zone)
    }

    /// The directory of a zone (the first whose path ends so).
    public func historyZoneDirectory(_ suffix: String) -> String {
        let sub = (try? FileManager.default.subpathsOfDirectory(atPath: dataDir.path)) ?? []
        return dataDir.path + "/" + sub.first { $0.hasSuffix(suffix + "/zone.json") }!.dropLast("/zone.json".count)
    }
}
