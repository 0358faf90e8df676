import CKCrypto
import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// `assets/upload|rereference` and `tokens/create|register` with the web courier's long-poll,
/// in-process: the bodies CloudKit JS sends (cloudkit-js.md §4), the URLs the API hands out and
/// takes back, and what a hostile or stale token gets.
final class APIAssetsTokensTests: XCTestCase {
    static let container = "iCloud.com.example.test"
    static let server = "http://127.0.0.1:8484"

    func body(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    /// The token an upload URL carries.
    func token(_ url: String?) -> String { String(url?.split(separator: "/").last ?? "") }

    // MARK: assets

    func testAnUploadedAssetIsSavedWithItsReceiptAndServedAsTheRecordsField() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: Self.server)
        let req = try AssetsUploadRequest(json: try body("""
            {"tokens":[{"fieldName":"file","recordType":"CkjsItem","recordName":"ckjs-asset"},{"fieldName":"thumb","recordType":"CkjsItem"}],
             "zoneID":{"zoneName":"_defaultZone"}}
            """))
        let urls = try a.assetUploadURLs(req, as: caller())
        XCTAssertEqual(urls.results.count, 2)
        XCTAssertEqual(urls.results[0].value?["recordName"]?.stringValue, "ckjs-asset")
        XCTAssertEqual(urls.results[0].value?["fieldName"]?.stringValue, "file")
        XCTAssertEqual(urls.results[1].value?["fieldName"]?.stringValue, "thumb", "matched to the request by index")
        let url = try XCTUnwrap(urls.results[0].value?["url"]?.stringValue)
        XCTAssertTrue(url.hasPrefix(Self.server + "/upload/ck1u."), url)

        let bytes = Array("hello, asset".utf8)
        let up = try a.receiveAsset(uploadToken: token(url), bytes: bytes).document["singleFile"]
        XCTAssertEqual(up?["fileChecksum"]?.stringValue, AssetValue.checksum(of: bytes))
        XCTAssertEqual(up?["size"]?.int64Value, Int64(bytes.count))
        XCTAssertTrue(up?["receipt"]?.stringValue?.hasPrefix("ck1r.") ?? false)
        XCTAssertNotNil(up?["wrappingKey"], "a private asset's keys, as every response shows them")
        XCTAssertNotNil(up?["referenceChecksum"])

