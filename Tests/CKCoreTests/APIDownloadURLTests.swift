import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// The `downloadURL`s `ck serve` answers with are capabilities (issue 35): signed for their
/// asset and their reader with the data directory's secret, good for 30 minutes; anything else
/// is the one NOT_FOUND, whether the bytes are stored or not. The CLI keeps `file://` URLs.
final class APIDownloadURLTests: XCTestCase {
    static let server = "http://127.0.0.1:8484"

    /// Saves a record holding `bytes` in field `f` (the bytes brought by an upload), and answers
    /// the downloadURL the caller reads it with.
    func saveAsset(_ a: CloudKitAPI, _ bytes: [UInt8], name: String, scope: DatabaseScope, as user: Caller.User = .device) throws -> String {
        let url = try XCTUnwrap(try a.assetUploadURLs(AssetsUploadRequest(tokens: [.init(recordName: name, recordType: nil, fieldName: "f")]),
                                                      as: caller(scope, user)).results[0].value?["url"]?.stringValue)
        let up = try XCTUnwrap(try a.receiveAsset(uploadToken: String(url.split(separator: "/").last!), bytes: bytes).document["singleFile"])
        let saved = try a.modifyRecords(try ModifyRequest.parse(.object(["operations": [[
            "operationType": "create", "record": ["recordName": .string(name), "recordType": "Doc", "fields": ["f": ["value": up]]],
        ]]])), as: caller(scope, user))
        XCTAssertNil(saved.results[0].error)
        return try downloadURL(a, name, scope: scope, as: user)
    }

    func downloadURL(_ a: CloudKitAPI, _ name: String, scope: DatabaseScope, as user: Caller.User = .device) throws -> String {
        let read = try a.lookupRecords(LookupRecordsRequest(recordNames: [name]), as: caller(scope, user))
        return try XCTUnwrap(read.results[0].record.map { $0.response(read.style) }?["fields"]?["f"]?["value"]?["downloadURL"]?.stringValue)
    }

    /// The path after `/assets/` and the query of a downloadURL.
    func parts(_ url: String) -> (path: String, query: String?) {
        let rest = String(url.dropFirst((Self.server + "/assets/").count))
        let split = rest.split(separator: "?", maxSplits: 1)
        return (String(split[0]), split.count == 2 ? String(split[1]) : nil)
    }

    func refusal(_ a: CloudKitAPI, _ path: String, _ query: String?) -> CloudKitError? {
        do { _ = try a.servedAsset(path, query: query); return nil } catch { return error as? CloudKitError }
    }

    func testADownloadURLIsSignedForItsReaderAndServesTheBytes() throws {
        let t = TempStore(), now = Now()
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        try t.store.accounts.signIn(appleID: "alice@example.com", givenName: nil, familyName: nil, phone: nil)
        let a = api(t.root, now, server: Self.server)
        let bytes = Array("a 4-digit PIN: 0000".utf8)
        let alices = try saveAsset(a, bytes, name: "doc", scope: .public)
        let (path, query) = parts(alices)
        let q = try XCTUnwrap(query, alices)
        let alice = try XCTUnwrap(try t.store.accounts.user(appleID: "alice@example.com")).userRecordName
        XCTAssertTrue(q.contains("r=\(alice)") && q.contains("e=") && q.contains("&s="), q)
        let served = try a.servedAsset(path, query: q)
        XCTAssertEqual(served.bytes, bytes)
        XCTAssertTrue((30 * 60...31 * 60).contains(served.maxAgeSeconds), "good for 30 minutes (to the next whole minute): \(served.maxAgeSeconds)")

        // bob reads the same record: a URL of his own, serving the same bytes.
        let bobs = try downloadURL(a, "doc", scope: .public, as: .appleID("bob@example.com"))
        XCTAssertNotEqual(bobs, alices)
        XCTAssertEqual(try a.servedAsset(parts(bobs).path, query: parts(bobs).query).bytes, bytes)
        // Nobody (an API token alone) reads the public database: a URL without a reader.
        let world = try downloadURL(a, "doc", scope: .public, as: .nobody)
        XCTAssertFalse(world.contains("r="), world)
        XCTAssertEqual(try a.servedAsset(parts(world).path, query: parts(world).query).bytes, bytes)
        // Answers within the same minute give the same URL (a browser's cache serves it again).
        now.ms += 10
        XCTAssertEqual(try downloadURL(a, "doc", scope: .public), alices)

        // The CLI's URLs stay file:// URLs into the data directory, unsigned.
        let cli = try downloadURL(api(t.root, now), "doc", scope: .public)
        XCTAssertTrue(cli.hasPrefix("file://") && !cli.contains("?"), cli)
    }

