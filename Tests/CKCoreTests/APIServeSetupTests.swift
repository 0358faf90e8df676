import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKCore

/// What `ck serve --snippet` and `--ephemeral` ask of the API: a page's API token, and a fresh
/// data directory readied for a test suite (Docs/serve.md "A page in one line", "Ephemeral").
final class APIServeSetupTests: XCTestCase {
    static let container = "iCloud.com.example.setup"

    func testAPageTokenIsTheNewestOfTheContainerOrANewOne() throws {
        let t = TempStore()
        let api = api(t.root)
        let made = try api.pageAPIToken(container: Self.container, environment: .development)
        XCTAssertEqual(try api.pageAPIToken(container: Self.container, environment: .development), made, "asked again: the same token")
        let list = try api.listAPITokens(container: Self.container, environment: .development).document["apiTokens"]?.arrayValue ?? []
        XCTAssertEqual(list.count, 1)
        XCTAssertEqual(list.first?["name"]?.stringValue, "ck serve")
        // Another environment has its own.
        XCTAssertNotEqual(try api.pageAPIToken(container: Self.container, environment: .production), made)
        XCTAssertThrowsError(try api.pageAPIToken(container: "not a container", environment: .development))
    }

    func testAnEphemeralSetupSignsInATestUserWithTokensThatAuthenticate() throws {
        let t = TempStore()
        let api = api(t.root)
        let body = try api.prepareEphemeral(EphemeralSetupRequest(container: Self.container, environment: .development)).document
        let token = try XCTUnwrap(body["apiToken"]?.stringValue)
        let session = try XCTUnwrap(body["ckWebAuthToken"]?.stringValue)
        XCTAssertNil(body["seeded"])
        let auth = try api.authenticate(WebCredentials(container: Self.container, environment: .development, scope: .private,
                                                       apiToken: token, webAuthToken: session))
        XCTAssertEqual(auth.user, .userRecordName(try XCTUnwrap(body["userRecordName"]?.stringValue)))
        let me = try api.callerIdentity(as: caller(container: Self.container)).document
        XCTAssertEqual(me["userRecordName"], body["userRecordName"])
    }

    func testASeedIsLoadedWholeOrNotAtAll() throws {
        let t = TempStore()
        let a = api(t.root)
        let seed = """
        {"recordName":"a","recordType":"Item","fields":{"n":{"value":1}}}
        {"recordName":"b","recordType":"Item","fields":{"n":{"value":2}},"zoneID":{"zoneName":"Lists"}}

        """
        let body = try a.prepareEphemeral(EphemeralSetupRequest(container: Self.container, environment: .development, seed: Array(seed.utf8))).document
        XCTAssertEqual(body["seeded"]?.int64Value, 2)
        let got = try a.lookupRecords(LookupRecordsRequest(recordNames: ["b"], zoneName: "Lists"), as: caller(container: Self.container))
        XCTAssertEqual(got.failures.count, 0)
        XCTAssertEqual(got.results.count, 1)

        // An export of an empty database seeds nothing, and is no error.
        let empty = try api(TempStore().root)
            .prepareEphemeral(EphemeralSetupRequest(container: Self.container, environment: .development, seed: Array(" \n".utf8))).document
        XCTAssertEqual(empty["seeded"]?.int64Value, 0)

        let other = TempStore()
        let refused = api(other.root)
        let bad = Array("{\"recordName\":\"a\",\"recordType\":7}\n".utf8)
        XCTAssertThrowsError(try refused.prepareEphemeral(EphemeralSetupRequest(container: Self.container, environment: .development, seed: bad))) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .badRequest)
        }
    }
}
