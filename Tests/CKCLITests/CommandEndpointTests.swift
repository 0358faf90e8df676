import CKTestSupport
import Foundation
import XCTest
@testable import CKCLI

/// The endpoint each row of the command table names (`Command.endpoint`) is the one the command
/// stands for: a fault armed for that endpoint fails the command with that fault, and once the
/// fault is spent the same command succeeds. A row without one is ck's own: no fault fails it,
/// `*` included (Docs/faults.md). So a row that names the wrong endpoint, or none where it
/// should, fails here.
final class CommandEndpointTests: XCTestCase {
    /// What the examples refer to in the world they run in.
    private struct World {
        let sandbox: CLISandbox
        let shortGUID: String
        let apiToken: String
    }

    /// alice (the device's account) owns zone Lists with todo-1 and todo-2, a zone
    /// subscription, a tag v1, an API token, a server key and a share of todo-1 with bob (who
    /// accepted) and carol (invited); the schema has a role Editor, which bob holds; dave is
    /// signed in too. Made once: its commits are synced, so each command gets a copy.
    private func world() -> World {
        let s = CLISandbox()
        for u in ["bob", "carol", "dave", "alice"] { s.signIn("\(u)@example.com") }
        let steps: [([String], String?)] = [
            (["schema", "import", "-"], "DEFINE SCHEMA CREATE ROLE Editor;"),
            (["role", "assign", "Editor", "bob@example.com"], nil),
            (["zone", "create", "Lists"], nil),
            (["--zone", "Lists", "record", "save", "--type", "ToDoItem", "--name", "todo-1", "title=Milk"], nil),
            (["--zone", "Lists", "record", "save", "--type", "ToDoItem", "--name", "todo-2", "title=Eggs"], nil),
            (["schema", "index", "add", "ToDoItem", "___recordID", "QUERYABLE"], nil),
            (["--zone", "Lists", "subscribe", "zone"], nil),
            (["tag", "create", "v1"], nil),
            (["server-key", "add", "key-1", "--public-key", "-"], Self.publicKey),
        ]
        for (args, stdin) in steps { precondition(s.run(args, stdin: stdin).status == 0, "\(args)") }
        let shared = s.run(["--zone", "Lists", "share", "create", "todo-1", "--participant", "bob@example.com", "--participant", "carol@example.com"])
        let guid = shared.record["shortGUID"] as? String ?? ""
        precondition(s.run(["--as", "bob@example.com", "share", "accept", guid]).status == 0)
        let token = s.run(["api-token", "create"]).object["apiToken"] as? String ?? ""
        precondition(s.run(["remote", "add", "origin", "http://127.0.0.1:9/database/1/iCloud.com.example.app/development"]).status == 0)
        return World(sandbox: s, shortGUID: guid, apiToken: token)
    }

    private static let publicKey = try! String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/auth/server-key-public.pem"), encoding: .utf8)

    private static let privateKeyFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/auth/server-key-private.pem").path

    /// Commands that do not run here: `serve` answers until it is stopped (its own tests,
    /// CKServeTests and EndToEndTests, fault it by endpoint); the commands that talk to a remote
    /// need one (CKRemoteTests: faults armed on the server fail them, faults armed here never do).
    private static let notRunHere: Set<String> = ["serve", "console", "remote login", "clone", "fetch", "pull", "push"]

