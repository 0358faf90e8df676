import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// Issue 30, item 7: where ck's account and identity differed from CloudKit — the native code
/// of a temporarily unavailable account, a purged zone's userDeletedZone, what `account`
/// shows after noAccount, signing in on a restricted device, a discoverability prompt that
/// never comes back once answered, discovering several users at once, and each user's `Users`
/// record in the public database.
final class AccountIdentityFidelityTests: XCTestCase {
    func error(_ body: () throws -> Any) -> CloudKitError? {
        do { _ = try body(); return nil } catch { return error as? CloudKitError }
    }

    // MARK: native codes

    func testATemporarilyUnavailableAccountIsNativeCode36AndTheOthersNotAuthenticated() throws {
        let t = TempStore()
        let a = api(t.root)
        try t.store.accounts.setStatus(.temporarilyUnavailable)
        let write = error { try a.modifyRecords(ModifyRequest(operations: [op(.create, "r1")]), as: caller()) }
        XCTAssertEqual(write?.code, .authenticationRequired)
        XCTAssertEqual(write?.ckErrorCode, 36)
        XCTAssertEqual(write?.envelope()["ckErrorCode"], 36)
        let required = error { try a.accountStatus(AccountStatusRequest(require: .available), as: caller()) }
        XCTAssertEqual(required?.ckErrorCode, 36)
        for status in [AccountStatus.restricted, .couldNotDetermine] {
            try t.store.accounts.setStatus(status)
            XCTAssertEqual(error { try a.modifyRecords(ModifyRequest(operations: [op(.create, "r1")]), as: caller()) }?.ckErrorCode, 9, "\(status)")
        }
    }

    func testASaveIntoAPurgedZoneIsUserDeletedZoneUntilTheZoneIsMadeAgain() throws {
        let t = TempStore()
        let a = api(t.root)
        let db = t.client()
        try db.createZone("P")
        try db.createZone("D")
        try db.purgeZone("P")
        try db.deleteZone("D")
        let save = { (zone: String) in self.error { try a.modifyRecords(ModifyRequest(operations: [op(.create, "r1")], zoneName: zone), as: caller()) } }
        let purged = save("P")
        XCTAssertEqual(purged?.code, .zoneNotFound)
        XCTAssertEqual(purged?.ckErrorCode, 28)
        XCTAssertTrue(purged?.reason.contains("purged") == true, purged?.reason ?? "")
        // A deleted zone, or one that never was, is zoneNotFound (26).
        XCTAssertEqual(save("D")?.ckErrorCode, 26)
        XCTAssertEqual(save("Never")?.ckErrorCode, 26)
        // Reading it says the same.
        XCTAssertEqual(error { try a.lookupRecords(LookupRecordsRequest(recordNames: ["r1"], zoneName: "P"), as: caller()) }?.ckErrorCode, 28)
        // Made again, it is a zone like any other.
        _ = try db.createZone("P")
        XCTAssertNil(save("P"))
    }

    // MARK: the account

    func testNoAccountShowsNoUserAndSigningBackInWorks() throws {
        let t = TempStore()
        let a = api(t.root)
        let answer = try a.setAccountStatus(.noAccount, as: caller())
        XCTAssertEqual(answer.document, ["status": "noAccount"])
        XCTAssertEqual(try a.accountStatus(AccountStatusRequest(), as: caller()).document, ["status": "noAccount"])
        XCTAssertEqual(try a.accountEvents(AccountEventsRequest(), as: caller()).items.last?.jsonValue["userRecordName"], nil)
        // Like a sign-out: available needs a sign-in again.
        XCTAssertEqual(error { try a.setAccountStatus(.available, as: caller()) }?.nextStep, .signIn)
        XCTAssertEqual(try a.signIn(SignInRequest(appleID: "alice@example.com"), as: caller()).document["status"], "available")
    }

    func testSigningInOnARestrictedDeviceLeavesItRestricted() throws {
        let t = TempStore()
        let a = api(t.root)
        try t.store.accounts.setStatus(.restricted)
        let answer = try a.signIn(SignInRequest(appleID: "bob@example.com"), as: caller())
        XCTAssertEqual(answer.document["status"], "restricted")
        XCTAssertEqual(answer.document["appleID"], "bob@example.com")
        XCTAssertEqual(error { try a.modifyRecords(ModifyRequest(operations: [op(.create, "r1")]), as: caller()) }?.code, .authenticationRequired)
        // Lifting the restriction makes bob's account available.
        XCTAssertEqual(try a.setAccountStatus(.available, as: caller()).document["appleID"], "bob@example.com")
        // The other statuses are the account's own state, which a sign-in ends.
        try t.store.accounts.setStatus(.temporarilyUnavailable)
        XCTAssertEqual(try a.signIn(SignInRequest(appleID: "alice@example.com"), as: caller()).document["status"], "available")
    }

    // MARK: identity

