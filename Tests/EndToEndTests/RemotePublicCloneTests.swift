import CKTestSupport
import Foundation
import XCTest

/// The public database through the binary: a server-to-server key made with `ck remote key
/// create`, registered on the server as in the Console, then `ck clone --db public --schema`
/// querying the schema's types; a type without a queryable ___recordID stops the clone with
/// the line to add.
final class RemotePublicCloneTests: XCTestCase {
    func testAPublicCloneWithAKeyAndTheSchema() throws {
        let server = Sandbox()
        server.signIn()
        XCTAssertEqual(server.run(["schema", "import", "-"], stdin: TestSchemas.publicFeed).status, 0)
        for i in 0..<5 { XCTAssertEqual(server.ck("--db", "public", "record", "save", "--type", "Feed", "--name", "f\(i)", "title=item \(i)").status, 0) }
        let serve = try ServeProcess(server)
        defer { _ = serve.stop() }
        let url = serve.url + "/database/1/iCloud.com.example.app/development"

        let client = Sandbox()
        let made = client.ck("remote", "key", "create", url)
        XCTAssertEqual(made.status, 0, made.stderr)
        let pem = try XCTUnwrap(made.object["publicKey"] as? String)
        // The Console's part: the public key registered, a key ID given back.
        let registered = server.run(["server-key", "add", "client-key", "--public-key", "-"], stdin: pem)
        XCTAssertEqual(registered.status, 0, registered.stderr)
        XCTAssertEqual(client.ck("remote", "key", "set", url, "--key-id", "client-key").status, 0)
        let schemaFile = client.root.appendingPathComponent("schema.ckdb").path
        try TestSchemas.publicFeed.write(toFile: schemaFile, atomically: true, encoding: .utf8)
        let dir = client.root.appendingPathComponent("Feeds").path
        let clone = client.run(["clone", url, dir, "--db", "public", "--schema", schemaFile])
        XCTAssertEqual(clone.status, 0, clone.stderr)
        let listed = client.run(["--data-dir", dir + "/.ck", "--db", "public", "record", "list", "--format", "ndjson"])
        XCTAssertEqual(listed.stdout.split(separator: "\n").count, 5, listed.stderr)
        XCTAssertTrue(client.run(["--data-dir", dir + "/.ck", "schema", "export"]).stdout.contains("RECORD TYPE Feed"), "the schema came with --schema")

        // A type with no queryable ___recordID: the clone names the line to add.
        let bare = TestSchemas.publicFeed.replacingOccurrences(of: "\"___recordID\"   REFERENCE QUERYABLE", with: "\"___recordID\"   REFERENCE")
        try bare.write(toFile: schemaFile, atomically: true, encoding: .utf8)
        let refused = client.run(["clone", url, dir + "2", "--db", "public", "--schema", schemaFile])
        assertFailure(refused, exit: 6, contains: #""___recordID" REFERENCE QUERYABLE"#)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "2"))
    }
}
