import CKCore
import CKJSON
import CKModel
import Foundation
import XCTest
@testable import CKRemote

/// Two users of one data directory, each cloning their own shared database from one remote
/// where the same owner shares the same zone with both: here the zone is one zone, the owner's,
/// and one user losing the share is no deletion of it (found by a hostile review).
final class SharedMirrorTests: XCTestCase {
    let c = RemoteFixture.container

    func session(_ f: RemoteFixture, _ appleID: String) throws -> Credentials {
        let token = try XCTUnwrap(f.serverAPI.createWebAuthToken(as: Caller(container: c, user: .appleID(appleID)), keepSignedIn: true).document["ckWebAuthToken"]?.stringValue)
        return Credentials(apiToken: f.apiToken, webAuthToken: token)
    }

    func pull(_ f: RemoteFixture, as appleID: String) throws -> PullReport {
        _ = try f.localAPI.signIn(SignInRequest(appleID: appleID), as: f.localCaller())
        let client = try f.client(try session(f, appleID))
        defer { client.close() }
        return try RemotePull(fetch: f.fetch(client, .shared)).run()
    }

    func push(_ f: RemoteFixture, as appleID: String) throws -> PushReport {
        _ = try f.localAPI.signIn(SignInRequest(appleID: appleID), as: f.localCaller())
        let client = try f.client(try session(f, appleID))
        defer { client.close() }
        let caller = f.localCaller(.shared)
        return try RemotePush(api: f.localAPI, client: client, caller: caller).run(localZones: try f.localAPI.zoneNames(as: caller))
    }

    /// alice shares Trip with bob and dave; both clone. alice then stops sharing with bob: bob's
    /// pull must not take the zone from dave here, and dave's push must not delete alice's
    /// records on the remote.
    func testOneUserLosingAShareLeavesAnotherUsersCloneOfTheSameZoneAlone() throws {
        let f = try RemoteFixture()
        let alice = f.serverCaller()
        for u in ["bob@example.com", "dave@example.com"] { _ = try f.serverAPI.addWebUser(appleID: u) }
        try f.createZone(f.serverAPI, alice, "Trip")
        try f.save(f.serverAPI, alice, zone: "Trip", (0..<5).map { ("stop-\($0)", ["n": .int(Int64($0))]) })
        let guid = try XCTUnwrap(f.serverAPI.createShare(ShareCreateRequest(zoneName: "Trip", recordName: nil, participants: [
            ShareParticipantRequest(user: .email("bob@example.com"), permission: .readWrite),
            ShareParticipantRequest(user: .email("dave@example.com"), permission: .readWrite)]), as: alice).jsonValue["records"]?.arrayValue?.first?["shortGUID"]?.stringValue)
        for u in ["bob@example.com", "dave@example.com"] {
            let r = try f.serverAPI.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(guid)]), as: Caller(container: c, scope: .shared, user: .appleID(u))).jsonValue
            XCTAssertNil(r["results"]?.arrayValue?.first?["serverErrorCode"], "\(r)")
        }
        for u in ["bob@example.com", "dave@example.com"] {
            let r = try pull(f, as: u)
            XCTAssertEqual(r.failures, 0, "\(u): \(r.merges.flatMap(\.report.failures))")
        }
        _ = try f.serverAPI.updateShare(ShareUpdateRequest(reference: ShareInfo.zoneWideName, zoneName: "Trip", update: .removeParticipant(appleID: "bob@example.com")), as: alice)
        _ = try pull(f, as: "bob@example.com")
        let bobZones = try f.localAPI.listZones(as: f.localCaller(.shared)).jsonValue["zones"]?.arrayValue ?? []
        XCTAssertTrue(bobZones.isEmpty, "bob no longer sees Trip: \(bobZones)")
        // dave still sees all of Trip here, as there.
        _ = try f.localAPI.signIn(SignInRequest(appleID: "dave@example.com"), as: f.localCaller())
        let daveThere = try f.contents(f.serverAPI, Caller(container: c, scope: .shared, user: .appleID("dave@example.com")), zone: "Trip")
        let daveHere = (try? f.contents(f.localAPI, f.localCaller(.shared), zone: "Trip")) ?? [:]
        XCTAssertEqual(daveHere.keys.sorted(), daveThere.keys.sorted(), "dave's Trip here")
        // And dave's push deletes nothing of alice's.
        _ = try? push(f, as: "dave@example.com")
        XCTAssertEqual(try f.contents(f.serverAPI, alice, zone: "Trip").keys.filter { $0.hasPrefix("stop-") }.count, 5, "alice's records on the remote")
        // bob invited again: his next pull takes the zone back, with nothing to push.
        _ = try f.serverAPI.updateShare(ShareUpdateRequest(reference: ShareInfo.zoneWideName, zoneName: "Trip", update: .addParticipants([
            ShareParticipantRequest(user: .email("bob@example.com"), permission: .readWrite)])), as: alice)
        let r = try f.serverAPI.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(guid)]), as: Caller(container: c, scope: .shared, user: .appleID("bob@example.com"))).jsonValue
        XCTAssertNil(r["results"]?.arrayValue?.first?["serverErrorCode"], "\(r)")
        let back = try pull(f, as: "bob@example.com")
        XCTAssertEqual(back.failures + back.conflicts, 0, "\(back.json)")
        XCTAssertEqual(try f.contents(f.localAPI, f.localCaller(.shared), zone: "Trip").keys.filter { $0.hasPrefix("stop-") }.count, 5)
        XCTAssertTrue(try push(f, as: "bob@example.com").zones.isEmpty)
    }
}