    /// One invocation of each command, and its stdin.
    private func example(_ command: String, _ w: World) -> (args: [String], stdin: String?)? {
        let lists = ["--zone", "Lists"]
        switch command {
        // Commands that stand for an endpoint.
        case "account": return (["account"], nil)
        case "whoami": return (["whoami"], nil)
        case "user discover": return (["user", "discover", "--email", "bob@example.com"], nil)
        case "zone create": return (["zone", "create", "Trips"], nil)
        case "zone delete": return (["zone", "delete", "Lists"], nil)
        case "zone list": return (["zone", "list"], nil)
        case "record save": return (lists + ["record", "save", "--type", "ToDoItem", "--name", "todo-3", "title=Jam"], nil)
        case "record get": return (lists + ["record", "get", "todo-1"], nil)
        case "record delete": return (lists + ["record", "delete", "todo-2"], nil)
        case "record list": return (lists + ["record", "list"], nil)
        case "record modify":
            return (lists + ["record", "modify"], #"{"operations":[{"operationType":"create","record":{"recordName":"todo-3","recordType":"ToDoItem"}}]}"#)
        case "record query": return (lists + ["record", "query", "--type", "ToDoItem"], nil)
        case "zone changes": return (lists + ["zone", "changes"], nil)
        case "database changes": return (["database", "changes"], nil)
        case "subscribe": return (["subscribe", "--id", "everything"], nil)
        case "subscription list": return (["subscription", "list"], nil)
        case "subscription get": return (["subscription", "get", "zone-Lists"], nil)
        case "subscription delete": return (["subscription", "delete", "zone-Lists"], nil)
        case "notifications": return (["notifications"], nil)
        case "share create": return (lists + ["share", "create", "todo-2"], nil)
        case "share accept": return (["--as", "carol@example.com", "share", "accept", w.shortGUID], nil)
        case "share list": return (["share", "list"], nil)
        case "share get": return (lists + ["share", "get", "todo-1"], nil)
        case "share add-participant": return (lists + ["share", "add-participant", "todo-1", "dave@example.com"], nil)
        case "share remove-participant": return (lists + ["share", "remove-participant", "todo-1", "carol@example.com"], nil)
        case "share leave": return (["--as", "bob@example.com", "share", "leave", w.shortGUID], nil)
        case "share delete": return (lists + ["share", "delete", "todo-1"], nil)
        case "import":
            return (lists + ["import"], #"{"recordName":"todo-3","recordType":"ToDoItem","fields":{"title":{"value":"Jam","type":"STRING"}}}"#)
        case "restore": return (lists + ["restore", "1"], nil)
        case "revert": return (lists + ["revert", "HEAD"], nil)
        // ck's own commands.
        case "init": return (["init", "project"], nil)
        case "help": return (["help"], nil)
        case "status": return (["status"], nil)
        case "container use": return (["container", "use", "iCloud.com.example.app"], nil)
        case "container show": return (["container", "show"], nil)
        case "account signin": return (["account", "signin", "erin@example.com"], nil)
        case "account signout": return (["--as", "dave@example.com", "account", "signout"], nil)
        case "account set-status": return (["account", "set-status", "restricted"], nil)
        case "account events": return (["account", "events"], nil)
        case "account web-auth-token": return (["account", "web-auth-token"], nil)
        case "account sessions": return (["account", "sessions"], nil)
        case "account sessions end": return (["account", "sessions", "end", "--all"], nil)
        case "permission request": return (["permission", "request", "userDiscoverability"], nil)
        case "permission status": return (["permission", "status"], nil)
        case "zone purge": return (["zone", "purge", "Lists"], nil)
        case "token expire": return (lists + ["token", "expire"], nil)
        case "notifications drop": return (["notifications", "drop"], nil)
        case "export": return (["export"], nil)
        case "api-token create": return (["api-token", "create"], nil)
        case "api-token list": return (["api-token", "list"], nil)
        case "api-token delete": return (["api-token", "delete", w.apiToken], nil)
        case "server-key add": return (["server-key", "add", "key-2", "--public-key", "-"], Self.publicKey)
        case "server-key list": return (["server-key", "list"], nil)
        case "server-key delete": return (["server-key", "delete", "key-1"], nil)
        case "fault add": return (["fault", "add", "--op", "zones/list", "--error", "THROTTLED"], nil)
        case "fault list": return (["fault", "list"], nil)
        case "fault clear": return (["fault", "clear"], nil)
        case "fsck": return (["fsck"], nil)
        case "schema export": return (["schema", "export"], nil)
        case "schema import": return (["schema", "import", "-", "--validate"], "DEFINE SCHEMA CREATE ROLE Editor;")
        case "schema index add": return (["schema", "index", "add", "ToDoItem", "title", "SORTABLE"], nil)
        case "schema deploy": return (["schema", "deploy"], nil)
        case "schema reset": return (["schema", "reset"], nil)
        case "role assign": return (["role", "assign", "Editor", "carol@example.com"], nil)
        case "role remove": return (["role", "remove", "Editor", "bob@example.com"], nil)
        case "role list": return (["role", "list"], nil)
        case "log": return (lists + ["log"], nil)
        case "show": return (lists + ["show", "1"], nil)
        case "diff": return (lists + ["diff", "1"], nil)
        case "blame": return (lists + ["blame", "todo-1"], nil)
        case "tag create": return (["tag", "create", "v2"], nil)
        case "tag list": return (["tag", "list"], nil)
        case "tag delete": return (["tag", "delete", "v1"], nil)
        case "gc": return (lists + ["gc"], nil)
        case "version": return (["version"], nil)
        case "completion": return (["completion", "bash"], nil)
        case "man": return (["man"], nil)
        case "remote add": return (["remote", "add", "upstream", "http://127.0.0.1:9/database/1/iCloud.com.example.app/development"], nil)
        case "remote list": return (["remote", "list"], nil)
        case "remote show": return (["remote", "show", "origin"], nil)
        case "remote remove": return (["remote", "remove", "origin"], nil)
        case "remote rename": return (["remote", "rename", "origin", "upstream"], nil)
        case "remote key create": return (["remote", "key", "create", "origin"], nil)
        case "remote key set": return (["remote", "key", "set", "origin", "--key-id", "k1", "--private-key", Self.privateKeyFile], nil)
        default: return nil
        }
    }

    /// Runs `body` once per row of the command table that `rows` keeps, each in a copy of the
    /// world, with the row's example.
    private func forEach(_ rows: (Command) -> Bool, _ body: (Command, CLISandbox, [String], String?) -> Void) {
        let w = world()
        for c in CommandTable.standard.commands where rows(c) && !Self.notRunHere.contains(c.name) {
            guard let (args, stdin) = example(c.name, w) else { XCTFail("give '\(c.name)' an example above"); continue }
            let s = CLISandbox()
            XCTAssertNoThrow(try FileManager.default.copyItem(at: w.sandbox.dataDir, to: s.dataDir))
            body(c, s, args, stdin)
        }
    }

    func testEveryEndpointOfTheTableFailsItsCommand() {
        var count = 0
        forEach({ $0.endpoint != nil }) { c, s, args, stdin in
            count += 1
            let op = c.endpoint!.path
            let armed = s.run(["fault", "add", "--op", op, "--error", "ZONE_BUSY", "--times", "1"])
            XCTAssertEqual(armed.status, 0, armed.stderr)
            let faulted = s.run(args, stdin: stdin)
            XCTAssertEqual(faulted.status, 8, "\(c.name), a fault on \(op): \(faulted.stderr)")
            XCTAssertTrue(faulted.stderr.contains("TRY_AGAIN_LATER: zone busy") && faulted.stderr.contains("(fault f1)"),
                          "\(c.name), a fault on \(op): \(faulted.stderr)")
            let spent = s.run(args, stdin: stdin)
            XCTAssertEqual(spent.status, 0, "\(c.name), the fault spent: \(spent.stderr)")
        }
        XCTAssertGreaterThan(count, 25)
    }

    func testCommandsWithoutAnEndpointAreNeverFaulted() {
        var count = 0
        forEach({ $0.endpoint == nil }) { c, s, args, stdin in
            count += 1
            XCTAssertEqual(s.run(["fault", "add", "--op", "*", "--error", "ZONE_BUSY"]).status, 0)
            let r = s.run(args, stdin: stdin)
            XCTAssertEqual(r.status, 0, "\(c.name) with every endpoint faulted: \(r.stderr)")
        }
        XCTAssertGreaterThan(count, 40)
    }
}
