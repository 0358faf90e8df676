import CKTestSupport
import Foundation
import XCTest

/// The real request bodies of Tests/Fixtures/wire, sent to `ck serve` and given to the CLI, for
/// the same state: the answers are the same. Writes go to twin data directories made alike
/// (what differs between two stores — times, uuids, the user's record name, the device — is
/// set aside); reads go to one store, at once over HTTP and through the CLI.
final class ServeWireReplayTests: XCTestCase {
    static let container = "iCloud.com.example.wire"

    struct Store {
        let sandbox: Sandbox
        let serve: ServeProcess
        let apiToken: String
        let session: String
        let userRecordName: String

        func post(_ endpoint: String, _ body: String) throws -> HTTPTestClient.Answer {
            let path = "/database/1/\(ServeWireReplayTests.container)/development/private/\(endpoint)?ckAPIToken=\(apiToken)&ckWebAuthToken="
                + (session.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? session)
            return try serve.client().request("POST", path, json: body)
        }

        /// The CLI's answer: stdout, or the error envelope it prints with --error-format json.
        func cli(_ args: [String], stdin: String? = nil) -> Any? {
            let r = sandbox.run(["--error-format", "json"] + args, stdin: stdin)
            if !r.stdout.isEmpty { return r.json() }
            return try? JSONSerialization.jsonObject(with: Data(r.stderr.utf8))
        }
    }

    /// A store with the Photos zone as the real one has it: an album typed by an earlier save.
    func store() throws -> Store {
        let s = Sandbox()
        s.environment["CK_CONTAINER"] = Self.container
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "PrimarySync").status, 0)
        XCTAssertEqual(s.run(["--zone", "PrimarySync", "record", "save", "--type", "CPLAlbum", "--name", "seed",
                              "albumNameEnc:ENCRYPTED_BYTES=U0VFRA==", "userModificationDate:TIMESTAMP=1775666000000", "isDeleted=0"]).status, 0)
        let who = try XCTUnwrap(s.ck("whoami").object["userRecordName"] as? String)
        return Store(sandbox: s, serve: try ServeProcess(s), apiToken: try XCTUnwrap(s.ck("api-token", "create").object["apiToken"] as? String),
                     session: try XCTUnwrap(s.ck("account", "web-auth-token").object["ckWebAuthToken"] as? String), userRecordName: who)
    }

    /// What two stores given the same requests still differ in, set aside: times, uuids, the
    /// user's record name (each store signed its own user in), the device, and the record names
    /// the server makes up (UUIDs).
    static func normalized(_ v: Any?, user: String) -> Any? {
        switch v {
        case let o as [String: Any]:
            var out: [String: Any] = [:]
            for (k, x) in o {
                if ["timestamp", "uuid", "deviceID", "ckErrorCode"].contains(k) { continue }
                out[k] = normalized(x, user: user)
            }
            return out
        case let a as [Any]: return a.map { normalized($0, user: user) }
        case let s as String:
            if s == user { return "_USER" }
            if s.count == 36, UUID(uuidString: s) != nil { return "_UUID" }
            return s.replacingOccurrences(of: user, with: "_USER")
        default: return v
        }
    }

    static func canonical(_ v: Any?) -> String {
        guard let v, let d = try? JSONSerialization.data(withJSONObject: v, options: [.sortedKeys, .fragmentsAllowed]) else { return "nil" }
        return String(decoding: d, as: UTF8.self)
    }

    func testRecordedWritesAnswerOverHTTPAsTheCLIAnswersThem() throws {
        let cliSide = try store(), httpSide = try store()
        let names = ["records-modify.request.apple-doc-create-operation", "records-modify.request.apple-doc-update-operation",
                     "records-modify.request.photos-album-create", "records-modify.request.photos-album-add-photo",
                     "records-modify.request.photos-album-remove-photo-forcedelete", "records-modify.request.photos-photo-delete",
                     "records-modify.request.photos-shared-unfavorite", "records-modify.request.photos-icloudpd-delete",
                     "records-modify.request.apple-doc-create-share"]
        for name in names {
            let fixture = WireFixture(name)
            // Apple's reference shows one operation; a request holds a list of them.
            let body = fixture.object["operations"] != nil || fixture.object["operationType"] == nil ? fixture.text
                : #"{"operations":["# + fixture.text + "]}"
            let viaCLI = cliSide.cli(["record", "modify"], stdin: body)
            let viaHTTP = try httpSide.post("records/modify", body)
            XCTAssertEqual(Self.canonical(Self.normalized(viaHTTP.json, user: httpSide.userRecordName)),
                           Self.canonical(Self.normalized(viaCLI, user: cliSide.userRecordName)), name)
        }
        _ = cliSide.serve.stop()
        _ = httpSide.serve.stop()
    }

    func testRecordedReadsAnswerOverHTTPAsTheCLIAnswersThem() throws {
        let s = try store()
        // The recorded queries ran against Photos' schema: the types, with the indexes they need.
        let schema = s.sandbox.ck("schema", "export").stdout + """

                RECORD TYPE CPLAlbumByPositionLive ("___recordID" REFERENCE QUERYABLE);
                RECORD TYPE CPLAssetAndMasterByAddedDate (startRank INT64 QUERYABLE, direction STRING QUERYABLE);
                RECORD TYPE CheckIndexingState ("___recordID" REFERENCE QUERYABLE);

            """
        XCTAssertEqual(s.sandbox.run(["schema", "import", "-"], stdin: schema).status, 0)
        for name in ["records-query.request.photos-albums", "records-query.request.photos-assets", "records-query.request.photos-checkindexingstate"] {
            let fixture = WireFixture(name)
            let viaHTTP = try s.post("records/query", fixture.text)
            XCTAssertEqual(Self.canonical(viaHTTP.json), Self.canonical(s.cli(["record", "query"], stdin: fixture.text)), name)
        }
        let lookup = WireFixture("records-lookup.request.ticket-delivery")
        let names = (lookup.object["records"] as? [[String: Any]] ?? []).compactMap { $0["recordName"] as? String } + ["seed"]
        let body = Self.canonical(["records": names.map { ["recordName": $0] }, "zoneID": ["zoneName": "PrimarySync"]] as [String: Any])
        // An error item differs only in its uuid, and in the CLI's own ckErrorCode.
        XCTAssertEqual(Self.canonical(Self.normalized(try s.post("records/lookup", body).json, user: "")),
                       Self.canonical(Self.normalized(s.cli(["--zone", "PrimarySync", "record", "get"] + names), user: "")))
        // zones/list as iCloud.com sends it: a POST with {}.
        XCTAssertEqual(Self.canonical(try s.post("zones/list", WireFixture("zones-list.request.photos").text).json), Self.canonical(s.cli(["zone", "list"])))
        // A change token from Apple's servers is no token of this store: refused alike.
        let changes = WireFixture("changes-zone.request.photos-shared-library")
        let viaHTTP = try s.post("changes/zone", changes.text)
        let zone = ((viaHTTP.json as? [String: Any])?["zones"] as? [[String: Any]])?.first
        XCTAssertNotNil(zone?["serverErrorCode"] as? String, viaHTTP.text)
        _ = s.serve.stop()
    }
}
