import CKCore
import CKCrypto
import CKJSON
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKRemote

/// Clone, pull and push between two data directories through a ck serve on loopback, each
/// ending in an exact comparison of the two stores' records.
final class RoundTripTests: XCTestCase {
    func items(_ n: Int, prefix: String = "item") -> [(String, [String: JSONValue])] {
        (0..<n).map { i in (String(format: "%@-%04d", prefix, i), ["title": .string("\(prefix) \(i)"), "n": .int(Int64(i))]) }
    }

    func testACloneOfPrivateZonesPagesThroughTheFeedsAndMatches() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.createZone(f.serverAPI, f.serverCaller(), "Other")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", items(450))
        try f.save(f.serverAPI, f.serverCaller(), zone: "Other", items(3, prefix: "o"))
        let r = try f.pull()
        XCTAssertEqual(r.fetch.records, 453)
        XCTAssertGreaterThanOrEqual(r.fetch.pages, 4, "450 records come in pages of 200")
        XCTAssertEqual(r.conflicts, 0)
        try f.assertSame(zone: "Lists")
        try f.assertSame(zone: "Other")
        // Nothing changed: one request (changes/database), nothing fetched.
        let again = try f.pull()
        XCTAssertEqual(again.fetch.requests, 1)
        XCTAssertEqual(again.fetch.records, 0)
    }

    func testAPullTakesRemoteChangesAndDeletionsAndAPushSendsLocalOnes() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", items(10))
        try f.pull()
        // Remote: change item-0001, delete item-0002. Local: change item-0005, delete item-0006, add new-1.
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", [("item-0001", ["title": "remote edit", "n": 1])])
        try f.delete(f.serverAPI, f.serverCaller(), zone: "Lists", ["item-0002"])
        try f.save(f.localAPI, f.localCaller(), zone: "Lists", [("item-0005", ["title": "local edit", "n": 5]), ("new-1", ["title": "new", "n": 99])])
        try f.delete(f.localAPI, f.localCaller(), zone: "Lists", ["item-0006"])
        let pulled = try f.pull()
        XCTAssertEqual(pulled.merges.first { $0.zone.zoneName == "Lists" }?.report.saved, ["item-0001"])
        XCTAssertEqual(pulled.merges.first { $0.zone.zoneName == "Lists" }?.report.deleted, ["item-0002"])
        let pushed = try f.push()
        let z = try XCTUnwrap(pushed.zones.first { $0.zone.zoneName == "Lists" })
        XCTAssertEqual(z.outcome.saved.sorted(), ["item-0005", "new-1"])
        XCTAssertEqual(z.outcome.deleted, ["item-0006"])
        XCTAssertTrue(z.outcome.failures.isEmpty, "\(z.outcome.failures)")
        try f.assertSame(zone: "Lists")
        XCTAssertTrue(try f.push().zones.isEmpty, "a second push has nothing to send")
        // The pull's writes are the remote's device in the local history.
        let local = try f.contents(f.localAPI, f.localCaller(), zone: "Lists")
        XCTAssertEqual(local["item-0001"]?["fields"]?["title"]?.stringValue, "remote edit")
    }

    func testAPushOfARecordTheRemoteChangedUnseenIsAConflictNeverRetried() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", items(2))
        try f.pull()
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", [("item-0000", ["title": "theirs", "n": 0])])
        try f.save(f.localAPI, f.localCaller(), zone: "Lists", [("item-0000", ["title": "ours", "n": 0])])
        let pushed = try f.push()
        let failures = pushed.zones.first?.outcome.failures ?? []
        XCTAssertEqual(failures.map(\.code), [.conflict])
        XCTAssertTrue(failures.first?.reason.contains("ck diff origin/Lists") == true, failures.first?.reason ?? "")
        XCTAssertEqual(try f.contents(f.serverAPI, f.serverCaller(), zone: "Lists")["item-0000"]?["fields"]?["title"]?.stringValue, "theirs")
        // Pull: a conflict, left alone; --theirs settles it.
        XCTAssertEqual(try f.pull().conflicts, 1)
        XCTAssertEqual(try f.contents(f.localAPI, f.localCaller(), zone: "Lists")["item-0000"]?["fields"]?["title"]?.stringValue, "ours")
        try f.pull(strategy: .theirs)
        try f.assertSame(zone: "Lists")
    }

    func testAnExpiredTokenRefetchesTheZoneWithANotice() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", items(5))
        try f.pull()
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", [("item-0003", ["title": "after", "n": 3])])
        _ = try f.serverAPI.expireTokens(ExpireTokensRequest(zoneName: "Lists"), as: f.serverCaller())
        let r = try f.pull()
        XCTAssertEqual(r.fetch.refetched, ["Lists"])
        XCTAssertTrue(f.notices.contains { $0.contains("expired") }, "\(f.notices)")
        try f.assertSame(zone: "Lists")
    }

    func testAThrottleIsWaitedOutAsTheServerAsks() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", items(3))
        _ = try f.serverAPI.addFault(AddFaultRequest(op: .endpoint(.changesZone), error: .throttled, retryAfter: 1, times: 1))
        let started = Date()
        try f.pull()
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 1.0, "retryAfter is honoured")
        XCTAssertTrue(f.notices.contains("throttled; retrying in 1.0 s"), "\(f.notices)")
        try f.assertSame(zone: "Lists")
    }

    func testGivingUpAtTheBudgetKeepsWhatWasFetched() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", items(3))
        _ = try f.serverAPI.addFault(AddFaultRequest(op: .endpoint(.changesZone), error: .throttled, retryAfter: 60, times: 1))
        let c = try f.client(pacing: PacingPolicy(rate: nil, maxWait: 5))
        XCTAssertThrowsError(try f.pull(client: c)) { e in
            XCTAssertEqual((e as? RemoteGaveUp)?.error.code, .throttled, "\(e)")
        }
        c.close()
        try f.pull()
        try f.assertSame(zone: "Lists")
    }

    func testANetworkFailureMidCloneThenAPullEndsAsAnUninterruptedClone() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", items(450))
        // No retries of ck's own; the HTTP client sends a request once more on a new connection
        // when a kept-alive one drops before any answer (the fault drops two).
        let c = try f.client(pacing: PacingPolicy(rate: nil, maxWait: 30, retries: 0))
        var fetch = f.fetch(c)
        var armed = false
        let api = f.serverAPI
        fetch.progress = { r in
            if r.pages == 1, !armed { armed = true; _ = try? api.addFault(AddFaultRequest(op: .endpoint(.changesZone), error: .networkFailure, times: 2)) }
        }
        XCTAssertThrowsError(try RemotePull(fetch: fetch).run()) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .networkFailure, "\(e)")
        }
        c.close()
        let r = try f.pull()
        XCTAssertEqual(r.fetch.records, 250, "the page saved before the failure is not fetched again")
        try f.assertSame(zone: "Lists")
    }

    func testASessionEndedOnTheServerStopsWithTheLoginHint() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        _ = try f.serverAPI.endWebSessions(nil, as: f.serverCaller())
        XCTAssertThrowsError(try f.pull()) { e in
            let ck = e as? CloudKitError
            XCTAssertEqual(ck?.code, .authenticationRequired, "\(e)")
            XCTAssertTrue(ck?.reason.contains("ck remote login origin") == true, ck?.reason ?? "")
        }
    }

    func testARotatedTokenIsAdoptedFromTheHeaderAndStored() throws {
        // Apple's documented rule: a replaced token stops working (ck serve --strict-token-rotation).
        let f = try RemoteFixture(rotation: .strict)
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", items(3))
        let home = NSTemporaryDirectory() + "ck-rot-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: home) }
        let store = try CredentialStore.standard(env: ["HOME": home])
        try store.update(f.url) { $0.apiToken = f.apiToken; $0.webAuthToken = f.session }
        let c = WebServicesClient(remote: f.remote, credentials: try store.credentials(for: f.url), store: store,
                                  http: try RemoteConnection.httpClient(f.url, env: [:]), pacing: PacingPolicy(rate: nil))
        defer { c.close() }
        f.advance(seconds: 61)
        try f.pull(client: c)
        let rotated = try XCTUnwrap(c.credentials.webAuthToken)
        XCTAssertNotEqual(rotated, f.session, "a token a minute old is replaced, and the client takes the replacement")
        XCTAssertEqual(try store.credentials(for: f.url).webAuthToken, rotated, "stored before the next request")
        f.advance(seconds: 180)
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", [("item-0009", ["title": "later", "n": 9])])
        try f.pull(client: c)
        try f.assertSame(zone: "Lists")
        // The replaced token is refused now: only the adopted one could have made that pull.
        let stale = try f.client(Credentials(apiToken: f.apiToken, webAuthToken: f.session))
        defer { stale.close() }
        XCTAssertThrowsError(try stale.call(.public, "users/caller"))
    }

    func saveAsset(_ api: CloudKitAPI, _ caller: Caller, zone: String, name: String, bytes: [UInt8]) throws {
        let sum = AssetValue.checksum(of: bytes)
        var r = try ModifyRequest.parse(.object(["operations": .array([.object(["operationType": "forceReplace", "record": .object([
            "recordName": .string(name), "recordType": "Photo",
            "fields": .object(["image": .object(["type": "ASSETID", "value": .object(["fileChecksum": .string(sum), "size": .int(Int64(bytes.count))])])]),
        ])])])]))
        r.zoneName = zone
        r.uploadedAssets = [sum: bytes]
        if case .failed(let e) = try api.modifyRecords(r, as: caller).results[0] { throw e }
    }

    func testAssetsTravelBothWaysByTheirBytes() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Photos")
        let theirs: [UInt8] = [0xFF, 0x00, 0x80, 0x41] + Array(repeating: 7, count: 3000)
        try saveAsset(f.serverAPI, f.serverCaller(), zone: "Photos", name: "p1", bytes: theirs)
        try f.pull()
        try f.assertSame(zone: "Photos")
        XCTAssertEqual(try f.localAPI.downloadAsset(AssetDownloadRequest(recordName: "p1", fieldName: "image", zoneName: "Photos"), as: f.localCaller()), theirs)
        let ours: [UInt8] = Array("local bytes \u{1F600}".utf8) + [0, 1, 2]
        try saveAsset(f.localAPI, f.localCaller(), zone: "Photos", name: "p2", bytes: ours)
        let pushed = try f.push()
        XCTAssertEqual(pushed.zones.first?.outcome.saved, ["p2"], "\(pushed.zones.first?.outcome.failures ?? [])")
        XCTAssertEqual(try f.serverAPI.downloadAsset(AssetDownloadRequest(recordName: "p2", fieldName: "image", zoneName: "Photos"), as: f.serverCaller()), ours)
        try f.assertSame(zone: "Photos")
        XCTAssertTrue(try f.push().zones.isEmpty, "an uploaded asset is the base now")
    }

    func testAZoneDeletedRemotelyTakesItsRecordsLocallyUnlessChangedHere() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", items(4))
        try f.pull()
        try f.save(f.localAPI, f.localCaller(), zone: "Lists", [("item-0001", ["title": "kept here", "n": 1])])
        _ = try f.serverAPI.modifyZones(ZonesModifyRequest(operations: [.init(.delete, "Lists")]), as: f.serverCaller())
        let r = try f.pull()
        XCTAssertEqual(r.fetch.deletedZones, ["Lists"])
        let merge = try XCTUnwrap(r.merges.first { $0.zone.zoneName == "Lists" }?.report)
        XCTAssertEqual(merge.deleted.sorted(), ["item-0000", "item-0002", "item-0003"])
        XCTAssertEqual(merge.conflicts, ["item-0001"], "a record changed here is not deleted under it")
    }


    func keyFile(_ key: P256PrivateKey) throws -> String {
        let path = NSTemporaryDirectory() + "ck-key-" + UUID().uuidString + ".pem"
        try key.pem.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testThePublicDatabaseClonesWithAServerKeyByQueryingEachType() throws {
        let f = try RemoteFixture()
        _ = try f.serverAPI.importSchema(SchemaImportRequest(text: TestSchemas.publicFeed), as: f.serverCaller(.public))
        try f.save(f.serverAPI, f.serverCaller(.public), zone: ZoneID.defaultZoneName, items(450, prefix: "feed"), type: "Feed")
        let key = try P256PrivateKey.generate()
        _ = try f.serverAPI.addServerKey(keyID: "k1", publicKeyPEM: key.publicKey.pem, container: RemoteFixture.container, environment: .development, as: f.serverCaller())
        let path = try keyFile(key)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let c = try f.client(Credentials(keyID: "k1", privateKeyPath: path))
        let r = try f.pull(.public, types: ["Feed"], client: c)
        c.close()
        XCTAssertEqual(r.fetch.records, 450)
        XCTAssertGreaterThanOrEqual(r.fetch.pages, 3)
        try f.assertSame(zone: ZoneID.defaultZoneName, .public)
        // A deletion shows only to a whole scan with --prune.
        try f.delete(f.serverAPI, f.serverCaller(.public), zone: ZoneID.defaultZoneName, ["feed-0007"])
        let c2 = try f.client(Credentials(keyID: "k1", privateKeyPath: path))
        var fetch = f.fetch(c2, .public, types: ["Feed"])
        fetch.prune = true
        let pruned = try RemotePull(fetch: fetch).run()
        c2.close()
        XCTAssertEqual(pruned.merges.first?.report.deleted, ["feed-0007"])
        try f.assertSame(zone: ZoneID.defaultZoneName, .public)
    }

    func testAKeyTheServerDoesNotKnowIs401WithTheClockCompared() throws {
        let f = try RemoteFixture()
        let path = try keyFile(try P256PrivateKey.generate())
        defer { try? FileManager.default.removeItem(atPath: path) }
        let c = try f.client(Credentials(keyID: "unknown", privateKeyPath: path))
        defer { c.close() }
        XCTAssertThrowsError(try c.call(.public, "records/query", body: .object(["query": .object(["recordType": "Feed"])]))) { e in
            let ck = e as? CloudKitError
            XCTAssertEqual(ck?.code, .authenticationFailed)
            XCTAssertTrue(ck?.reason.contains("clock") == true, ck?.reason ?? "")
        }
        XCTAssertThrowsError(try c.call(.private, "zones/list")) { e in
            XCTAssertTrue((e as? CloudKitError)?.reason.contains("public database only") == true, "\(e)")
        }
    }

    func testFaultsArmedInTheLocalStoreNeverFailAPullOrAPush() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", items(3))
        try saveAsset(f.serverAPI, f.serverCaller(), zone: "Lists", name: "pic", bytes: Array("bytes".utf8))
        // Faults stand for the service failing a client's request; a pull's and a push's local
        // reads and writes are ck's own.
        _ = try f.localAPI.addFault(AddFaultRequest(op: .all, error: .zoneBusy))
        try f.pull()
        _ = try f.localAPI.clearFaults(ClearFaultsRequest())
        try f.assertSame(zone: "Lists")
        try saveAsset(f.localAPI, f.localCaller(), zone: "Lists", name: "pic2", bytes: Array("more".utf8))
        _ = try f.localAPI.addFault(AddFaultRequest(op: .all, error: .zoneBusy))
        XCTAssertEqual(try f.push().zones.first?.outcome.saved, ["pic2"])
    }

    /// A record of every field type, a reference of each action and a parent, both ways.
    func everyType(_ name: String, parent: String?, target: String) -> JSONValue {
        var r: [String: JSONValue] = ["recordName": .string(name), "recordType": "Kitchen", "fields": .object([
            "s": .object(["value": "text ✓", "type": "STRING"]),
            "i": .object(["value": .int(-42), "type": "INT64"]),
            "d": .object(["value": .double(2.5), "type": "DOUBLE"]),
            "t": .object(["value": .int(1_572_220_800_000), "type": "TIMESTAMP"]),
            "b": .object(["value": "AAEC/w==", "type": "BYTES"]),
            "e": .object(["value": "c2VjcmV0", "type": "ENCRYPTED_BYTES"]),
            "loc": .object(["value": .object(["latitude": .double(37.33), "longitude": .double(-122.03)]), "type": "LOCATION"]),
            "ref": .object(["value": .object(["recordName": .string(target), "action": "NONE"]), "type": "REFERENCE"]),
            "owner": .object(["value": .object(["recordName": .string(target), "action": "DELETE_SELF"]), "type": "REFERENCE"]),
            "sl": .object(["value": .array(["a", "b"]), "type": "STRING_LIST"]),
            "il": .object(["value": .array([.int(1), .int(2)]), "type": "INT64_LIST"]),
            "tl": .object(["value": .array([.int(1000)]), "type": "TIMESTAMP_LIST"]),
            "rl": .object(["value": .array([.object(["recordName": .string(target), "action": "NONE"])]), "type": "REFERENCE_LIST"]),
        ])]
        if let p = parent { r["parent"] = .object(["recordName": .string(p)]) }
        return .object(r)
    }

    func modify(_ api: CloudKitAPI, _ caller: Caller, zone: String, _ records: [JSONValue]) throws {
        var r = try ModifyRequest.parse(.object(["operations": .array(records.map { .object(["operationType": "forceReplace", "record": $0]) }), "atomic": true]))
        r.zoneName = zone
        for case .failed(let e) in try api.modifyRecords(r, as: caller).results { throw e }
    }

    func testEveryFieldTypeReferenceAndParentTravelsBothWays() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Kitchen")
        try modify(f.serverAPI, f.serverCaller(), zone: "Kitchen", [
            .object(["recordName": "target", "recordType": "Kitchen", "fields": .object(["s": .object(["value": "target"])])]),
            everyType("theirs", parent: "target", target: "target"),
        ])
        try f.pull()
        try f.assertSame(zone: "Kitchen")
        let local = try f.contents(f.localAPI, f.localCaller(), zone: "Kitchen")
        XCTAssertEqual(local["theirs"]?["fields"]?["loc"]?["latitude"]?.doubleValue, 37.33)
        XCTAssertEqual(local["theirs"]?["fields"]?["owner"]?["action"]?.stringValue, "DELETE_SELF")
        var parents: [String: String] = [:]
        try f.localAPI.listRecords(ListRecordsRequest(zoneName: "Kitchen"), as: f.localCaller()) { b in
            for r in b.records { if let p = r.parent { parents[r.recordName] = p } }
            return true
        }
        XCTAssertEqual(parents, ["theirs": "target"])
        try modify(f.localAPI, f.localCaller(), zone: "Kitchen", [everyType("ours", parent: "theirs", target: "theirs")])
        XCTAssertTrue(try f.push().zones.first?.outcome.failures.isEmpty ?? false)
        try f.assertSame(zone: "Kitchen")
        // The DELETE_SELF reference holds on the server too: deleting its target there takes it.
        try f.delete(f.serverAPI, f.serverCaller(), zone: "Kitchen", ["theirs"])
        XCTAssertNil(try f.contents(f.serverAPI, f.serverCaller(), zone: "Kitchen")["ours"])
        try f.pull()
        try f.assertSame(zone: "Kitchen")
    }

    func testThePrivateDefaultZoneIsQueriedByType() throws {
        let f = try RemoteFixture()
        _ = try f.serverAPI.importSchema(SchemaImportRequest(text: TestSchemas.publicFeed), as: f.serverCaller())
        try f.save(f.serverAPI, f.serverCaller(), zone: ZoneID.defaultZoneName, items(250, prefix: "d"), type: "Feed")
        let r = try f.pull(types: ["Feed"])
        XCTAssertEqual(r.fetch.records, 250)
        try f.assertSame(zone: ZoneID.defaultZoneName)
        try f.save(f.localAPI, f.localCaller(), zone: ZoneID.defaultZoneName, [("d-0001", ["title": "edited here", "n": 1])], type: "Feed")
        let pushed = try f.push()
        XCTAssertEqual(pushed.zones.first?.outcome.saved, ["d-0001"], "the default zone goes non-atomic, with the base tag")
        try f.assertSame(zone: ZoneID.defaultZoneName)
    }

    func testARemoteResetTakesItsDataAwayLocallyAndAPushPutsItBack() throws {
        let f = try RemoteFixture()
        try f.createZone(f.serverAPI, f.serverCaller(), "Lists")
        try f.save(f.serverAPI, f.serverCaller(), zone: "Lists", items(5))
        try f.pull()
        // The development environment reset on the server (the Console's Reset, cktool reset-schema).
        _ = try f.serverAPI.resetSchema(as: f.serverCaller())
        let r = try f.pull()
        XCTAssertEqual(r.merges.first { $0.zone.zoneName == "Lists" }?.report.deleted.count, 5, "\(r.json)")
        XCTAssertEqual(try f.contents(f.localAPI, f.localCaller(), zone: "Lists").count, 0)
        // Seeding it again from here: the zone is made anew and every record created.
        try f.save(f.localAPI, f.localCaller(), zone: "Lists", items(3, prefix: "seed"))
        let pushed = try f.push()
        XCTAssertEqual(pushed.zones.first?.outcome.saved.count, 3, "\(pushed.json(dryRun: false))")
        try f.assertSame(zone: "Lists")
    }
}
