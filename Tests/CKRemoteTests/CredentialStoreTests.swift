import CKJSON
import CKModel
import Foundation
import XCTest
@testable import CKRemote

/// The credentials file: outside the data directory, 0600 in a 0700 directory, filed by remote
/// URL, the environment's variables over it, and secrets never shown whole.
final class CredentialStoreTests: XCTestCase {
    var home = ""
    override func setUp() { home = NSTemporaryDirectory() + "ck-cred-" + UUID().uuidString }
    override func tearDown() { try? FileManager.default.removeItem(atPath: home) }

    let url = try! RemoteURL("https://api.apple-cloudkit.com/database/1/iCloud.com.example.App/development")

    func testWhereTheFileGoes() throws {
        XCTAssertEqual(try CredentialStore.standard(env: ["XDG_CONFIG_HOME": "/x/cfg", "HOME": "/h"]).directory, "/x/cfg/ck")
        XCTAssertEqual(try CredentialStore.standard(env: ["HOME": "/h"]).directory, "/h/.config/ck")
        XCTAssertEqual(try CredentialStore.standard(env: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"]).directory, "/h/.config/ck", "a relative XDG path is ignored, as the spec says")
        XCTAssertThrowsError(try CredentialStore.standard(env: [:]))
    }

    func testStoredPrivatelyByURLAndRead() throws {
        let store = try CredentialStore.standard(env: ["HOME": home])
        try store.update(url) { $0.apiToken = "a1b2c3d4"; $0.webAuthToken = "158__54__secret+/=" }
        var st = stat()
        XCTAssertEqual(stat(store.directory + "/credentials.json", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        XCTAssertEqual(stat(store.directory, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)
        XCTAssertEqual(try store.credentials(for: url).webAuthToken, "158__54__secret+/=")
        let other = try RemoteURL("https://api.apple-cloudkit.com/database/1/iCloud.com.example.App/production")
        XCTAssertNil(try store.credentials(for: other).apiToken, "another environment is another remote")
        try store.update(url) { $0.webAuthToken = nil; $0.apiToken = nil }
        XCTAssertEqual(try store.credentials(for: url), Credentials())
    }

    func testAFileOthersCanReadIsRefused() throws {
        let store = try CredentialStore.standard(env: ["HOME": home])
        try store.update(url) { $0.apiToken = "t" }
        chmod(store.directory + "/credentials.json", 0o644)
        XCTAssertThrowsError(try store.credentials(for: url)) { e in
            XCTAssertTrue((e as? CloudKitError)?.reason.contains("chmod 600") == true, "\(e)")
        }
    }

    func testTheEnvironmentOverridesAndShowMasks() {
        let stored = Credentials(apiToken: "stored-api-token-0123456789", webAuthToken: "stored-web")
        let c = stored.overridden(by: ["CLOUDKIT_API_TOKEN": "env-api-token-abcdef", "CLOUDKIT_KEY_ID": "kid", "CLOUDKIT_PRIVATE_KEY_PATH": "/k.pem", "CLOUDKIT_WEB_AUTH_TOKEN": ""])
        XCTAssertEqual(c.apiToken, "env-api-token-abcdef")
        XCTAssertEqual(c.webAuthToken, "stored-web", "an empty variable overrides nothing")
        XCTAssertEqual(c.keyID, "kid")
        let shown = JSONWriter.compact(c.shown)
        XCTAssertFalse(shown.contains("env-api-token-abcdef"))
        XCTAssertFalse(shown.contains("stored-web"))
        XCTAssertTrue(shown.contains("env-…ef (20 characters)"), shown)
    }

    func testAKeyFileIsNeverWrittenOverAndIsPrivate() throws {
        let store = try CredentialStore.standard(env: ["HOME": home])
        let p = try store.writeKey("PEM", named: "k.pem")
        var st = stat()
        XCTAssertEqual(stat(p, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        XCTAssertThrowsError(try store.writeKey("OTHER", named: "k.pem"))
        XCTAssertEqual(try String(contentsOfFile: p, encoding: .utf8), "PEM")
    }
}
