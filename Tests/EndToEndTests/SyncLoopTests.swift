import CKTestSupport
import Foundation
import XCTest

/// Issue 15's proof: the shell sync loop `Docs/examples/sync-zone.sh` (the loop of
/// Docs/changes.md, without jq) survives every fault kind — it retries after `retryAfter`,
/// refetches from scratch on an expired token or a purge, catches up after dropped
/// notifications — and ends with a replica equal to `ck export` of the zone.
final class SyncLoopTests: XCTestCase {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Docs/examples/sync-zone.sh")

    private func sandbox() -> Sandbox {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
        XCTAssertEqual(s.ck("--zone", "Lists", "subscribe", "zone").status, 0)
        return s
    }

    /// Runs the loop once; its exit status and stderr.
    @discardableResult
    private func sync(_ s: Sandbox, ck: String = Sandbox.binary.path, expect: Int32? = 0, file: StaticString = #filePath, line: UInt = #line) -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = [Self.script.path, "Lists", s.root.appendingPathComponent("replica").path]
        p.environment = s.environment.merging(["CK": ck, "REAL_CK": Sandbox.binary.path]) { $1 }
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try! p.run()
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        if let e = expect { XCTAssertEqual(p.terminationStatus, e, "sync-zone.sh: \(said)", file: file, line: line) }
        return (p.terminationStatus, said)
    }

    /// The replica's records, and the zone's as `ck export` prints them (empty if it is gone).
    private func assertReplicaEqualsExport(_ s: Sandbox, file: StaticString = #filePath, line: UInt = #line) {
        let dir = s.root.appendingPathComponent("replica")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        let replica = files.filter { $0.hasSuffix(".rec") }.map { try! String(contentsOf: dir.appendingPathComponent($0), encoding: .utf8) }
            .flatMap { $0.split(separator: "\n").map(String.init) }.sorted()
        let export = s.ck("--zone", "Lists", "export")
        let expected = export.status == 0 ? export.stdout.split(separator: "\n").map(String.init).sorted() : []
        XCTAssertEqual(replica, expected, file: file, line: line)
    }