    func testAnUnsignedTamperedOrExpiredURLIsRefusedAlikeWhetherTheAssetExistsOrNot() throws {
        let t = TempStore(), now = Now()
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        try t.store.accounts.signIn(appleID: "alice@example.com", givenName: nil, familyName: nil, phone: nil)
        let a = api(t.root, now, server: Self.server)
        let url = try saveAsset(a, Array("private bytes".utf8), name: "secret", scope: .private)
        let (path, query) = parts(url)
        let q = try XCTUnwrap(query)
        let bob = try XCTUnwrap(try t.store.accounts.user(appleID: "bob@example.com")).userRecordName
        let alice = try XCTUnwrap(try t.store.accounts.user(appleID: "alice@example.com")).userRecordName
        let nowhere = String(repeating: "0", count: 64)
        var flipped = Array(q)
        flipped[flipped.count - 3] = flipped[flipped.count - 3] == "A" ? "B" : "A"
        let e = q.split(separator: "&").first { $0.hasPrefix("e=") }!.dropFirst(2)
        let cases: [(String, String?, String)] = [
            (path, nil, "no signature: the content hash alone"),
            (path, "", "an empty query"),
            (path, String(flipped), "a signature changed"),
            (path, q.replacingOccurrences(of: "r=\(alice)", with: "r=\(bob)"), "another reader"),
            (path, q.replacingOccurrences(of: "e=\(e)", with: "e=\(Int64(e)! + 3600)"), "a later expiry"),
            (path, q + "&x=1", "a key more"),
            ("00/" + nowhere, q, "another asset's path with this signature"),
            ("00/" + nowhere, nil, "an asset that does not exist"),
            ("..%2F/etc", nil, "not an asset path"),
        ]
        var reasons = Set<String>()
        for (p, query, what) in cases {
            let e = try XCTUnwrap(refusal(a, p, query), what)
            XCTAssertEqual(e.code, .notFound, what)
            XCTAssertEqual(e.code.httpStatus, 404, what)
            reasons.insert(e.reason)
        }
        XCTAssertEqual(reasons.count, 1, "one answer for all, so none tells whether an asset exists: \(reasons)")
        // Another data directory's signature is not this one's.
        let other = TempStore()
        XCTAssertEqual(refusal(api(other.root, now, server: Self.server), path, q)?.code, .notFound)

        // Still good just before its expiry, refused from then on, saying so (the URL was a real one).
        now.ms = Int64(e)! * 1000 - 1
        XCTAssertNoThrow(try a.servedAsset(path, query: q))
        now.ms += 1
        let expired = try XCTUnwrap(refusal(a, path, q))
        XCTAssertEqual(expired.code, .notFound)
        XCTAssertTrue(expired.reason.contains("expired"), expired.reason)
    }

    /// CloudKit JS saves a record back as it fetched it: its own (signed) downloadURL keeps the
    /// asset; the signature is not what a save checks (the record must hold the asset).
    func testARecordSavedBackWithItsSignedDownloadURLKeepsItsAsset() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: Self.server)
        let bytes = Array("kept".utf8)
        let url = try saveAsset(a, bytes, name: "doc", scope: .private)
        var web = caller()
        web.isWebClient = true
        let back = try a.modifyRecords(try ModifyRequest.parse(.object(["operations": [[
            "operationType": "forceUpdate",
            "record": ["recordName": "doc", "recordType": "Doc", "fields": [
                "f": ["value": ["fileChecksum": .string(AssetValue.checksum(of: bytes)), "size": .int(Int64(bytes.count)), "downloadURL": .string(url)]],
            ]],
        ]]])), as: web)
        XCTAssertNil(back.results[0].error, "\(String(describing: back.results[0].error))")
        let again = try downloadURL(a, "doc", scope: .private)
        XCTAssertEqual(try a.servedAsset(parts(again).path, query: parts(again).query).bytes, bytes)
    }
}
