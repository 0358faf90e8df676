import CKTestSupport
import Foundation
import XCTest

/// ck's own commands over real TLS: nginx with a certificate from a CA made for the test, in
/// front of a `ck serve`; ck trusts that CA through CK_CA_FILE (or SSL_CERT_FILE), and refuses a
/// certificate from another CA or for another name.
final class RemoteOverTLSTests: XCTestCase {
    func testCloneAndPushThroughTLSAndAWrongCertificateIsRefused() throws {
        let server = Sandbox()
        server.signIn()
        XCTAssertEqual(server.ck("zone", "create", "Lists").status, 0)
        XCTAssertEqual(server.ck("--zone", "Lists", "record", "save", "--type", "Item", "--name", "a", "title=over TLS").status, 0)
        let token = try XCTUnwrap(server.ck("api-token", "create").object["apiToken"] as? String)
        let session = try XCTUnwrap(server.ck("account", "web-auth-token").object["ckWebAuthToken"] as? String)
        let serve = try ServeProcess(server)
        defer { _ = serve.stop() }
        let tls = try TLSFront(self, backendPort: serve.port)
        let path = "/database/1/iCloud.com.example.app/development"
        let client = Sandbox()
        let env = ["CLOUDKIT_API_TOKEN": token, "CLOUDKIT_WEB_AUTH_TOKEN": session]
        let dir = client.root.appendingPathComponent("App").path

        // Another CA, and the right CA for another name: refused, nothing fetched.
        for port in [tls.foreignPort, tls.misnamedPort] {
            let refused = client.run(["clone", tls.url(path, port: port), dir + "-\(port)"], env: env.merging(["CK_CA_FILE": tls.caFile]) { $1 })
            assertFailure(refused, exit: 8, contains: "certificate")
            XCTAssertFalse(refused.stderr.contains(session) || refused.stderr.contains(token), "no secret in the message")
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "-\(port)"), "a refused clone leaves nothing behind")
        }
        // The system's store does not know the test CA either.
        assertFailure(client.run(["clone", tls.url(path), dir + "-system"], env: env), exit: 8, contains: "certificate")

        let clone = client.run(["clone", tls.url(path), dir], env: env.merging(["SSL_CERT_FILE": tls.caFile]) { $1 })
        XCTAssertEqual(clone.status, 0, clone.stderr)
        let data = ["--data-dir", dir + "/.ck"]
        let got = client.run(data + ["--zone", "Lists", "record", "get", "a"])
        XCTAssertEqual((got.record["fields"] as? [String: Any]).flatMap { ($0["title"] as? [String: Any])?["value"] as? String }, "over TLS")
        XCTAssertEqual(client.run(data + ["--zone", "Lists", "record", "save", "--type", "Item", "--name", "b", "title=back"]).status, 0)
        let push = client.run(data + ["push"], env: env.merging(["CK_CA_FILE": tls.caFile]) { $1 })
        XCTAssertEqual(push.status, 0, push.stderr)
        XCTAssertEqual(server.ck("--zone", "Lists", "record", "get", "b").status, 0, "the record arrived over TLS")
    }
}