    private func save(_ s: Sandbox, _ names: [String], _ title: String = "t") {
        for n in names { XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--type", "Item", "--name", n, "--force", "title=\(title)").status, 0) }
    }

    private func faultsLeft(_ s: Sandbox) -> Int { (s.ck("fault", "list").object["faults"] as? [Any])?.count ?? -1 }

    func testRetriesAfterEachRetryableFault() {
        let s = sandbox()
        save(s, ["a", "b", "c"])
        sync(s)
        assertReplicaEqualsExport(s)
        // retryAfter is whole seconds; the loop waits it (1 s once, 0 for the others).
        for code in ["THROTTLED", "ZONE_BUSY", "SERVICE_UNAVAILABLE", "TRY_AGAIN_LATER"] {
            save(s, ["a", "d-\(code)"], code)
            let wait = code == "THROTTLED" ? "1" : "0"
            XCTAssertEqual(s.ck("fault", "add", "--op", "changes/zone", "--error", code, "--retry-after", wait, "--times", "2").status, 0)
            sync(s)
            XCTAssertEqual(faultsLeft(s), 0, "\(code): both failures were met and retried")
            assertReplicaEqualsExport(s)
        }
        for code in ["INTERNAL_ERROR", "NETWORK_FAILURE"] {
            save(s, ["e-\(code)"])
            XCTAssertEqual(s.ck("fault", "add", "--op", "changes/zone", "--error", code, "--times", "3").status, 0)
            sync(s)
            XCTAssertEqual(faultsLeft(s), 0)
            assertReplicaEqualsExport(s)
        }
        // Half of all fetches fail, reproducibly: the loop still converges.
        save(s, (0..<30).map { "r\($0)" })
        XCTAssertEqual(s.ck("fault", "add", "--op", "changes/zone", "--error", "THROTTLED", "--retry-after", "0", "--rate", "0.5", "--seed", "7").status, 0)
        sync(s)
        assertReplicaEqualsExport(s)
    }

    func testRefetchesFromScratchWhenTheTokenExpires() {
        let s = sandbox()
        save(s, ["a", "b"])
        sync(s)
        save(s, ["c"])
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "delete", "a").status, 0)
        XCTAssertEqual(s.ck("token", "expire", "--zone", "Lists").status, 0)
        // A stale record in the replica that the zone no longer has: a refetch must drop it.
        try! "{\"recordName\":\"ghost\"}\n".write(to: s.root.appendingPathComponent("replica/ghost.rec"), atomically: true, encoding: .utf8)
        save(s, ["d"])
        let kept = try! String(contentsOf: s.root.appendingPathComponent("replica/token"), encoding: .utf8).trimmingCharacters(in: .newlines)
        XCTAssertEqual(s.ck("--zone", "Lists", "zone", "changes", "--since", kept).status, 7, "the loop's token has expired")
        sync(s)
        assertReplicaEqualsExport(s)
        // An injected CHANGE_TOKEN_EXPIRED is handled the same way.
        XCTAssertEqual(s.ck("fault", "add", "--op", "changes/zone", "--error", "CHANGE_TOKEN_EXPIRED", "--times", "1").status, 0)
        save(s, ["e"])
        sync(s)
        assertReplicaEqualsExport(s)
    }

    func testPurgeEmptiesTheReplicaAndARecreatedZoneIsFetchedWhole() {
        let s = sandbox()
        save(s, ["a", "b"])
        sync(s)
        XCTAssertEqual(s.ck("zone", "purge", "Lists").status, 0)
        let db = s.ck("database", "changes", "--no-save", "--format", "ndjson")
        XCTAssertTrue(db.stdout.contains("\"purged\":true"), db.stdout)
        sync(s)
        assertReplicaEqualsExport(s)
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: s.root.appendingPathComponent("replica").path))?.filter { $0.hasSuffix(".rec") }, [])
        // The zone comes back with other records: the old bookmark is expired, the loop refetches.
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
        save(s, ["x", "y"])
        sync(s)
        assertReplicaEqualsExport(s)
    }

    func testCatchesUpAfterDroppedNotifications() {
        let s = sandbox()
        let phone = ["--device", "phone"]
        XCTAssertEqual(s.run(phone + ["notifications"]).status, 0, "the phone registers for notifications")
        save(s, ["a"])
        XCTAssertEqual((s.run(phone + ["notifications", "--mark-read"]).object["notifications"] as? [Any])?.count, 1)
        sync(s)
        // Every notification of these changes is lost on its way to the phone.
        XCTAssertEqual(s.ck("fault", "add", "--drop-rate", "1", "--device", "phone").status, 0)
        save(s, ["b", "c"])
        XCTAssertEqual((s.run(phone + ["notifications"]).object["notifications"] as? [Any])?.count, 0, "nothing arrived")
        XCTAssertEqual(s.ck("fault", "clear").status, 0)
        // And one that arrived is dropped before it is read.
        save(s, ["d"])
        XCTAssertEqual(s.run(phone + ["notifications", "drop", "--all"]).status, 0)
        XCTAssertEqual((s.run(phone + ["notifications"]).object["notifications"] as? [Any])?.count, 0)
        // The next notification that does arrive triggers a sync that brings everything.
        save(s, ["e"])
        let note = s.run(phone + ["notifications", "--mark-read"])
        XCTAssertEqual((note.object["notifications"] as? [Any])?.count, 1, note.stdout)
        sync(s)
        assertReplicaEqualsExport(s)
        XCTAssertEqual(s.ck("--zone", "Lists", "export").stdout.split(separator: "\n").count, 5)
    }

    /// Names the loop must carry: '/', spaces, dots, a leading '-', a field named syncToken.
    func testAwkwardNamesAndFields() {
        let s = sandbox()
        for n in ["a/b", "with space", "x.json", "-dash", "caf\u{E9}"] {
            XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--type", "Item", "--name", n, "title=t").status, 0)
        }
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--type", "Item", "--name", "tok", "syncToken=abc", "moreComing=1").status, 0)
        sync(s)
        assertReplicaEqualsExport(s)
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "delete", "a/b").status, 0)
        sync(s)
        assertReplicaEqualsExport(s)
    }

    /// Killed right after a fetch, before applying it: the next run fetches that page again
    /// (the loop moves its own token only once the page is applied).
    func testAKilledRunLosesNothing() throws {
        let s = sandbox()
        save(s, (0..<30).map { "k\($0)" })
        let wrapper = s.root.appendingPathComponent("ck-then-die")
        // Runs ck, then kills the sync-zone.sh that called it (found through /proc), once.
        try """
        #!/bin/sh
        "$REAL_CK" "$@"; st=$?
        flag="$(dirname "$0")/die-once"
        case " $* " in *" zone changes "*)
          if [ -e "$flag" ]; then
            rm -f "$flag"
            p=$PPID
            for _ in 1 2 3; do
              if tr '\\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -q sync-zone.sh; then kill -9 $p; fi
              p=$(awk '{print $4}' /proc/$p/stat 2>/dev/null) || break
            done
          fi ;;
        esac
        exit $st
        """.write(to: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper.path, 0o755)
        _ = FileManager.default.createFile(atPath: s.root.appendingPathComponent("die-once").path, contents: Data())
        let (status, _) = sync(s, ck: wrapper.path, expect: nil)
        XCTAssertNotEqual(status, 0, "the loop was killed")
        XCTAssertFalse(FileManager.default.fileExists(atPath: s.root.appendingPathComponent("die-once").path))
        sync(s)
        assertReplicaEqualsExport(s)
        XCTAssertEqual(s.ck("--zone", "Lists", "export").stdout.split(separator: "\n").count, 30)
    }
}
