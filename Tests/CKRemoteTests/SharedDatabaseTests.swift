import CKCore
import CKJSON
import CKModel
import Foundation
import XCTest
@testable import CKRemote

/// The shared database through a remote: alice (the server's device user) shares zones with
/// bob; bob clones his shared database. Here, as on the server, each zone is alice's — a user
/// made locally with the remote's user record name — shown in bob's shared database, with the
/// shares made by share operations.
final class SharedDatabaseTests: XCTestCase {
    let c = RemoteFixture.container

    struct Setup {
        let f: RemoteFixture
        let bob: Credentials
        let aliceName: String
    }

    /// alice's zone Trip shared whole with bob (read-write), and her record `album` with its
    /// children shared with bob read-only; bob accepted both. The local device is bob's.
    func setUp(_ f: RemoteFixture) throws -> Setup {
        let alice = f.serverCaller()
        let aliceName = try XCTUnwrap(f.serverAPI.accountSummary(as: alice).document["userRecordName"]?.stringValue)
        _ = try f.serverAPI.addWebUser(appleID: "bob@example.com")
        try f.createZone(f.serverAPI, alice, "Trip")
        try f.save(f.serverAPI, alice, zone: "Trip", (0..<250).map { ("stop-\($0)", ["n": .int(Int64($0))]) })
        let tripGUID = try XCTUnwrap(f.serverAPI.createShare(ShareCreateRequest(zoneName: "Trip", recordName: nil, participants: [
            ShareParticipantRequest(user: .email("bob@example.com"), permission: .readWrite)], title: "Road trip"), as: alice).jsonValue["records"]?.arrayValue?.first?["shortGUID"]?.stringValue)
        try f.createZone(f.serverAPI, alice, "Photos")
        try f.save(f.serverAPI, alice, zone: "Photos", [("album", ["title": "Summer"]), ("private", ["title": "not shared"])])
        try saveChild(f.serverAPI, alice, "photo-1", parent: "album")
        let albumGUID = try XCTUnwrap(f.serverAPI.createShare(ShareCreateRequest(zoneName: "Photos", recordName: "album", participants: [
            ShareParticipantRequest(user: .email("bob@example.com"), permission: .readOnly)]), as: alice).jsonValue["records"]?.arrayValue?.first?["shortGUID"]?.stringValue)
        let bobOnServer = Caller(container: c, scope: .shared, user: .appleID("bob@example.com"))
        for g in [tripGUID, albumGUID] {
            let r = try f.serverAPI.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(g)]), as: bobOnServer).jsonValue
            XCTAssertNil(r["results"]?.arrayValue?.first?["serverErrorCode"], "\(r)")
        }
        let session = try XCTUnwrap(f.serverAPI.createWebAuthToken(as: Caller(container: c, user: .appleID("bob@example.com")), keepSignedIn: true).document["ckWebAuthToken"]?.stringValue)
        _ = try f.localAPI.signIn(SignInRequest(appleID: "bob@example.com"), as: f.localCaller())
        return Setup(f: f, bob: Credentials(apiToken: f.apiToken, webAuthToken: session), aliceName: aliceName)
    }

    func saveChild(_ api: CloudKitAPI, _ caller: Caller, _ name: String, parent: String, zone: String = "Photos") throws {
        var r = try ModifyRequest.parse(.object(["operations": .array([.object(["operationType": "forceReplace", "record": .object([
            "recordName": .string(name), "recordType": "Item", "parent": .object(["recordName": .string(parent)]),
            "fields": .object(["title": .object(["value": .string(name)])]),
        ])])])]))
        r.zoneName = zone
        for case .failed(let e) in try api.modifyRecords(r, as: caller).results { throw e }
    }

    func pull(_ s: Setup, strategy: MergeStrategy = .none) throws -> PullReport {
        let client = try s.f.client(s.bob)
        defer { client.close() }
        var p = RemotePull(fetch: s.f.fetch(client, .shared))
        p.strategy = strategy
        return try p.run()
    }

    func push(_ s: Setup) throws -> PushReport {
        let client = try s.f.client(s.bob)
        defer { client.close() }
        let caller = s.f.localCaller(.shared)
        return try RemotePush(api: s.f.localAPI, client: client, caller: caller).run(localZones: try s.f.localAPI.zoneNames(as: caller))
    }

    /// bob's view of a zone: the server's shared database as bob, and the local one.
    func assertSameForBob(_ s: Setup, zone: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let server = try s.f.contents(s.f.serverAPI, Caller(container: c, scope: .shared, user: .appleID("bob@example.com")), zone: zone)
        let local = try s.f.contents(s.f.localAPI, s.f.localCaller(.shared), zone: zone)
        XCTAssertEqual(server.count, local.count, "records of \(zone) bob sees", file: file, line: line)
        XCTAssertEqual(server, local, "zone \(zone) as bob sees it", file: file, line: line)
    }

    func testAZoneSharedWithTheCloningUserIsTheirOwnersHereAndShowsInTheirSharedDatabase() throws {
        let s = try setUp(try RemoteFixture())
        let r = try pull(s)
        XCTAssertEqual(r.failures, 0, "\(r.merges.flatMap(\.report.failures))")
        XCTAssertGreaterThanOrEqual(r.fetch.pages, 3, "250 records come in pages of 200")
        try assertSameForBob(s, zone: "Trip")
        try assertSameForBob(s, zone: "Photos")
        // The zones are alice's here too: a user made with her remote user record name.
        let zones = try s.f.localAPI.listZones(as: s.f.localCaller(.shared)).jsonValue["zones"]?.arrayValue ?? []
        XCTAssertEqual(Set(zones.compactMap { $0["zoneID"]?["zoneName"]?.stringValue }), ["Photos", "Trip"])
        XCTAssertEqual(Set(zones.compactMap { $0["zoneID"]?["ownerRecordName"]?.stringValue }), [s.aliceName])
        // What alice did not share is not here at all.
        let owner = Caller(container: c, scope: .private, user: .userRecordName(s.aliceName))
        XCTAssertNil(try s.f.contents(s.f.localAPI, owner, zone: "Photos")["private"])
        // The shares are shares: bob may write the read-write zone, not the read-only album.
        XCTAssertThrowsError(try s.f.save(s.f.localAPI, s.f.localCaller(.shared), zone: "Photos", [("album", ["title": "mine now"])]))
        // Nothing changed: one request, nothing fetched, nothing written.
        let again = try pull(s)
        XCTAssertEqual(again.fetch.requests, 1)
        XCTAssertTrue(again.merges.allSatisfy { $0.report.saved.isEmpty && $0.report.failures.isEmpty })
        let fsck = try s.f.localAPI.fsck(FsckRequest(repair: false))
        XCTAssertFalse(fsck.problemsRemain, "\(fsck.jsonValue)")
    }

    func testChangesOnBothSidesTravelThroughTheSharedDatabase() throws {
        let s = try setUp(try RemoteFixture())
        _ = try pull(s)
        let alice = s.f.serverCaller()
        // bob, here: changes a stop, adds one, deletes one. alice, there: changes another.
        try s.f.save(s.f.localAPI, s.f.localCaller(.shared), zone: "Trip", [("stop-1", ["n": 1001]), ("bob-stop", ["n": 7])])
        try s.f.delete(s.f.localAPI, s.f.localCaller(.shared), zone: "Trip", ["stop-2"])
        try s.f.save(s.f.serverAPI, alice, zone: "Trip", [("stop-3", ["n": 3003])])
        // ck status tells, per shared zone, what a push would send.
        let status = try s.f.localAPI.status(as: s.f.localCaller(.shared)).document["zones"]?.arrayValue?.first { $0["zoneName"]?.stringValue == "Trip" }
        XCTAssertEqual(status?["remotes"]?["origin"]?["ahead"], 3, "\(String(describing: status))")
        let pushed = try push(s)
        let trip = try XCTUnwrap(pushed.zones.first { $0.zone.zoneName == "Trip" })
        XCTAssertEqual(trip.zone.ownerRecordName, s.aliceName)
        XCTAssertEqual(trip.outcome.saved.sorted(), ["bob-stop", "stop-1"])
        XCTAssertEqual(trip.outcome.deleted, ["stop-2"])
        XCTAssertTrue(trip.outcome.failures.isEmpty, "\(trip.outcome.failures)")
        XCTAssertFalse(pushed.zones.flatMap { $0.plan.operations }.contains { $0["record"]?["recordType"]?.stringValue == ShareInfo.recordType },
                       "a share is never pushed as a record")
        let server = try s.f.contents(s.f.serverAPI, alice, zone: "Trip")
        XCTAssertEqual(server["stop-1"]?["fields"]?["n"], 1001)
        XCTAssertNil(server["stop-2"])
        let pulled = try pull(s)
        XCTAssertEqual(pulled.conflicts, 0)
        XCTAssertEqual(pulled.merges.first { $0.zone.zoneName == "Trip" }?.report.saved, ["stop-3"])
        try assertSameForBob(s, zone: "Trip")
    }

    func testAShareChangedOnTheRemoteChangesHere() throws {
        let s = try setUp(try RemoteFixture())
        _ = try pull(s)
        let alice = s.f.serverCaller()
        // alice invites carol to the trip, and shares a second photo under the album.
        _ = try s.f.serverAPI.addWebUser(appleID: "carol@example.com")
        _ = try s.f.serverAPI.updateShare(ShareUpdateRequest(reference: ShareInfo.zoneWideName, zoneName: "Trip", update: .addParticipants([
            ShareParticipantRequest(user: .email("carol@example.com"), permission: .readOnly)])), as: alice)
        try saveChild(s.f.serverAPI, alice, "photo-2", parent: "album")
        let r = try pull(s)
        XCTAssertEqual(r.failures, 0, "\(r.merges.flatMap(\.report.failures))")
        try assertSameForBob(s, zone: "Photos")
        let owner = Caller(container: c, scope: .private, user: .userRecordName(s.aliceName))
        let share = try s.f.localAPI.updateShare(ShareUpdateRequest(reference: ShareInfo.zoneWideName, zoneName: "Trip", update: .addParticipants([])), as: owner)
        let emails = share.jsonValue["records"]?.arrayValue?.first?["participants"]?.arrayValue?.compactMap { $0["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue } ?? []
        XCTAssertTrue(emails.contains("carol@example.com"), "carol is invited here too: \(emails)")
        // alice stops sharing the trip: bob's shared database here loses it, as there.
        _ = try s.f.serverAPI.updateShare(ShareUpdateRequest(reference: ShareInfo.zoneWideName, zoneName: "Trip", update: .delete), as: alice)
        _ = try pull(s)
        let zones = try s.f.localAPI.listZones(as: s.f.localCaller(.shared)).jsonValue["zones"]?.arrayValue ?? []
        XCTAssertEqual(zones.compactMap { $0["zoneID"]?["zoneName"]?.stringValue }, ["Photos"])
    }

    /// alice clones her own private database: her shares come as shares, with bob (a user made
    /// here with his remote user record name) invited and accepted as on the server.
    func testAnOwnersCloneKeepsHerSharesAsShares() throws {
        let s = try setUp(try RemoteFixture())
        _ = try s.f.localAPI.signIn(SignInRequest(appleID: "alice@example.com"), as: s.f.localCaller())
        let r = try s.f.pull()
        XCTAssertEqual(r.failures, 0, "\(r.merges.flatMap(\.report.failures))")
        try s.f.assertSame(zone: "Trip")
        try s.f.assertSame(zone: "Photos")
        let bobName = try XCTUnwrap(s.f.serverAPI.accountSummary(as: Caller(container: c, user: .appleID("bob@example.com"))).document["userRecordName"]?.stringValue)
        // bob of the remote is a user here, with the share accepted: his shared database shows both zones.
        let bobHere = Caller(container: c, scope: .shared, user: .userRecordName(bobName))
        let zones = try s.f.localAPI.listZones(as: bobHere).jsonValue["zones"]?.arrayValue ?? []
        XCTAssertEqual(Set(zones.compactMap { $0["zoneID"]?["zoneName"]?.stringValue }), ["Photos", "Trip"])
        XCTAssertNotNil(try s.f.contents(s.f.localAPI, bobHere, zone: "Photos")["photo-1"])
        XCTAssertNil(try s.f.contents(s.f.localAPI, bobHere, zone: "Photos")["private"])
        // Nothing to push: the shares are the remote's already.
        XCTAssertTrue(try s.f.push().zones.isEmpty)
    }
}
