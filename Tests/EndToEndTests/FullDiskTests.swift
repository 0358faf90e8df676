import CKTestSupport
import Foundation
import XCTest

/// A full disk: every command below is run with the disk "filling up" at its 1st, 2nd, …
/// operation that needs space (`CK_DEBUG_ENOSPC_AT_OP=N`: from then on mkdir, create, write,
/// link and fsync fail with ENOSPC, a write after writing half its bytes). Each run either
/// fails cleanly — QUOTA_EXCEEDED, exit 8, one line on stderr, nothing on stdout, the data
/// directory byte for byte as it was — or, past its point of no return, succeeds with its
/// change whole. Either way the store stays readable and writable and fsck finds it sound.
/// Then the same on a real full file system (a small tmpfs), where the machine allows one.
final class FullDiskTests: XCTestCase {
    private var s: Sandbox!

    override func setUp() {
        s = Sandbox()
        s.signIn()
        for args in [["zone", "create", "Z"], ["--zone", "Z", "record", "save", "--type", "T", "--name", "seed", "n=1", "p:REFERENCE=seed"],
                     ["--device", "v", "subscribe", "query", "--type", "T"], ["--device", "w", "subscribe"], ["--zone", "Z", "zone", "changes"]] {
            XCTAssertEqual(s.run(args).status, 0, "\(args)")
        }
    }

    /// Fills the disk at each operation of `command` in turn; `done(n)` says whether its change
    /// is there (after an exit 0 it must be).
    private func sweep(_ label: String, before: (Int) -> Void = { _ in }, _ command: (Int) -> [String], stdin: ((Int) -> String)? = nil,
                       done: (Int) -> Bool, file: StaticString = #filePath, line: UInt = #line) {
        var succeeded = 0
        var refused = 0
        for n in 1...300 {
            before(n)
            let snapshot = s.snapshot()
            let r = s.run(command(n), stdin: stdin?(n), env: ["CK_DEBUG_ENOSPC_AT_OP": String(n)])
            let what = "\(label), disk full from op \(n)"
            if r.status == 8 {
                refused += 1
                XCTAssertEqual(r.stdout, "", "\(what): stdout", file: file, line: line)
                XCTAssertTrue(r.stderr.hasPrefix("ck: QUOTA_EXCEEDED: no space left on the device"), "\(what): \(r.stderr)", file: file, line: line)
                XCTAssertEqual(r.stderr.filter { $0 == "\n" }.count, 1, "\(what): one line: \(r.stderr)", file: file, line: line)
                let changed = FullDiskTests.changes(snapshot, s.snapshot())
                XCTAssertTrue(changed.isEmpty, "\(what): a refused command changed \(changed.sorted().prefix(4))", file: file, line: line)
                XCTAssertFalse(done(n), "\(what): refused, yet its change is there", file: file, line: line)
            } else {
                XCTAssertEqual(r.status, 0, "\(what): \(r.stderr)", file: file, line: line)
                XCTAssertTrue(done(n), "\(what): succeeded, yet its change is missing", file: file, line: line)
                succeeded += 1
            }
            // The disk has room again: the store reads, writes and checks out.
            XCTAssertEqual(s.run(["--zone", "Z", "record", "get", "seed"]).status, 0, "\(what): unreadable afterwards", file: file, line: line)
            XCTAssertEqual(s.run(["--zone", "Z", "record", "save", "--type", "T", "--name", "after-\(label)-\(n)", "n=2"]).status, 0,
                           "\(what): unwritable afterwards", file: file, line: line)
            XCTAssertEqual(s.run(["fsck"]).status, 0, "\(what): fsck", file: file, line: line)
            let again = s.run(["fsck", "--dry-run"])
            XCTAssertTrue(again.status == 0 && again.stdout.contains("\"clean\": true"), "\(what): second fsck: \(again.stdout)", file: file, line: line)
            if succeeded >= 6 { break }
        }
        XCTAssertGreaterThan(refused, 2, "\(label): the disk never filled before the commit", file: file, line: line)
        XCTAssertEqual(succeeded, 6, "\(label): never succeeded", file: file, line: line)
    }