        // records/modify takes the upload's answer verbatim as the field value (receipt and all).
        let saved = try a.modifyRecords(try ModifyRequest.parse(.object(["operations": [[
            "operationType": "create",
            "record": ["recordName": "ckjs-asset", "recordType": "CkjsItem", "fields": ["file": ["value": try XCTUnwrap(up)]]],
        ]]])), as: caller())
        let value = saved.results[0].record?.fields["file"]?.value
        XCTAssertEqual(value?["fileChecksum"]?.stringValue, AssetValue.checksum(of: bytes))
        XCTAssertNil(value?["receipt"], "the receipt is spent, not kept")
        // Its downloadURL is on the server, and rereference gives the same asset back.
        let again = try a.rereferenceAssets(AssetsRereferenceRequest(assets: [.init(recordName: "ckjs-asset", fieldName: "file")]), as: caller())
        let asset = try XCTUnwrap(again.results[0].value)
        XCTAssertEqual(asset["recordName"]?.stringValue, "ckjs-asset")
        XCTAssertEqual(asset["fileChecksum"]?.stringValue, AssetValue.checksum(of: bytes))
        XCTAssertTrue(asset["downloadURL"]?.stringValue?.hasPrefix(Self.server + "/assets/") ?? false, "\(asset)")
    }

    /// A record fetched over HTTP and saved back as it came carries ck serve's own downloadURL:
    /// taken when the bytes are here; any other http:// URL is refused, naming it.
    func testARecordSavedBackWithCKServesDownloadURLKeepsItsAsset() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: Self.server)
        let url = try XCTUnwrap(try a.assetUploadURLs(AssetsUploadRequest(tokens: [.init(recordName: "r", recordType: nil, fieldName: "f")]), as: caller()).results[0].value?["url"]?.stringValue)
        _ = try a.receiveAsset(uploadToken: token(url), bytes: Array("bytes".utf8))
        let sum = AssetValue.checksum(of: Array("bytes".utf8))
        let hex = Hex.string(Array(Data(base64Encoded: sum)!))
        func save(_ name: String, _ downloadURL: String) throws -> OperationResult {
            try a.modifyRecords(try ModifyRequest.parse(.object(["operations": [[
                "operationType": "create",
                "record": ["recordName": .string(name), "recordType": "Doc", "fields": ["f": ["value": ["fileChecksum": .string(sum), "size": 5, "downloadURL": .string(downloadURL)]]]],
            ]]])), as: caller()).results[0]
        }
        XCTAssertNotNil(try save("back", Self.server + "/assets/\(hex.prefix(2))/\(hex)").record)
        XCTAssertEqual(try save("elsewhere", "http://evil.example/assets/\(hex.prefix(2))/\(hex)").error?.code, .badRequest)
        let other = AssetValue.checksum(of: Array("never uploaded".utf8))
        let otherHex = Hex.string(Array(Data(base64Encoded: other)!))
        let missing = try a.modifyRecords(try ModifyRequest.parse(.object(["operations": [[
            "operationType": "create",
            "record": ["recordName": "missing", "recordType": "Doc", "fields": ["f": ["value": ["fileChecksum": .string(other), "size": 14,
                       "downloadURL": .string("http://127.0.0.1:9/assets/\(otherHex.prefix(2))/\(otherHex)")]]]],
        ]]])), as: caller()).results[0]
        XCTAssertTrue(missing.error?.reason.contains("no asset with checksum") ?? false, "\(String(describing: missing.error))")
    }

    func testUploadURLsAreRefusedWhenForgedExpiredOrAskedOutsideHTTP() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: Self.server)
        let url = try XCTUnwrap(try a.assetUploadURLs(AssetsUploadRequest(tokens: [.init(recordName: nil, recordType: nil, fieldName: "f")]), as: caller())
            .results[0].value?["url"]?.stringValue)
        let good = token(url)
        let before = t.snapshot()
        var forged = Array(good.utf8)
        forged[8] = forged[8] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        for bad in [String(decoding: forged, as: UTF8.self), "ck1u.e30.AAAA", "", "../../etc/passwd", String(repeating: "x", count: 100_000)] {
            XCTAssertThrowsError(try a.receiveAsset(uploadToken: bad, bytes: [1, 2, 3]), bad.prefix(40).description) {
                XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationFailed)
            }
        }
        // Another data directory's token is not this one's.
        let other = TempStore()
        XCTAssertThrowsError(try api(other.root, now, server: Self.server).receiveAsset(uploadToken: good, bytes: [1])) { XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationFailed) }
        now.ms += CloudKitAPI.uploadValidity + 1
        XCTAssertThrowsError(try a.receiveAsset(uploadToken: good, bytes: [1])) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationFailed)
            XCTAssertTrue(($0 as? CloudKitError)?.reason.contains("expired") ?? false)
        }
        XCTAssertEqual(t.snapshot(), before, "a refused upload stores nothing")
        // The CLI has no URL to hand out.
        XCTAssertThrowsError(try api(t.root, now).assetUploadURLs(AssetsUploadRequest(tokens: [.init(recordName: nil, recordType: nil, fieldName: "f")]), as: caller())) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest)
        }
        // Uploading writes: a signed-out caller may not ask.
        XCTAssertThrowsError(try a.assetUploadURLs(AssetsUploadRequest(tokens: [.init(recordName: nil, recordType: nil, fieldName: "f")]), as: caller(.private, .nobody)))
    }

    func testBadAssetBodiesNameTheProblem() throws {
        let bad: [(String, String)] = [
            (#"{"tokens": []}"#, "non-empty 'tokens'"),
            (#"{"tokens": [{"recordName": "r"}]}"#, "'fieldName'"),
            (#"{"tokens": [{"fieldName": 3}]}"#, "'fieldName'"),
            (#"{"tokens": [{"fieldName": "f"}], "extra": 1}"#, "extra"),
        ]
        for (text, words) in bad {
            XCTAssertThrowsError(try AssetsUploadRequest(json: try body(text)), text) { XCTAssertTrue("\($0)".contains(words), "\(text): \($0)") }
        }
        XCTAssertThrowsError(try AssetsRereferenceRequest(json: try body(#"{"assets": [{"recordName": "r"}]}"#))) { XCTAssertTrue("\($0)".contains("fieldName")) }
        let many = "{\"tokens\": [" + Array(repeating: #"{"fieldName": "f"}"#, count: Limits.resultsPerPage + 1).joined(separator: ",") + "]}"
        XCTAssertThrowsError(try AssetsUploadRequest(json: try body(many))) { XCTAssertEqual(($0 as? CloudKitError)?.code, .limitExceeded) }
    }

    /// A record the caller may not read is NOT_FOUND, in the words a missing one gets; a field
    /// that is no asset is a BAD_REQUEST for that item only.
    func testRereferenceAnswersPerAssetThroughTheGate() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: Self.server)
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "plain", ["t": "text"])]), as: caller())
        let r = try a.rereferenceAssets(AssetsRereferenceRequest(assets: [.init(recordName: "plain", fieldName: "f"), .init(recordName: "missing", fieldName: "f")]), as: caller())
        XCTAssertEqual(r.results[0].error?.code, .badRequest)
        XCTAssertEqual(r.results[1].error?.code, .notFound)
        XCTAssertEqual(r.results[1].error?.recordName, "missing")
    }

    // MARK: web pushes

    func testAWebClientLongPollsTheNotificationsOfItsUserAsCloudKitJSParsesThem() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: Self.server)
        _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: caller())
        let sub = try Subscription(json: try body("""
            {"subscriptionID": "items", "subscriptionType": "query", "zoneID": {"zoneName": "Lists"}, "query": {"recordType": "Item"},
             "firesOn": ["create", "update", "delete"], "notificationInfo": {"alertBody": "changed", "shouldSendContentAvailable": true}}
            """))
        _ = try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.create(sub), .create(Subscription(subscriptionID: "zone", kind: .zone, zoneName: "Lists"))]), as: caller())

        let created = try a.createPushToken(try TokensCreateRequest(json: try body(#"{"apnsEnvironment": "development", "clientId": "c-1"}"#)), as: caller())
        let apns = try XCTUnwrap(created.document["apnsToken"]?.stringValue)
        XCTAssertEqual(created.document["webcourierURL"]?.stringValue, Self.server + "/webcourier/\(Self.container)/development/" + apns)
        XCTAssertNil(try a.nextWebPush(container: Self.container, environment: .development, apnsToken: apns), "nothing yet")

        // A change from another device (the CLI's, say) reaches the web client.
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "todo-1")], zoneName: "Lists"), as: caller(device: "phone"))
        // A server publishes a commit's notifications after its answer; a poll waits for them.
        a.finishPublishing()
        let push = try XCTUnwrap(try a.nextWebPush(container: Self.container, environment: .development, apnsToken: apns))
        let ck = push.body.document["ck"]
        XCTAssertEqual(ck?["cid"]?.stringValue, Self.container)
        XCTAssertNotNil(ck?["nid"]?.stringValue)
        XCTAssertEqual(ck?["qry"]?["dbs"]?.int64Value, 1)
        XCTAssertEqual(ck?["qry"]?["fo"]?.int64Value, 1, "recordCreated")
        XCTAssertEqual(ck?["qry"]?["rid"]?.stringValue, "todo-1")
        XCTAssertEqual(ck?["qry"]?["sid"]?.stringValue, "items")
        XCTAssertEqual(ck?["qry"]?["zid"]?.stringValue, "Lists")
        XCTAssertNotNil(ck?["qry"]?["zoid"]?.stringValue)
        XCTAssertEqual(push.body.document["aps"]?["alert"]?["body"]?.stringValue, "changed")
        XCTAssertEqual(push.body.document["aps"]?["content-available"]?.int64Value, 1)
        // Unacknowledged (the answer never reached the client): the same one again.
        let again = try XCTUnwrap(try a.nextWebPush(container: Self.container, environment: .development, apnsToken: apns))
        XCTAssertEqual(again.body.document["ck"]?["nid"], ck?["nid"])
        try a.acknowledgeWebPush(push, container: Self.container, environment: .development)
        let zone = try XCTUnwrap(try a.nextWebPush(container: Self.container, environment: .development, apnsToken: apns))
        XCTAssertEqual(zone.body.document["ck"]?["fet"]?["sid"]?.stringValue, "zone")
        XCTAssertEqual(zone.body.document["ck"]?["fet"]?["zid"]?.stringValue, "Lists")
        try a.acknowledgeWebPush(zone, container: Self.container, environment: .development)
        XCTAssertNil(try a.nextWebPush(container: Self.container, environment: .development, apnsToken: apns))

        // A deletion: fo 3.
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.forceDelete, "todo-1", type: nil)], zoneName: "Lists"), as: caller(device: "phone"))
        a.finishPublishing()
        let deleted = try XCTUnwrap(try a.nextWebPush(container: Self.container, environment: .development, apnsToken: apns))
        XCTAssertEqual(deleted.body.document["ck"]?["qry"]?["fo"]?.int64Value, 3)
    }

    /// A web client's writes are recorded as its device (`web-<clientId>`, what ck serve makes
    /// of CloudKit JS's clientId); its push token delivers to that same device, so its own
    /// change does not come back on its long-poll, while another device's does — also for a
    /// token bound later by tokens/register. A client that names none keeps a device of its own.
    func testAWebClientIsNotPushedItsOwnChanges() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: Self.server)
        _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: caller())
        let items = try Subscription(json: try body(#"{"subscriptionID": "items", "subscriptionType": "query", "zoneID": {"zoneName": "Lists"}, "query": {"recordType": "Item"}, "firesOn": ["create"]}"#))
        _ = try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.create(items)]), as: caller())
        func web(_ device: String, _ user: Caller.User = .device) -> Caller {
            var c = caller(.private, user, device: device)
            c.isWebClient = true
            return c
        }
        let pageA = web("web-page-a"), pageB = web("web-page-b")
        let apns = try XCTUnwrap(try a.createPushToken(try TokensCreateRequest(json: try body(#"{"apnsEnvironment": "development", "clientId": "page-a"}"#)), as: pageA).document["apnsToken"]?.stringValue)
        // Page b's token is made before sign-in and bound by tokens/register.
        let bound = try XCTUnwrap(try a.createPushToken(TokensCreateRequest(), as: web("web-page-b", .nobody)).document["apnsToken"]?.stringValue)
        _ = try a.registerPushToken(TokensRegisterRequest(apnsToken: bound), as: pageB)
        let unnamed = try XCTUnwrap(try a.createPushToken(TokensCreateRequest(), as: web(Caller.unnamedWebClient)).document["apnsToken"]?.stringValue)
        /// The record of the next push of a token, acknowledged; nil when none waits.
        func next(_ token: String) throws -> String? {
            guard let p = try a.nextWebPush(container: Self.container, environment: .development, apnsToken: token) else { return nil }
            try a.acknowledgeWebPush(p, container: Self.container, environment: .development)
            return p.body.document["ck"]?["qry"]?["rid"]?.stringValue
        }

        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "from-a")], zoneName: "Lists"), as: pageA)
        a.finishPublishing()
        XCTAssertNil(try next(apns), "page a's own change")
        XCTAssertEqual(try next(bound), "from-a")
        XCTAssertEqual(try next(unnamed), "from-a")
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "from-b")], zoneName: "Lists"), as: pageB)
        a.finishPublishing()
        XCTAssertNil(try next(bound), "page b's own change")
        XCTAssertEqual(try next(apns), "from-b")
        XCTAssertEqual(try next(unnamed), "from-b")
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "from-phone")], zoneName: "Lists"), as: caller(device: "phone"))
        a.finishPublishing()
        for token in [apns, bound, unnamed] { XCTAssertEqual(try next(token), "from-phone") }
    }

    /// Each load of a CloudKit JS page that registers for notifications is a new web client (its
    /// configure() makes a new clientId), and each stayed an inbox of its user for good: every
    /// change the user's subscriptions fired on was written to all of them (2,000 page loads, or
    /// 11 s of a script with a session, made every save 4 to 6 s). A user keeps the inboxes of
    /// the newest `webInboxesPerUser` web clients; an older one that polls again is made anew.
    func testAUserKeepsTheInboxesOfTheirNewestWebClientsOnly() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: Self.server)
        _ = try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.create(Subscription(subscriptionID: "db", kind: .database))]), as: caller())
        let keep = CloudKitAPI.webInboxesPerUser
        var tokens: [String] = []
        for i in 0..<(keep + 5) {
            now.ms += 1000
            var page = caller(.private, .device, device: "web-page-\(i)")
            page.isWebClient = true
            tokens.append(try XCTUnwrap(try a.createPushToken(TokensCreateRequest(), as: page).document["apnsToken"]?.stringValue))
        }
        let alice = try XCTUnwrap(try t.store.accounts.device().appleID.flatMap { try t.store.accounts.user(appleID: $0) })
        let root = t.store.paths.notifications(Self.container, .development, user: alice.userRecordName)
        let inboxes = { Set(try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.hasPrefix("web-") }) }
        XCTAssertEqual(try inboxes().count, keep)
        let kept = try inboxes()
        XCTAssertTrue(kept.isDisjoint(with: (0..<5).map { "web-page-\($0)" }), "the oldest pages' inboxes are kept: \(kept.sorted())")
        _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: caller(device: "phone"))
        XCTAssertNotNil(try a.nextWebPush(container: Self.container, environment: .development, apnsToken: tokens.last!), "the newest page is notified")
        // The oldest page polls again: its inbox is made anew, as the newest, and another goes.
        now.ms += 1000
        _ = try a.watchWebPush(container: Self.container, environment: .development, apnsToken: tokens[0])
        XCTAssertTrue(try inboxes().contains("web-page-0"))
        XCTAssertFalse(try inboxes().contains("web-page-5"))
        XCTAssertEqual(try inboxes().count, keep)
    }

    /// A long-poll of a token not yet bound watches the registrations from before it reads the
    /// token: a binding in between wakes it (else it waited out its time for nothing).
    func testABindingWhileAPollReadsItsTokenWakesThePoll() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: Self.server)
        let apns = try XCTUnwrap(try a.createPushToken(TokensCreateRequest(), as: caller(.private, .nobody)).document["apnsToken"]?.stringValue)
        let (client, watch) = try a.watchWebPush(container: Self.container, environment: .development, apnsToken: apns, afterReadingToken: {
            _ = try a.registerPushToken(try TokensRegisterRequest(json: try body(#"{"apnsEnvironment": "development", "apnsToken": "\#(apns)", "clientId": "c"}"#)), as: caller())
        })
        XCTAssertFalse(client.isBound, "read before the binding")
        var fd = pollfd(fd: watch.descriptor, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&fd, 1, 2000), 1, "the binding woke the poll")
    }

    func testPushTokensAreBoundToTheirUserAndUnknownOnesAreRefused() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now, server: Self.server)
        // Made by nobody (a web page before sign-in): no user, so no notifications; register binds it.
        let made = try a.createPushToken(TokensCreateRequest(), as: caller(.private, .nobody))
        let apns = try XCTUnwrap(made.document["apnsToken"]?.stringValue)
        XCTAssertNil(try a.nextWebPush(container: Self.container, environment: .development, apnsToken: apns))
        XCTAssertThrowsError(try a.registerPushToken(TokensRegisterRequest(apnsToken: apns), as: caller(.private, .nobody)))
        _ = try a.registerPushToken(try TokensRegisterRequest(json: try body(#"{"apnsEnvironment": "development", "apnsToken": "\#(apns)", "clientId": "c"}"#)), as: caller())
        _ = try a.modifySubscriptions(SubscriptionsModifyRequest(operations: [.create(Subscription(subscriptionID: "db", kind: .database))]), as: caller())
        _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: caller(device: "phone"))
        let push = try XCTUnwrap(try a.nextWebPush(container: Self.container, environment: .development, apnsToken: apns))
        XCTAssertEqual(push.body.document["ck"]?["met"]?["sid"]?.stringValue, "db")

        let before = t.snapshot()
        for bad in ["0123456789abcdef0123456789abcdef", "../../accounts", "", String(repeating: "f", count: 33)] {
            XCTAssertThrowsError(try a.nextWebPush(container: Self.container, environment: .development, apnsToken: bad)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .notFound) }
            XCTAssertThrowsError(try a.registerPushToken(TokensRegisterRequest(apnsToken: bad), as: caller())) { XCTAssertEqual(($0 as? CloudKitError)?.code, .notFound) }
        }
        XCTAssertThrowsError(try TokensCreateRequest(json: try body(#"{"apnsEnvironment": "staging"}"#))) { XCTAssertTrue("\($0)".contains("development or production")) }
        XCTAssertThrowsError(try TokensRegisterRequest(json: try body(#"{"apnsEnvironment": "development"}"#))) { XCTAssertTrue("\($0)".contains("apnsToken")) }
        XCTAssertEqual(t.snapshot(), before, "refusals change nothing")
    }
}
