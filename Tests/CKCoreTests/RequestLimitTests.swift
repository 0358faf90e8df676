import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore

/// CloudKit's limits on what one request and one record hold: 200 operations (or lookups) a
/// Web Services request, and 1 MB of data a record, counted in bytes (a BYTES value by its
/// decoded bytes, not its base64), assets excluded.
final class RequestLimitTests: XCTestCase {
    let me = caller()

    func body(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    func modifyBody(_ n: Int) -> String {
        "{\"operations\":[" + (0..<n).map { "{\"operationType\":\"create\",\"record\":{\"recordName\":\"r\($0)\",\"recordType\":\"Item\"}}" }.joined(separator: ",") + "]}"
    }

    func lookupBody(_ n: Int) -> String {
        "{\"records\":[" + (0..<n).map { "{\"recordName\":\"r\($0)\"}" }.joined(separator: ",") + "]}"
    }

    func assertTooMany(_ e: Error, _ n: Int, file: StaticString = #filePath, line: UInt = #line) {
        let c = e as? CloudKitError
        XCTAssertEqual(c?.code, .limitExceeded, "\(e)", file: file, line: line)
        XCTAssertEqual(c?.reason, "Your request contains \(n) items which is more than the maximum number of items in a single request (200)", file: file, line: line)
    }

    func testTwoHundredOperationsAreTheMostOneRequestHolds() throws {
        let t = TempStore()
        let a = api(t.root)
        let full = try a.modifyRecords(try ModifyRequest.parse(try body(modifyBody(200))), as: me)
        XCTAssertEqual(full.results.count, 200)
        XCTAssertTrue(full.failures.isEmpty)
        let before = t.snapshot()
        XCTAssertThrowsError(try ModifyRequest.parse(try body(modifyBody(201)))) { assertTooMany($0, 201) }
        // The API refuses it however it is built, before anything is written.
        let ops = (0..<201).map { op(.create, "x\($0)") }
        XCTAssertThrowsError(try a.modifyRecords(ModifyRequest(operations: ops), as: me)) { assertTooMany($0, 201) }
        XCTAssertEqual(t.snapshot(), before)
    }

    func testTwoHundredLookupsAreTheMostOneRequestHolds() throws {
        XCTAssertEqual(try LookupRecordsRequest(json: try body(lookupBody(200))).recordNames.count, 200)
        XCTAssertThrowsError(try LookupRecordsRequest(json: try body(lookupBody(201)))) { assertTooMany($0, 201) }
    }

    /// Every other list of items a request holds is refused past 200 in the same words.
    func testTwoHundredZonesOrSubscriptionsAreTheMostOneLookupHolds() throws {
        let zones = { (n: Int) in "{\"zones\":[" + (0..<n).map { "{\"zoneName\":\"z\($0)\"}" }.joined(separator: ",") + "]}" }
        let subscriptions = { (n: Int) in "{\"subscriptions\":[" + (0..<n).map { "{\"subscriptionID\":\"s\($0)\"}" }.joined(separator: ",") + "]}" }
        XCTAssertNoThrow(try ZonesLookupRequest(json: try body(zones(200))))
        XCTAssertThrowsError(try ZonesLookupRequest(json: try body(zones(201)))) { assertTooMany($0, 201) }
        XCTAssertNoThrow(try SubscriptionsLookupRequest(json: try body(subscriptions(200))))
        XCTAssertThrowsError(try SubscriptionsLookupRequest(json: try body(subscriptions(201)))) { assertTooMany($0, 201) }
    }

    /// ck's own batches (a delete of many names) stay within the limit.
    func testADeleteOfManyNamesGoesByTwoHundreds() throws {
        let t = TempStore()
        let a = api(t.root)
        for chunk in stride(from: 0, to: 450, by: 150) {
            let ops = (chunk..<chunk + 150).map { op(.create, "n\($0)") }
            XCTAssertTrue(try a.modifyRecords(ModifyRequest(operations: ops), as: me).failures.isEmpty)
        }
        let gone = try a.deleteRecords(DeleteRecordsRequest(recordNames: (0..<450).map { "n\($0)" }), as: me)
        XCTAssertEqual(gone.results.count, 450)
        XCTAssertTrue(gone.failures.isEmpty)
    }

    /// An import writes batches of at most 200 records, and takes no larger batch size.
    func testAnImportGoesByTwoHundreds() throws {
        let t = TempStore()
        let a = api(t.root)
        let lines = (0..<450).map { "{\"recordName\":\"i\($0)\",\"recordType\":\"Item\"}" }.joined(separator: "\n")
        var batches: [Int] = []
        let summary = try a.importSession(ImportRequest(input: Array(lines.utf8)), as: me).run { batches.append($0.results.count) }
        XCTAssertEqual(batches, [200, 200, 50])
        XCTAssertEqual(summary.total, 450)
        XCTAssertThrowsError(try a.importSession(ImportRequest(input: Array(lines.utf8), batchSize: 201), as: me))
    }

    // MARK: 1 MB a record, in bytes

    /// A record of one BYTES field of `n` bytes, and its name and type (`b`, `Blob`, `big`).
    func blob(_ n: Int) -> RecordOperation {
        let bytes = [UInt8](repeating: 0xA5, count: n)
        return RecordOperation(type: .create, recordName: "big", recordType: "Blob",
                               fields: ["b": RecordField(type: FieldType(.bytes), value: .string(Data(bytes).base64EncodedString()))])
    }

    func testABytesFieldCountsItsBytesNotItsBase64() throws {
        let t = TempStore()
        let a = api(t.root)
        // 800,000 bytes are 1,066,668 characters of base64, and well under 1 MB of data.
        let r = try a.modifyRecords(ModifyRequest(operations: [blob(800_000)]), as: me)
        XCTAssertNil(r.failures.first, "\(r.failures)")
    }

    func testARecordAtTheLimitIsSavedAndOneByteMoreIsRefused() throws {
        let t = TempStore()
        let a = api(t.root)
        // The name (3), the type (4) and the field's name (1) count with the value.
        let most = Limits.recordBytes - 3 - 4 - 1
        XCTAssertNil(try a.modifyRecords(ModifyRequest(operations: [blob(most)]), as: me).failures.first, "exactly 1 MB is saved")
        var over = blob(most + 1)
        over.recordName = "bjg"
        let r = try a.modifyRecords(ModifyRequest(operations: [over]), as: me)
        XCTAssertEqual(r.failures.first?.code, .limitExceeded)
        XCTAssertEqual(r.failures.first?.recordName, "bjg")
        XCTAssertTrue(r.failures.first?.reason.contains("record too large") ?? false, "\(r.failures)")
        // ck import checks the same before it writes anything.
        XCTAssertThrowsError(try blob(most + 1).checkLimits())
        XCTAssertNoThrow(try blob(most).checkLimits())
    }

    func testStringsCountTheirUTF8AndAssetsDoNotCount() throws {
        let t = TempStore()
        let a = api(t.root)
        // 'é' is 2 bytes: 500,000 of them are 1,000,000 bytes of data, over the limit.
        let text = String(repeating: "é", count: 500_000)
        let r = try a.modifyRecords(ModifyRequest(operations: [op(.create, "s", type: "T", ["t": .string(text)])]), as: me)
        XCTAssertEqual(r.failures.first?.code, .limitExceeded)
        let fits = String(repeating: "é", count: 499_000)
        XCTAssertNil(try a.modifyRecords(ModifyRequest(operations: [op(.create, "s", type: "T", ["t": .string(fits)])]), as: me).failures.first)
    }
}
