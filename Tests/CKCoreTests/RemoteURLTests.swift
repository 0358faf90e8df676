import CKModel
import XCTest

/// A remote's URL: a Web Services prefix with container and environment, nothing more.
final class RemoteURLTests: XCTestCase {
    func testAppleAndLoopbackURLs() throws {
        let a = try RemoteURL("https://api.apple-cloudkit.com/database/1/iCloud.com.example.App/development")
        XCTAssertEqual(a.origin, "https://api.apple-cloudkit.com")
        XCTAssertEqual(a.port, 443)
        XCTAssertEqual(a.container, "iCloud.com.example.App")
        XCTAssertFalse(a.isProduction)
        XCTAssertEqual(a.path(.private, "records/query"), "/database/1/iCloud.com.example.App/development/private/records/query")
        let l = try RemoteURL("http://127.0.0.1:8484/database/1/iCloud.x/production/")
        XCTAssertEqual(l.origin, "http://127.0.0.1:8484")
        XCTAssertTrue(l.isProduction)
        XCTAssertEqual(l.description, "http://127.0.0.1:8484/database/1/iCloud.x/production")
        let m = try RemoteURL("http://[::1]:9/ck/database/1/iCloud.x/development")
        XCTAssertEqual(m.mount, "/ck")
        XCTAssertEqual(m.origin, "http://[::1]:9")
        XCTAssertEqual(m.path(.public, "users/caller"), "/ck/database/1/iCloud.x/development/public/users/caller")
    }

    func testWhatIsNotARemoteURLSaysWhy() {
        let cases: [(String, String)] = [
            ("ftp://h/database/1/iCloud.x/development", "https://"),
            ("https://h/database/1/iCloud.x/staging", "not an environment"),
            ("https://h/database/1/iCloud.x/development/private", "the database is chosen with --db"),
            ("https://h/database/1/iCloud.x", "container and the environment"),
            ("https://h/database/1/com.x/development", "iCloud."),
            ("https://h/x/1/iCloud.x/development", "/database/1/"),
            ("https://user:pw@h/database/1/iCloud.x/development", "credentials do not belong"),
            ("https://h/database/1/iCloud.x/development?ckAPIToken=x", "no query"),
            ("https://h:99999/database/1/iCloud.x/development", "port"),
            ("https://h/../database/1/iCloud.x/development", "'..'"),
            ("https://h /database/1/iCloud.x/development", "space"),
        ]
        for (url, why) in cases {
            XCTAssertThrowsError(try RemoteURL(url), url) { e in
                XCTAssertTrue((e as? CloudKitError)?.reason.contains(why) == true, "\(url): \(e)")
            }
        }
    }

    func testAnErrorNeverEchoesWhatMayBeASecret() {
        for url in ["https://api.apple-cloudkit.com/database/1/iCloud.x/development?ckWebAuthToken=SECRET-TOKEN",
                    "https://me:SECRET-TOKEN@api.apple-cloudkit.com/database/1/iCloud.x/development",
                    "https://api.apple-cloudkit.com/database/1/iCloud.x/staging#SECRET-TOKEN"] {
            XCTAssertThrowsError(try RemoteURL(url)) { e in
                let reason = (e as? CloudKitError)?.reason ?? ""
                XCTAssertFalse(reason.contains("SECRET"), reason)
                XCTAssertTrue(reason.contains("api.apple-cloudkit.com"), reason)
            }
        }
    }
}