    /// What changed between two snapshots, but for what is not data (Docs/reliability.md):
    /// an empty lock file or directory a refused command created; asset bytes, which are stored
    /// by content before the commit and may be shared with a concurrent one; and the types and
    /// fields the refused write defined just in time in the development schema, which another
    /// writer may already rely on.
    static func changes(_ before: [String: String], _ after: [String: String]) -> Set<String> {
        let changed = Set(before.keys).symmetricDifference(after.keys).union(before.keys.filter { after[$0] != nil && after[$0] != before[$0] })
        return changed.filter { p in
            let name = p.split(separator: "/").last.map(String.init) ?? p
            let newEmptyLock = before[p] == nil && (name == "lock" || name.hasSuffix(".lock")) && after[p] == "600 "
            let newDirectory = before[p] == nil && after[p]?.hasSuffix(" dir") == true
            return !newEmptyLock && !newDirectory && !p.hasPrefix("data/assets") && !p.hasSuffix("/development/schema.ckdb")
        }
    }

    private func exists(_ zone: String, _ name: String) -> Bool { s.run(["--zone", zone, "record", "get", name]).status == 0 }

    func testRecordWritesFailCleanlyOnAFullDisk() {
        sweep("create", { n in ["--zone", "Z", "record", "save", "--type", "T", "--name", "c\(n)", "n=\(n)"] }, done: { self.exists("Z", "c\($0)") })
        // A new field is defined in the schema just in time; a refused write takes it out again.
        sweep("new-field", { n in ["--zone", "Z", "record", "save", "--type", "T", "--name", "f\(n)", "field\(n)=x"] }, done: { self.exists("Z", "f\($0)") })
        let asset = s.root.appendingPathComponent("blob.bin")
        sweep("asset", before: { n in try? Data("asset \(n)".utf8).write(to: asset) },
              { n in ["--zone", "Z", "record", "save", "--type", "T", "--name", "a\(n)", "file:ASSET=@\(asset.path)"] }, done: { self.exists("Z", "a\($0)") })
        sweep("modify", before: { n in
            XCTAssertEqual(self.s.run(["--zone", "Z", "record", "save", "--type", "T", "--name", "p\(n)", "n=1"]).status, 0)
            XCTAssertEqual(self.s.run(["--zone", "Z", "record", "save", "--type", "T", "--name", "k\(n)", "parent:REFERENCE=p\(n),DELETE_SELF"]).status, 0)
        }, { _ in ["--zone", "Z", "record", "modify"] }, stdin: { n in
            "{\"operations\": [{\"operationType\": \"forceDelete\", \"record\": {\"recordName\": \"p\(n)\"}}, " +
                "{\"operationType\": \"create\", \"record\": {\"recordName\": \"m\(n)\", \"recordType\": \"T\", \"fields\": {\"n\": {\"value\": 1}}}}]}"
        }, done: { n in
            let all = [self.exists("Z", "m\(n)"), !self.exists("Z", "p\(n)"), !self.exists("Z", "k\(n)")]
            XCTAssertTrue(all.allSatisfy { $0 } || all.allSatisfy { !$0 }, "half a batch: \(all)")
            return all[0]
        })
    }

    func testZoneAndSubscriptionChangesFailCleanlyOnAFullDisk() {
        sweep("zone-create", { n in ["zone", "create", "Y\(n)"] }, done: { self.s.run(["--zone", "Y\($0)", "record", "list"]).status == 0 })
        sweep("zone-delete", before: { n in
            XCTAssertEqual(self.s.run(["zone", "create", "D\(n)"]).status, 0)
            XCTAssertEqual(self.s.run(["--zone", "D\(n)", "record", "save", "--type", "T", "--name", "d", "n=1"]).status, 0)
        }, { n in ["zone", "delete", "D\(n)"] }, done: { self.s.run(["--zone", "D\($0)", "record", "list"]).status != 0 })
        sweep("subscribe", { n in ["--device", "x\(n)", "subscribe", "zone", "--zone", "Z", "--id", "s\(n)"] },
              done: { self.s.run(["subscription", "get", "s\($0)"]).status == 0 })
    }

