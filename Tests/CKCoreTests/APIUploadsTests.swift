import CKCrypto
import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore

/// Uploads to `assets/upload` URLs (issue 35, item 5): one upload a URL; the bytes wait in the
/// upload area until a record takes them, and go once an upload URL's lifetime has passed
/// without one — by the API's clock, as the server's sweep and `ck fsck` see it.
final class APIUploadsTests: XCTestCase {
    /// A fresh upload URL's token.
    func uploadToken(_ a: CloudKitAPI, record: String = "r") throws -> String {
        let url = try XCTUnwrap(try a.assetUploadURLs(AssetsUploadRequest(tokens: [.init(recordName: record, recordType: nil, fieldName: "f")]), as: caller())
            .results[0].value?["url"]?.stringValue)
        return String(url.split(separator: "/").last ?? "")
    }

    func save(_ a: CloudKitAPI, _ name: String, _ singleFile: JSONValue) throws -> OperationResult {
        try a.modifyRecords(try ModifyRequest.parse(.object(["operations": [[
            "operationType": "create", "record": ["recordName": .string(name), "recordType": "Doc", "fields": ["f": ["value": singleFile]]],
        ]]])), as: caller()).results[0]
    }

    func files(_ t: TempStore, _ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: t.root + "/" + directory)) ?? []).filter { !$0.hasPrefix(".") && $0 != "lock" && $0 != "used" }.sorted()
    }

    func testAnUploadURLTakesOneUpload() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: "http://127.0.0.1:8484")
        let token = try uploadToken(a)
        _ = try a.receiveAsset(uploadToken: token, bytes: Array("first".utf8))
        XCTAssertThrowsError(try a.receiveAsset(uploadToken: token, bytes: Array("second".utf8))) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationFailed)
            XCTAssertTrue(($0 as? CloudKitError)?.reason.contains("used already") ?? false, "\($0)")
        }
        // So is a second upload while the first is still arriving; one that never arrives whole
        // frees the URL for another try.
        let other = try uploadToken(a, record: "s")
        let waiting = files(t, "assets/uploads")
        XCTAssertEqual(waiting.count, 1, "the first upload's bytes")
        let arriving = try a.beginAssetUpload(uploadToken: other)
        XCTAssertThrowsError(try a.beginAssetUpload(uploadToken: other)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationFailed) }
        try Array("half".utf8).withUnsafeBytes { try arriving.append($0) }
        arriving.abandon()
        XCTAssertEqual(files(t, "assets/uploads"), waiting, "nothing of an abandoned upload stays")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: t.root + "/assets/uploads").filter { $0.hasPrefix(".tmp-") }, [])
        XCTAssertNoThrow(try a.receiveAsset(uploadToken: other, bytes: Array("whole".utf8)))
        // Past its lifetime the mark of a used URL goes too (the URL is refused as expired then).
        now.ms += CloudKitAPI.uploadValidity + 1
        try a.sweepExpiredUploads()
        XCTAssertEqual(files(t, "assets/uploads/used"), [])
        XCTAssertThrowsError(try a.receiveAsset(uploadToken: token, bytes: [1])) { XCTAssertTrue(($0 as? CloudKitError)?.reason.contains("expired") ?? false) }
    }

    func testUploadedBytesWaitForARecordAndGoWhenNoneTakesThemInTime() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: "http://127.0.0.1:8484")
        let taken = try XCTUnwrap(try a.receiveAsset(uploadToken: try uploadToken(a, record: "kept"), bytes: Array("taken by a record".utf8)).document["singleFile"])
        let left = try XCTUnwrap(try a.receiveAsset(uploadToken: try uploadToken(a, record: "never"), bytes: Array("taken by no record".utf8)).document["singleFile"])
        XCTAssertEqual(files(t, "assets/uploads").count, 2, "both wait apart from the asset store")
        XCTAssertFalse(FileManager.default.fileExists(atPath: t.root + "/assets/" + AssetValue.relativePath(checksum: taken["fileChecksum"]!.stringValue!)))

        now.ms += CloudKitAPI.uploadValidity - 60_000
        XCTAssertNotNil(try save(a, "kept", taken).record, "a record takes its upload within the lifetime")
        XCTAssertTrue(FileManager.default.fileExists(atPath: t.root + "/assets/" + AssetValue.relativePath(checksum: taken["fileChecksum"]!.stringValue!)),
                      "moved into the asset store")
        XCTAssertEqual(try a.sweepExpiredUploads(), [], "nothing is past its lifetime yet")

        now.ms += 2 * 60_000
        let swept = try a.sweepExpiredUploads()
        XCTAssertEqual(swept.filter { !$0.contains("/used/") }.count, 1, "\(swept)")
        XCTAssertEqual(files(t, "assets/uploads"), [])
        // Its receipt now attaches nothing, and the kept record still has its bytes.
        let late = try save(a, "late", left)
        XCTAssertEqual(late.error?.code, .badRequest, "\(late)")
        let hex = Hex.string(Array(Data(base64Encoded: taken["fileChecksum"]!.stringValue!)!))
        XCTAssertEqual(try a.servedAsset(hex.prefix(2) + "/" + hex, query: a.assetURLSigner(reader: nil)?.query(hex: hex)).bytes,
                       Array("taken by a record".utf8))
    }

    /// `ck fsck` sweeps what the server would have, reporting it; a dry run only reports.
    func testFsckRemovesUploadsPastTheirLifetime() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: "http://127.0.0.1:8484")
        _ = try a.receiveAsset(uploadToken: try uploadToken(a), bytes: Array("orphan".utf8))
        XCTAssertTrue(try a.fsck(FsckRequest(repair: true)).report.problems.isEmpty, "within the lifetime it is no problem")
        now.ms += CloudKitAPI.uploadValidity + 1
        let dry = try a.fsck(FsckRequest(repair: false)).report
        XCTAssertTrue(dry.problems.contains { $0.path.hasPrefix("assets/uploads/") && !$0.repaired }, "\(dry.problems)")
        XCTAssertEqual(files(t, "assets/uploads").count, 1, "a dry run removes nothing")
        let fixed = try a.fsck(FsckRequest(repair: true)).report
        XCTAssertTrue(fixed.problems.contains { $0.path.hasPrefix("assets/uploads/") && $0.repaired && $0.problem.contains("no record took") }, "\(fixed.problems)")
        XCTAssertEqual(files(t, "assets/uploads"), [])
        XCTAssertTrue(try a.fsck(FsckRequest(repair: true)).report.problems.isEmpty, "a second run finds nothing")
        // What a server killed mid-upload left: swept, whatever its age.
        let torn = t.root + "/assets/uploads/.tmp-2147483646-0badcafe-1"
        XCTAssertTrue(FileManager.default.createFile(atPath: torn, contents: Data("half".utf8)))
        XCTAssertEqual(try a.sweepExpiredUploads(), ["assets/uploads/.tmp-2147483646-0badcafe-1"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: torn))
    }
}
