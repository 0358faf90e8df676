import CKModel
import CKTestSupport
import XCTest
@testable import CKCLI
@testable import CKCore

/// The adapters of ck's own commands, in-process: `fault add`'s argv, what the CLI makes of the
/// API's refusals, and the output of status, init, container, fsck and schema.
final class MaintenanceCommandTests: XCTestCase {
    private func faultsFile(_ s: CLISandbox) -> Bool { FileManager.default.fileExists(atPath: s.dir + "/faults.json") }

    /// Its own syntax the CLI checks; the fault itself the API checks. Either refusal is a
    /// usage error (exit 2) and arms nothing.
    func testFaultAddRefusalsAreUsageErrors() {
        let s = CLISandbox()
        let refused: [([String], String)] = [
            ([], "missing --op OP; valid operations: records/modify"),
            (["--op", "zones/lst", "--error", "THROTTLED"], "did you mean 'zones/list'?"),
            (["--op", "zones/list"], "missing --error CODE"),
            (["--op", "notifications/deliver", "--error", "THROTTLED"], "it takes no --error"),
            (["--drop-rate", "0.5", "--rate", "0.5"], "--drop-rate and --rate exclude each other"),
            (["--op", "zones/list", "--error", "THROTTLED", "--times", "2", "--rate", "0.5"], "--times and --rate exclude each other"),
            (["--op", "zones/list", "--error", "THROTTLED", "--seed", "1"], "--seed goes with --rate"),
            // From the API, in its words:
            (["--op", "zones/list", "--error", "NOT_FOUND", "--retry-after", "1"], "NOT_FOUND carries no retryAfter"),
            (["--op", "zones/list", "--error", "THROTTLED", "--record", "r"], "a record scope applies to records/lookup and records/modify (or *), not zones/list"),
            (["--op", "zones/list", "--error", "THROTTLED", "--user", "x@y"], "'x@y' is not a valid Apple ID"),
        ]
        for (args, words) in refused {
            let r = s.run(["fault", "add"] + args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            XCTAssertEqual(r.stdout, "")
            XCTAssertTrue(r.stderr.hasPrefix("ck: error: ") && r.stderr.contains(words), "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("\nusage: ck fault add --op OP"), r.stderr)
        }
        XCTAssertFalse(faultsFile(s), "nothing armed")
    }

    /// `--op` takes each endpoint by its one name; whoami stands for users/caller, and
    /// users/current is another endpoint, not its alias.
    func testFaultAddTakesEveryEndpoint() {
        let s = CLISandbox()
        for e in Endpoint.allCases {
            let r = s.run(["fault", "add", "--op", e.path] + (e == .notificationsDeliver ? ["--rate", "1"] : ["--error", "THROTTLED"]) + ["--device", "elsewhere"])
            XCTAssertEqual(r.status, 0, "\(e.path): \(r.stderr)")
            XCTAssertEqual(r.parsed?["faults"]?.arrayValue?.first?["op"], .string(e.path))
        }
        XCTAssertEqual(s.run("fault", "list").parsed?["faults"]?.arrayValue?.count, Endpoint.allCases.count)
        XCTAssertTrue(s.run("fault", "add", "--help").stdout.contains("users/caller, users/current, users/discover"))
        XCTAssertEqual(s.run("fault", "clear").status, 0)

        XCTAssertEqual(s.run("account", "signin", "alice@example.com").status, 0)
        XCTAssertEqual(s.run("fault", "add", "--op", "users/current", "--error", "THROTTLED").status, 0)
        XCTAssertEqual(s.run("whoami").status, 0, "users/current is not whoami's")
        XCTAssertEqual(s.run("fault", "add", "--op", "users/caller", "--error", "THROTTLED").status, 0)
        let faulted = s.run("whoami")
        XCTAssertEqual(faulted.status, 8)
        XCTAssertEqual(faulted.stderr, "ck: THROTTLED: request rate limited: too many requests (fault f2)\n")
    }

    func testFaultListAndClearPrintTheirBodies() {
        let s = CLISandbox()
        XCTAssertEqual(s.run("fault", "add", "--op", "zones/list", "--error", "ZONE_BUSY", "--times", "2", "--zone", "Lists").status, 0)
        XCTAssertEqual(s.run("fault", "list", "--format", "ndjson").stdout,
                       #"{"envelope":{"ckErrorCode":23,"serverErrorCode":"TRY_AGAIN_LATER"},"error":"ZONE_BUSY","id":"f1","op":"zones/list","times":2,"zone":"Lists"}"# + "\n")
        let missing = s.run("fault", "clear", "f9")
        XCTAssertEqual(missing.status, 3)
        XCTAssertTrue(missing.stderr.hasPrefix("ck: NOT_FOUND: no fault 'f9'"), missing.stderr)
        XCTAssertEqual(s.run("fault", "clear", "f1").stdout, "{\n  \"faults\": [\n    {\n      \"deleted\": true,\n      \"id\": \"f1\"\n    }\n  ]\n}\n")
        XCTAssertEqual(s.run("fault", "list").stdout, "{\n  \"faults\": []\n}\n")
    }

    /// Schemas go into development; in production the API refuses, the CLI names the next step.
    func testSchemaImportIntoProductionIsRefused() {
        let s = CLISandbox()
        let r = s.run(["--env", "production", "schema", "import", "-"], stdin: "DEFINE SCHEMA RECORD TYPE A (x STRING);")
        XCTAssertEqual(r.status, 6)
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.stderr, "ck: BAD_REQUEST: schemas are imported into development, not production; production gets the development schema when it is deployed; deploy the development schema first: ck schema deploy\n")
        let ok = s.run(["schema", "import", "-"], stdin: "DEFINE SCHEMA RECORD TYPE A (x STRING);")
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(ok.stdout, "{\n  \"applied\": true,\n  \"recordTypes\": [\n    \"A\",\n    \"Users\"\n  ],\n  \"roles\": [],\n  \"valid\": true\n}\n")
        XCTAssertTrue(s.run("schema", "export", "--format", "table").stdout.hasPrefix("DEFINE SCHEMA\n"), "text whatever --format says, but json (issue 30)")
        let roles = s.run("role", "assign", "Editor", "nobody@example.com")
        XCTAssertEqual(roles.status, 3, roles.stderr)
    }

    func testStatusAndContainerShowWhereCommandsAct() {
        let s = CLISandbox()
        let signedOut = s.run("status", "--format", "ndjson")
        XCTAssertEqual(signedOut.status, 0, "never fails for an unreadable database")
        XCTAssertEqual(signedOut.parsed?["zonesUnavailable"].map { _ in true }, true)
        XCTAssertEqual(signedOut.stdout.split(separator: "\n").count, 1, "no zones: the document alone")
        XCTAssertEqual(s.run("account", "signin", "alice@example.com").status, 0)
        XCTAssertEqual(s.run("zone", "create", "Lists").status, 0)
        let st = s.run("status", "--format", "ndjson")
        XCTAssertEqual(st.status, 0, st.stderr)
        let lines = st.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.prefix(2), [#"{"zoneName":"_defaultZone"}"#, #"{"behind":0,"bookmark":"none","zoneName":"Lists"}"#], "a zone a line, then the rest")
        XCTAssertTrue(lines[2].hasPrefix(#"{"account":{"appleID":"alice@example.com","status":"available""#), lines[2])
        XCTAssertEqual(s.run("container", "use", "iCloud.com.example.notes").stdout, "{\n  \"containerIdentifier\": \"iCloud.com.example.notes\"\n}\n")
        XCTAssertEqual(s.run("--db", "public", "container", "show").parsed?["containerIdentifier"], "iCloud.com.example.notes")
        XCTAssertEqual(s.run("container", "use", "com.example.notes").status, 6)
        XCTAssertEqual(s.run("--container", "nope", "container", "show").status, 6)
        XCTAssertEqual(s.run("--container", "nope", "status").status, 6)
    }

    func testInitAndFsck() throws {
        let s = CLISandbox()
        let base = s.dir + "-project"
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false)
        let made = s.run(["init", base], env: ["CK_DATA_DIR": ""])
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertEqual(made.parsed?["created"], true)
        XCTAssertEqual(s.run(["init", base], env: ["CK_DATA_DIR": ""]).parsed?["created"], false)
        // A file where .ck would go.
        try FileManager.default.createDirectory(atPath: base + "/sub", withIntermediateDirectories: false)
        XCTAssertTrue(FileManager.default.createFile(atPath: base + "/sub/.ck", contents: Data()))
        let inTheWay = s.run(["init", base + "/sub"], env: ["CK_DATA_DIR": ""])
        XCTAssertEqual(inTheWay.status, 2)
        XCTAssertTrue(inTheWay.stderr.hasPrefix("ck: error: '\(base)/sub/.ck' exists and is not a directory"), inTheWay.stderr)

        XCTAssertEqual(s.run("fsck", "--dry-run").status, 0)
        let clean = s.run("fsck", "--format", "ndjson")
        XCTAssertEqual(clean.status, 0)
        XCTAssertTrue(clean.stdout.hasPrefix(#"{"checked":{"#) && clean.stdout.hasSuffix(#""clean":true}"# + "\n"), clean.stdout)
    }
}
