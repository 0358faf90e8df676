import CKTestSupport
import Foundation
import XCTest

/// Apple's CloudKit JS, unchanged, against `ck serve`: Tests/CloudKitJS/harness.js drives it in
/// Node through sign-in, zones, saves, lookups, paged queries, a query of an unknown record type,
/// a CONFLICT, change feeds, deletes, a zone-wide query, per-operation options and
/// numbersAsStrings, an asset, subscriptions and a pushed notification of a change made with the
/// CLI. It needs node and a copy of cloudkit.js (Apple's licence forbids committing it): at
/// `$CK_CLOUDKIT_JS` or `.scratch/cloudkit.js` in the checkout. Without them the test is skipped.
final class CloudKitJSTests: XCTestCase {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testCloudKitJSRunsAgainstCKServeUnchanged() throws {
        let env = ProcessInfo.processInfo.environment
        let script = env["CK_CLOUDKIT_JS"] ?? Self.repo.appendingPathComponent(".scratch/cloudkit.js").path
        let node = ["/usr/bin/node", "/usr/local/bin/node"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let node, FileManager.default.fileExists(atPath: script) else {
            throw XCTSkip("needs node and a copy of Apple's cloudkit.js at $CK_CLOUDKIT_JS or .scratch/cloudkit.js")
        }
        let s = Sandbox()
        s.environment["CK_CONTAINER"] = "iCloud.com.example.ckjs"
        s.signIn()
        // The app's schema before its first query, as on CloudKit: CkjsItem with its fields and
        // the "___recordID" QUERYABLE index the harness's queries without a filter need.
        XCTAssertEqual(s.ck("record", "save", "--type", "CkjsItem", "--name", "schema-probe", "title=x", "n=0").status, 0)
        XCTAssertEqual(s.ck("record", "delete", "schema-probe").status, 0)
        XCTAssertEqual(s.ck("schema", "index", "add", "CkjsItem", "___recordID", "QUERYABLE").status, 0)
        let token = try XCTUnwrap(s.ck("api-token", "create").object["apiToken"] as? String)
        let session = try XCTUnwrap(s.ck("account", "web-auth-token").object["ckWebAuthToken"] as? String)
        let serve = try ServeProcess(s)

        let p = Process()
        p.executableURL = URL(fileURLWithPath: node)
        p.arguments = [Self.repo.appendingPathComponent("Tests/CloudKitJS/harness.js").path, script, serve.url, "iCloud.com.example.ckjs", token, session]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        var steps: [[String: Any]] = []
        var buffer = Data()
        let handle = out.fileHandleForReading
        let deadline = Date().addingTimeInterval(90)
        reading: while Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer += chunk
            while let nl = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<nl]
                buffer = Data(buffer[(nl + 1)...])
                guard let step = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else { continue }
                steps.append(step)
                // The page listens now: a change from the CLI must reach it.
                if step["step"] as? String == "registerForNotifications" {
                    Thread.sleep(forTimeInterval: 0.5)
                    XCTAssertEqual(s.ck("--zone", "CkjsZone", "record", "save", "--type", "CkjsItem", "--name", "from-cli", "n=9").status, 0)
                }
                if step["step"] as? String == "done" || step["step"] as? String == "error" { break reading }
            }
        }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        _ = serve.stop()
        let failed = steps.filter { ($0["ok"] as? Bool) != true }.map { "\($0["step"] ?? "?"): \($0["detail"] ?? "")" }
        XCTAssertEqual(failed, [])
        XCTAssertEqual(steps.last?["step"] as? String, "done", "\(steps)")
        XCTAssertGreaterThanOrEqual(steps.count, 19)
    }
}
