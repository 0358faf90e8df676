import CKCrypto
import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// `ck serve` finds the user of every request by record name: through a map kept while the
/// users directory is the same, never staler than the directory.
final class AccountLookupTests: XCTestCase {
    func testUsersAreFoundByRecordNameAsTheyComeAndChange() throws {
        let t = TempStore()
        let accounts = t.store.accounts
        let alice = try accounts.signIn(appleID: "alice@example.com", givenName: "Alice", familyName: nil, phone: nil)
        XCTAssertEqual(try accounts.user(recordName: alice.userRecordName)?.appleID, "alice@example.com")
        XCTAssertNil(try accounts.user(recordName: "_00000000000000000000000000000000"))
        // Another user added since: found at once, as is the first one still.
        let bob = try accounts.register(appleID: "bob@example.com")
        XCTAssertEqual(try accounts.user(recordName: bob.userRecordName)?.appleID, "bob@example.com")
        XCTAssertEqual(try accounts.user(recordName: alice.userRecordName)?.appleID, "alice@example.com")
        // After the moments in which a change is read afresh, still right, and after a rewrite.
        usleep(UInt32(StampedFiles.racyWindowNanos / 1000) + 10_000)
        XCTAssertEqual(try accounts.user(recordName: bob.userRecordName)?.appleID, "bob@example.com")
        _ = try accounts.signIn(appleID: "alice@example.com", givenName: "Alice", familyName: "Smith", phone: nil)
        XCTAssertEqual(try accounts.user(recordName: alice.userRecordName)?.appleID, "alice@example.com")
        // A user file removed: no longer found.
        try FileManager.default.removeItem(atPath: t.store.paths.userFile(appleID: "bob@example.com"))
        XCTAssertNil(try accounts.user(recordName: bob.userRecordName))
    }

    /// A web auth token is 32 bytes in unpadded base64url; anything else names no session.
    func testWebAuthTokenShape() {
        for _ in 0..<200 {
            let token = WebSessionStore.newToken()
            XCTAssertTrue(WebSessionStore.isToken(token), token)
            XCTAssertEqual(Base64URL.decode(token)?.count, 32)
        }
        let t = WebSessionStore.newToken()
        XCTAssertFalse(WebSessionStore.isToken(String(t.dropLast())), "42 characters")
        XCTAssertFalse(WebSessionStore.isToken(t + "A"), "44 characters")
        XCTAssertFalse(WebSessionStore.isToken(String(t.dropLast()) + "B"), "a last character with bits past the 32nd byte")
        XCTAssertFalse(WebSessionStore.isToken(String(t.dropLast()) + "="), "padding")
        XCTAssertFalse(WebSessionStore.isToken("+" + String(t.dropFirst())), "base64, not base64url")
        XCTAssertFalse(WebSessionStore.isToken(String(repeating: "é", count: 21) + "A"), "not ASCII")
        XCTAssertEqual(WebSessionStore.hash(t), WebSessionStore.hash(t), "remembered hash is the hash")
        XCTAssertEqual(WebSessionStore.hash(t), SHA256.hex(Array(t.utf8)))
    }

    /// The account an adapter hands over with `.userRecordName` (ck serve: the one its
    /// authentication found) saves reading the users again, and counts only for that user.
    func testAnAccountHandedOverCountsOnlyForItsOwnUser() throws {
        let t = TempStore()
        let alice = try t.store.accounts.signIn(appleID: "alice@example.com", givenName: nil, familyName: nil, phone: nil)
        let bob = try t.store.accounts.register(appleID: "bob@example.com")
        let api = api(t.root)
        var caller = Caller(container: "iCloud.com.example.app", user: .userRecordName(bob.userRecordName), deviceID: "web")
        caller.account = alice
        let who = JSONWriter.line(try api.callerIdentity(as: caller).jsonValue)
        XCTAssertTrue(who.contains(bob.userRecordName), who)
        XCTAssertFalse(who.contains(alice.userRecordName), who)
        caller.account = bob
        XCTAssertTrue(JSONWriter.line(try api.callerIdentity(as: caller).jsonValue).contains(bob.userRecordName))
        // A user gone since: refused whatever was handed over.
        try FileManager.default.removeItem(atPath: t.store.paths.userFile(appleID: "bob@example.com"))
        caller.account = alice
        XCTAssertThrowsError(try api.callerIdentity(as: caller))
    }
}
