import CKTestSupport
import Foundation
import XCTest

/// Issue 30, item 1: the shell sync loop `Docs/examples/sync-zone.sh`, from the start, against
/// a zone larger than a page whose history `ck gc` compacted, finishes (the loop once went on
/// refetching from the start forever) with a replica equal to `ck export` of the zone.
final class SyncLoopAfterGCTests: XCTestCase {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Docs/examples/sync-zone.sh")

    func testTheSyncLoopFinishesOnACompactedZoneLargerThanAPage() throws {
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Lists").status, 0)
        let lines = (1...450).map { #"{"recordName":"r\#($0)","recordType":"Item","fields":{"n":{"value":\#($0)}}}"# }
        XCTAssertEqual(s.ck("--zone", "Lists", "import", stdin: lines.joined(separator: "\n") + "\n").status, 0)
        for n in ["r3", "r7", "r400"] { XCTAssertEqual(s.ck("--zone", "Lists", "record", "save", "--name", n, "--force", "n=0").status, 0) }
        XCTAssertEqual(s.ck("--zone", "Lists", "record", "delete", "r5", "--force").status, 0)
        XCTAssertEqual(s.ck("--zone", "Lists", "gc", "--keep", "0").status, 0)

        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        let replica = s.root.appendingPathComponent("replica")
        p.arguments = [Self.script.path, "Lists", replica.path]
        p.environment = s.environment.merging(["CK": Sandbox.binary.path]) { $1 }
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(60)
        while p.isRunning && Date() < deadline { usleep(50_000) }
        if p.isRunning { p.terminate(); p.waitUntilExit(); XCTFail("sync-zone.sh still running after 60 s: it loops"); return }
        XCTAssertEqual(p.terminationStatus, 0)

        let files = try FileManager.default.contentsOfDirectory(atPath: replica.path).filter { $0.hasSuffix(".rec") }
        let got = try files.map { try String(contentsOf: replica.appendingPathComponent($0), encoding: .utf8) }
            .flatMap { $0.split(separator: "\n").map(String.init) }.sorted()
        let export = s.ck("--zone", "Lists", "export")
        XCTAssertEqual(export.status, 0)
        XCTAssertEqual(got.count, 449)
        XCTAssertEqual(got, export.stdout.split(separator: "\n").map(String.init).sorted())
    }
}