    func testTheDiscoverabilityPromptIsAnsweredOnce() throws {
        let t = TempStore()
        let a = api(t.root)
        XCTAssertEqual(try a.requestPermission(PermissionRequest(granted: false), as: caller()).document["status"], "denied")
        XCTAssertEqual(try a.requestPermission(PermissionRequest(granted: true), as: caller()).document["status"], "denied")
        XCTAssertEqual(try a.permissionStatus(as: caller()).document["status"], "denied")
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        let bob = caller(.private, .appleID("bob@example.com"))
        XCTAssertEqual(try a.requestPermission(PermissionRequest(granted: true), as: bob).document["status"], "granted")
        XCTAssertEqual(try a.requestPermission(PermissionRequest(granted: false), as: bob).document["status"], "granted")
    }

    func testDiscoverAnswersOneIdentityPerMatchAndNothingForTheRest() throws {
        let t = TempStore(signIn: false)
        try t.store.accounts.signIn(appleID: "carol@example.com", givenName: "Carol", familyName: nil, phone: "+1 408 555 0102")
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: "Bob", familyName: nil, phone: "+1 408 555 0101")
        try t.store.accounts.signIn(appleID: "alice@example.com", givenName: "Alice", familyName: nil, phone: nil)
        let a = api(t.root)
        for u in ["alice", "bob", "carol"] { _ = try a.requestPermission(PermissionRequest(granted: true), as: caller(.private, .appleID("\(u)@example.com"))) }
        let bob = try XCTUnwrap(t.store.accounts.user(appleID: "bob@example.com")?.userRecordName)
        let carol = try XCTUnwrap(t.store.accounts.user(appleID: "carol@example.com")?.userRecordName)
        let found = try a.discoverUsers(UsersDiscoverRequest(lookups: [.email("bob@example.com"), .email("zed@example.com"), .phone("+14085550102"),
                                                                       .recordName(bob)]), as: caller())
        XCTAssertEqual(found.failures.count, 0)
        XCTAssertEqual(found.results.compactMap { $0.value?["userRecordName"]?.stringValue }, [bob, carol])
        let none = try a.discoverUsers(UsersDiscoverRequest(lookups: [.email("zed@example.com")]), as: caller())
        XCTAssertEqual(none.results.count, 0)
        XCTAssertEqual(none.jsonValue, ["users": []])
    }

    // MARK: the Users record

    func testEachUserHasAUsersRecordInThePublicDatabaseThatItsOwnerCanExtend() throws {
        let t = TempStore()
        let a = api(t.root)
        let me = try XCTUnwrap(t.store.accounts.user(appleID: "alice@example.com")?.userRecordName)
        let got = try a.lookupRecords(LookupRecordsRequest(recordNames: [me]), as: caller(.public))
        let record = try XCTUnwrap(got.results.first?.record, "\(got.results)")
        XCTAssertEqual(record.recordType, "Users")
        XCTAssertEqual(record.created.userRecordName, me)
        // Its owner extends it with fields of the app.
        var update = op(.update, me, type: "Users", tag: record.recordChangeTag, ["nickname": "ally"])
        update.recordType = "Users"
        let saved = try a.modifyRecords(ModifyRequest(operations: [update]), as: caller(.public))
        XCTAssertNil(saved.failures.first, "\(saved.failures)")
        XCTAssertEqual(saved.results.first?.record?.fields["nickname"]?.value, .string("ally"))
        // Another user reads it and may not write it.
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: nil, familyName: nil, phone: nil)
        let bob = caller(.public, .appleID("bob@example.com"))
        let seen = try a.lookupRecords(LookupRecordsRequest(recordNames: [me]), as: bob)
        XCTAssertEqual(seen.results.first?.record?.fields["nickname"]?.value, .string("ally"))
        let tag = try XCTUnwrap(seen.results.first?.record?.recordChangeTag)
        let refused = try a.modifyRecords(ModifyRequest(operations: [op(.update, me, type: "Users", tag: tag, ["nickname": "bobby"])]), as: bob)
        XCTAssertNotNil(refused.failures.first)
        // Bob's own record is there for him too, as soon as anyone asks for it.
        let bobName = try XCTUnwrap(t.store.accounts.user(appleID: "bob@example.com")?.userRecordName)
        XCTAssertEqual(try a.lookupRecords(LookupRecordsRequest(recordNames: [bobName]), as: caller(.public)).results.first?.record?.created.userRecordName, bobName)
        // A name that is no user's stays NOT_FOUND, and nothing is made in the private database.
        XCTAssertEqual(try a.lookupRecords(LookupRecordsRequest(recordNames: ["_0123456789abcdef0123456789abcdef"]), as: caller(.public)).failures.first?.code, .notFound)
        XCTAssertEqual(try a.lookupRecords(LookupRecordsRequest(recordNames: [me]), as: caller()).failures.first?.code, .notFound)
    }
}