    func testResetAndSignInFailCleanlyOnAFullDisk() {
        sweep("reset", before: { n in
            XCTAssertEqual(self.s.run(["--zone", "Z", "record", "save", "--type", "T", "--name", "keep\(n)", "n=1"]).status, 0)
        }, { _ in ["schema", "reset"] }, done: { n in
            let gone = self.s.run(["zone", "list"]).stdout.contains("\"Z\"") == false
            if gone {
                // Set the store up again for the next round.
                XCTAssertEqual(self.s.run(["zone", "create", "Z"]).status, 0)
                XCTAssertEqual(self.s.run(["--zone", "Z", "record", "save", "--type", "T", "--name", "seed", "n=1"]).status, 0)
            }
            return gone
        })
        sweep("signin", { n in ["account", "signin", "user\(n)@example.com"] }, done: { n in
            let now = self.s.run(["account"]).stdout.contains("user\(n)@example.com")
            if now { self.s.signIn() }
            return now
        })
    }

    /// A real file system filling up: saves of 100 KB records into a 2 MB tmpfs until the disk
    /// refuses one, which must then change nothing; deleting makes room; writing works again.
    func testARealFullFileSystem() throws {
        let mount = s.root.appendingPathComponent("small")
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        let m = Process()
        m.executableURL = URL(fileURLWithPath: "/bin/mount")
        m.arguments = ["-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", mount.path]
        m.standardError = Pipe()
        try? m.run()
        m.waitUntilExit()
        guard m.terminationStatus == 0 else { throw XCTSkip("cannot mount a tmpfs here (needs root); the simulated full disk above covers this") }
        defer {
            let u = Process()
            u.executableURL = URL(fileURLWithPath: "/bin/umount")
            u.arguments = [mount.path]
            try? u.run()
            u.waitUntilExit()
        }
        let data = mount.appendingPathComponent("ck")
        let env = ["CK_DATA_DIR": data.path]
        XCTAssertEqual(s.run(["account", "signin", "alice@example.com"], env: env).status, 0)
        XCTAssertEqual(s.run(["zone", "create", "Big"], env: env).status, 0)
        let big = String(repeating: "x", count: 100_000)
        var saved = 0
        var refusal: CKResult?
        for i in 0..<100 {
            let before = s.snapshot()
            let r = s.run(["--zone", "Big", "record", "save", "--type", "Blob", "--name", "b\(i)", "data=\(big)"], env: env)
            if r.status == 0 { saved += 1; continue }
            refusal = r
            assertFailure(r, exit: 8, contains: "no space left on the device")
            let changed = FullDiskTests.changes(before, s.snapshot())
            XCTAssertTrue(changed.isEmpty, "the refused save changed \(changed.sorted().prefix(4))")
            break
        }
        XCTAssertNotNil(refusal, "2 MB never filled")
        XCTAssertGreaterThan(saved, 2)
        // Still readable; deleting frees room; then writable again, and sound.
        XCTAssertEqual(s.run(["--zone", "Big", "record", "get", "b0"], env: env).status, 0)
        XCTAssertEqual(s.run(["--zone", "Big", "record", "delete", "b0"], env: env).status, 0)
        XCTAssertEqual(s.run(["--zone", "Big", "record", "save", "--type", "Blob", "--name", "small", "data=y"], env: env).status, 0)
        let fsck = s.run(["fsck"], env: env)
        XCTAssertEqual(fsck.status, 0, fsck.stdout)
        XCTAssertEqual(s.run(["--zone", "Big", "export"], env: env).stdout.split(separator: "\n").count, saved)
    }
}
