import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// Users, identity and the account through the API, in-process: `users/caller`,
/// `users/current`, `users/discover`, `users/lookup/email|id` (their bodies, and what a user
/// who is not discoverable shows), the discoverability permission, `account/status` and ck's
/// account operations.
final class APIUsersTests: XCTestCase {
    func body(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    /// alice (the device's account, discoverable), bob (discoverable), carol (not).
    func people() throws -> (TempStore, CloudKitAPI) {
        let t = TempStore(signIn: false)
        try t.store.accounts.signIn(appleID: "carol@example.com", givenName: "Carol", familyName: "C", phone: "+1 408 555 0102")
        try t.store.accounts.signIn(appleID: "bob@example.com", givenName: "Bob", familyName: "B", phone: "+1 408 555 0101")
        try t.store.accounts.signIn(appleID: "alice@example.com", givenName: "Alice", familyName: "A", phone: nil)
        let a = api(t.root)
        for u in ["alice", "bob"] { _ = try a.requestPermission(PermissionRequest(granted: true), as: caller(.private, .appleID("\(u)@example.com"))) }
        return (t, a)
    }

    func recordName(_ t: TempStore, _ appleID: String) throws -> String { try XCTUnwrap(t.store.accounts.user(appleID: appleID)?.userRecordName) }

    func assertBadRequest(_ text: String, _ words: String, _ parse: (JSONValue) throws -> Any, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try parse(try body(text)), text, file: file, line: line) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .badRequest, text, file: file, line: line)
            XCTAssertTrue((e as? CloudKitError)?.reason.contains(words) == true, "\(text): \((e as? CloudKitError)?.reason ?? "\(e)")", file: file, line: line)
        }
    }

    // MARK: the caller

    func testTheCallersIdentityIsTheBodyItselfAndUsersCurrentShowsNamesOnlyWhenDiscoverable() throws {
        let (t, a) = try people()
        let me = try a.callerIdentity(as: caller())
        XCTAssertNil(me.listKey)
        XCTAssertEqual(me.document["userRecordName"]?.stringValue, try recordName(t, "alice@example.com"))
        XCTAssertEqual(me.document["lookupInfo"], ["emailAddress": "alice@example.com"])
        XCTAssertEqual(me.document["nameComponents"], ["givenName": "Alice", "familyName": "A"])
        // carol is not discoverable: no names, anywhere.
        let carol = caller(.private, .appleID("carol@example.com"))
        XCTAssertNil(try a.callerIdentity(as: carol).document["nameComponents"])
        XCTAssertEqual(try a.currentUser(as: carol).document, ["userRecordName": .string(try recordName(t, "carol@example.com"))])
        XCTAssertEqual(try a.currentUser(as: caller()).document["firstName"]?.stringValue, "Alice")
        // Signed out: AUTHENTICATION_REQUIRED, with signing in as the next step (no command text).
        try t.store.accounts.signOut()
        for call in [{ _ = try a.callerIdentity(as: caller()) }, { _ = try a.currentUser(as: caller()) }] as [() throws -> Void] {
            XCTAssertThrowsError(try call()) { e in
                XCTAssertEqual((e as? CloudKitError)?.code, .authenticationRequired)
                XCTAssertEqual((e as? CloudKitError)?.nextStep, .signIn)
                XCTAssertFalse((e as? CloudKitError)?.reason.contains("ck ") == true)
            }
        }
        // A fault of users/caller fails whoami's request; one of users/current does not.
        try t.store.accounts.signIn(appleID: "alice@example.com", givenName: nil, familyName: nil, phone: nil)
        _ = try FaultStore(root: t.root).add(Fault(op: FaultOperation(path: "users/current")!, code: .throttled))
        XCTAssertNoThrow(try a.callerIdentity(as: caller()))
        _ = try FaultStore(root: t.root).add(Fault(op: FaultOperation(path: "users/caller")!, code: .throttled))
        XCTAssertThrowsError(try a.callerIdentity(as: caller())) { XCTAssertEqual(($0 as? CloudKitError)?.code, .throttled) }
    }

    // MARK: users/discover

    func testDiscoverBodiesAreReadStrictly() throws {
        let r = try UsersDiscoverRequest(json: try body(#"{"lookupInfos": [{"emailAddress": "a@example.com"}, {"phoneNumber": "+1 408 555 0100"}, {"userRecordName": "_0123456789abcdef0123456789abcdef"}]}"#))
        XCTAssertEqual(r.lookups?.count, 3)
        let bad: [(String, String)] = [
            (#"[]"#, "must be a JSON object"),
            (#"{}"#, "lookupInfos is missing"),
            (#"{"lookupInfos": [], "all": true}"#, "unknown key 'all'"),
            (#"{"lookupInfos": [{}]}"#, "exactly one of emailAddress, phoneNumber, userRecordName"),
            (#"{"lookupInfos": [{"emailAddress": "a@example.com", "phoneNumber": "+1 408 555 0100"}]}"#, "exactly one of"),
            (#"{"lookupInfos": [{"emailAddress": 7}]}"#, "lookupInfos[0].emailAddress must be a string"),
            (#"{"lookupInfos": [{"email": "a@example.com"}]}"#, "unknown key 'email'"),
            (#"{"lookupInfos": [{"emailAddress": "not-an-email"}]}"#, "not a valid Apple ID"),
            (#"{"lookupInfos": [{"phoneNumber": "12ab"}]}"#, "not a valid phone number"),
            (#"{"lookupInfos": [{"userRecordName": "bob"}]}"#, "not a user record name"),
        ]
        for (text, words) in bad { assertBadRequest(text, words) { try UsersDiscoverRequest(json: $0) } }
    }

    func testDiscoverFindsOnlyDiscoverableUsersAndSaysNothingOfTheOthers() throws {
        let (t, a) = try people()
        let bob = try recordName(t, "bob@example.com"), carol = try recordName(t, "carol@example.com")
        let found = try a.discoverUsers(UsersDiscoverRequest(lookups: [.email("bob@example.com"), .email("carol@example.com"), .email("zed@example.com"),
                                                                       .phone("+14085550101"), .recordName(bob)]), as: caller())
        // One identity per user found: bob, found three ways, once. carol exists but is not
        // discoverable; zed does not exist: both add nothing (issue 30).
        XCTAssertEqual(found.results.count, 1)
        XCTAssertEqual(found.results[0].value?["userRecordName"]?.stringValue, bob)
        XCTAssertEqual(found.results[0].value?["nameComponents"]?["givenName"]?.stringValue, "Bob")
        XCTAssertFalse(JSONWriter.compact(found.jsonValue).contains(carol))
        // GET: every discoverable user but the caller.
        let all = try a.discoverUsers(UsersDiscoverRequest(lookups: nil), as: caller())
        XCTAssertEqual(all.results.compactMap { $0.value?["userRecordName"]?.stringValue }, [bob])
        // Bad input fails the request; nobody signed in may not discover.
        XCTAssertThrowsError(try a.discoverUsers(UsersDiscoverRequest(lookups: [.email("x")]), as: caller())) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
        XCTAssertThrowsError(try a.discoverUsers(UsersDiscoverRequest(lookups: nil), as: caller(.private, .nobody))) { XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationRequired) }
    }

    // MARK: users/lookup/email, users/lookup/id

    func testLookupBodiesAreReadStrictly() throws {
        XCTAssertEqual(try UsersLookupEmailRequest(json: try body(#"{"users": [{"emailAddress": "a@example.com"}]}"#)).emailAddresses, ["a@example.com"])
        XCTAssertEqual(try UsersLookupIDRequest(json: try body(#"{"users": [{"userRecordName": "_0123456789abcdef0123456789abcdef"}]}"#)).userRecordNames.count, 1)
        let badEmail: [(String, String)] = [
            (#"{"emails": []}"#, "unknown key 'emails'"),
            (#"{"users": [{"userRecordName": "_0123456789abcdef0123456789abcdef"}]}"#, "unknown key 'userRecordName'"),
            (#"{"users": [{"emailAddress": ["a@example.com"]}]}"#, "emailAddress must be a string"),
            (#"{"users": [{"emailAddress": "nope"}]}"#, "not a valid Apple ID"),
            (#"{"users": {}}"#, "users must be an array"),
        ]
        for (text, words) in badEmail { assertBadRequest(text, words) { try UsersLookupEmailRequest(json: $0) } }
        let badID: [(String, String)] = [
            (#"{"users": [{"emailAddress": "a@example.com"}]}"#, "unknown key 'emailAddress'"),
            (#"{"users": [{"userRecordName": "alice"}]}"#, "not a user record name"),
            (#"{"users": [{}]}"#, "needs a 'userRecordName' string"),
        ]
        for (text, words) in badID { assertBadRequest(text, words) { try UsersLookupIDRequest(json: $0) } }
    }

    func testLookedUpUsersHaveNullNamesUnlessDiscoverable() throws {
        let (t, a) = try people()
        let bob = try recordName(t, "bob@example.com"), carol = try recordName(t, "carol@example.com")
        let byEmail = try a.lookupUsersByEmail(UsersLookupEmailRequest(emailAddresses: ["bob@example.com", "carol@example.com", "zed@example.com"]), as: caller())
        XCTAssertEqual(byEmail.results[0].value, ["userRecordName": .string(bob), "firstName": "Bob", "lastName": "B", "emailAddress": "bob@example.com"])
        XCTAssertEqual(byEmail.results[1].value, ["userRecordName": .string(carol), "firstName": nil, "lastName": nil, "emailAddress": "carol@example.com"])
        XCTAssertEqual(byEmail.results[2].error?.code, .notFound)
        let byID = try a.lookupUsersByID(UsersLookupIDRequest(userRecordNames: [carol, "_0123456789abcdef0123456789abcdef"]), as: caller())
        XCTAssertEqual(byID.results[0].value, ["userRecordName": .string(carol), "firstName": nil, "lastName": nil])
        XCTAssertEqual(byID.results[1].error?.code, .notFound)
        XCTAssertThrowsError(try a.lookupUsersByID(UsersLookupIDRequest(userRecordNames: [carol]), as: caller(.private, .nobody))) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationRequired)
        }
    }

    // MARK: the permission and the account

    func testThePermissionIsPerUserAndContainer() throws {
        let (t, a) = try people()
        let carol = caller(.private, .appleID("carol@example.com"))
        XCTAssertEqual(try a.permissionStatus(as: carol).document["status"]?.stringValue, "initialState")
        XCTAssertEqual(try a.requestPermission(PermissionRequest(granted: false), as: carol).document, ["permission": "userDiscoverability", "status": "denied"])
        XCTAssertEqual(try a.permissionStatus(as: carol).document["status"]?.stringValue, "denied")
        var elsewhere = caller()
        elsewhere.container = "iCloud.com.example.other"
        XCTAssertEqual(try a.permissionStatus(as: elsewhere).document["status"]?.stringValue, "initialState")
        try t.store.accounts.setStatus(.restricted)
        XCTAssertThrowsError(try a.requestPermission(PermissionRequest(granted: true), as: carol)) { XCTAssertEqual(($0 as? CloudKitError)?.code, .authenticationRequired) }
    }

    func testAccountStatusRequireAndTheAccountOperations() throws {
        let t = TempStore(signIn: false)
        let a = api(t.root)
        XCTAssertEqual(try a.accountStatus(AccountStatusRequest(), as: caller()).document, ["status": "noAccount"])
        XCTAssertThrowsError(try a.accountStatus(AccountStatusRequest(require: .available), as: caller())) { e in
            let ck = e as? CloudKitError
            XCTAssertEqual(ck?.code, .authenticationRequired)
            XCTAssertEqual(ck?.reason, "the account status is noAccount, not available: no iCloud account is signed in on this device")
            XCTAssertEqual(ck?.nextStep, .signIn)
        }
        let signedIn = try a.signIn(SignInRequest(appleID: "alice@example.com", givenName: "Alice"), as: caller())
        XCTAssertEqual(signedIn.document["status"]?.stringValue, "available")
        XCTAssertEqual(signedIn.document["appleID"]?.stringValue, "alice@example.com")
        XCTAssertEqual(try a.accountStatus(AccountStatusRequest(require: .available), as: caller()).document["status"]?.stringValue, "available")
        XCTAssertEqual(try a.setAccountStatus(.temporarilyUnavailable, as: caller()).document["status"]?.stringValue, "temporarilyUnavailable")
        XCTAssertEqual(try a.signOut(as: caller()).document["status"], "noAccount")
        // Setting available with nobody signed in is refused, naming the next step, not a command.
        let before = t.snapshot()
        XCTAssertThrowsError(try a.setAccountStatus(.available, as: caller())) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .badRequest)
            XCTAssertEqual((e as? CloudKitError)?.nextStep, .signIn)
            XCTAssertFalse((e as? CloudKitError)?.reason.contains("ck ") == true)
        }
        XCTAssertThrowsError(try a.signIn(SignInRequest(appleID: "not-an-email"), as: caller())) { XCTAssertEqual(($0 as? CloudKitError)?.code, .badRequest) }
        XCTAssertEqual(t.snapshot(), before)
        // Acting as a user who never signed in here: the next step is to sign them in.
        XCTAssertThrowsError(try a.accountStatus(AccountStatusRequest(), as: caller(.private, .appleID("zed@example.com")))) { e in
            XCTAssertEqual((e as? CloudKitError)?.nextStep, .signInUser(appleID: "zed@example.com"))
            XCTAssertFalse((e as? CloudKitError)?.reason.contains("ck ") == true)
        }
        // Events: every change, after a seq.
        let events = try a.accountEvents(AccountEventsRequest(), as: caller())
        XCTAssertEqual(events.items.compactMap { $0.jsonValue["status"]?.stringValue }, ["available", "temporarilyUnavailable", "noAccount"])
        XCTAssertEqual(try a.accountEvents(AccountEventsRequest(since: 2), as: caller()).items.count, 1)
        XCTAssertThrowsError(try a.accountEvents(AccountEventsRequest(since: -1), as: caller()))
        // account/status is a client operation: faults fail it; ck's summary of it is not.
        _ = try FaultStore(root: t.root).add(Fault(op: FaultOperation(path: "account/status")!, code: .networkFailure))
        XCTAssertThrowsError(try a.accountStatus(AccountStatusRequest(), as: caller())) { XCTAssertEqual(($0 as? CloudKitError)?.code, .networkFailure) }
        XCTAssertEqual(try a.accountSummary(as: caller()).document, ["status": "noAccount"])
    }
}
