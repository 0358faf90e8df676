import CKJSON
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKCore
@testable import CKStore

/// Who a request of `ck serve` acts as (issue 35): a server-to-server key acts as the user who
/// registered it; a refused web auth token says what is wrong with it, not that the device is
/// signed out; signing a user out ends that user's web sessions only, and a user's sessions
/// can be listed and ended.
final class APIServeIdentityTests: XCTestCase {
    static let container = "iCloud.com.example.test"

    func creds(_ scope: DatabaseScope? = .public, api token: String? = nil, web: String? = nil, signature: ServerSignature? = nil,
               endpoint: Endpoint? = nil) -> WebCredentials {
        WebCredentials(container: Self.container, environment: .development, scope: scope, apiToken: token, webAuthToken: web, signature: signature, endpoint: endpoint)
    }

    func code(_ body: () throws -> Any) -> (ServerErrorCode?, String) {
        do { _ = try body(); return (nil, "") } catch let e as CloudKitError { return (e.code, e.reason) } catch { return (nil, "\(error)") }
    }

    func fixture(_ name: String) throws -> String {
        try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/auth/\(name)"), encoding: .utf8)
    }

    func newAPIToken(_ a: CloudKitAPI) throws -> String {
        try a.createAPIToken(name: nil, container: Self.container, environment: .development).document["apiToken"]!.stringValue!
    }

    func webToken(_ a: CloudKitAPI, _ user: Caller.User = .device, keep: Bool = false) throws -> String {
        try a.createWebAuthToken(as: caller(.private, user), keepSignedIn: keep).document["ckWebAuthToken"]!.stringValue!
    }

    /// The fixtures' signed requests (Tests/Fixtures/auth/signed-requests.json), by endpoint.
    func signed(_ endpoint: String) throws -> (keyID: String, signature: ServerSignature, date: Int64) {
        let j = try JSONParser.parse(Array(try fixture("signed-requests.json").utf8))
        let keyID = j["keyID"]!.stringValue!
        let r = try XCTUnwrap(j["requests"]!.arrayValue!.first { $0["target"]!.stringValue!.contains("/public/" + endpoint + "?") })
        let date = r["date"]!.stringValue!
        return (keyID, ServerSignature(keyID: keyID, iso8601Date: date, signatureV1: r["signatureV1"]!.stringValue!,
                                       body: Array(r["body"]!.stringValue!.utf8), target: r["target"]!.stringValue!), Timestamps.parseISO8601(date)!)
    }

    // MARK: item 17: what is wrong with the token

    /// Every way a ckWebAuthToken fails names itself — missing, not a token's shape (a trailing
    /// newline or space named), unknown, expired, of another container — while the device is
    /// signed in; and the preflight that refuses the request says so, with 421's code.
    func testARefusedWebAuthTokenSaysWhatIsWrongWithIt() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let key = try newAPIToken(a)
        let token = try webToken(a)
        let signedOut = try webToken(a)
        _ = try a.endWebSessions(nil, as: caller())
        let live = try webToken(a)
        now.ms += 31 * 60 * 1000
        let fresh = try webToken(a)
        let cases: [(String?, [String])] = [
            (nil, ["carries no ckWebAuthToken", "ck account web-auth-token"]),
            ("", ["ckWebAuthToken is empty"]),
            (fresh + "\n", ["ends in a newline (%0A)", "44 characters, not 43"]),
            (fresh + " ", ["ends in a space (%20)"]),
            ("\r\n" + fresh, ["starts with a carriage return"]),
            (String(fresh.dropLast(3)), ["is 40 characters", "43"]),
            (fresh.replacingOccurrences(of: fresh.prefix(1), with: "+"), ["holds '+'", "base64url"]),
            (signedOut, ["names no session", "signed out"]),
            (String(repeating: "A", count: 43), ["names no session"]),
            (live, ["expired at", "30 minutes"]),
        ]
        _ = token
        for (web, words) in cases {
            let auth = try a.authenticate(creds(.private, api: key, web: web))
            XCTAssertEqual(auth.user, .nobody, String(describing: web))
            let caller = auth.caller(container: Self.container, environment: .development, scope: .private, deviceID: "web")
            let (c, reason) = code { try a.listZones(as: caller) }
            XCTAssertEqual(c, .authenticationRequired, reason)
            XCTAssertEqual(c?.httpStatus, 421)
            for w in words { XCTAssertTrue(reason.contains(w), "'\(w)' not in: \(reason)") }
            XCTAssertFalse(reason.contains("no iCloud account is signed in"), "the device is signed in: \(reason)")
            if let web, web.count > 8 { XCTAssertFalse(reason.contains(web.trimmingCharacters(in: .whitespacesAndNewlines).prefix(12)), "no part of the token is shown: \(reason)") }
        }
        // A session of another container is not this one's.
        let other = try a.createWebAuthToken(as: Caller(container: "iCloud.com.example.other"), keepSignedIn: false).document["ckWebAuthToken"]!.stringValue!
        let foreign = try a.authenticate(creds(api: key, web: other))
        XCTAssertTrue(foreign.nobodyReason?.reason.contains("is a session of iCloud.com.example.other (development)") == true, "\(String(describing: foreign.nobodyReason))")
        // users/caller, reading nothing, refuses the same way.
        let (c, reason) = code { try a.callerIdentity(as: foreign.caller(container: Self.container, environment: .development, scope: .public, deviceID: "web")) }
        XCTAssertEqual(c, .authenticationRequired)
        XCTAssertTrue(reason.contains("is a session of iCloud.com.example.other"), reason)
        // The CLI's own refusals still name the device's account.
        _ = try a.signOut(as: caller())
        XCTAssertTrue(code { try a.listZones(as: caller()) }.1.contains("no iCloud account is signed in on this device"))
    }

    // MARK: item 4: signing out the user named; listing and ending sessions

    func testSigningOutAnotherUserEndsTheirSessionsAndLeavesTheDeviceAlone() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let key = try newAPIToken(a)
        try t.store.accounts.register(appleID: "bob@example.com")
        let bob = Caller.User.appleID("bob@example.com")
        let bobs = try webToken(a, bob)
        let alices = try webToken(a)
        let before = try t.store.accounts.events().count

        let out = try a.signOut(as: caller(.private, bob)).document
        XCTAssertEqual(out["status"], "available", "the device is still alice's: \(out)")
        XCTAssertEqual(out["appleID"], "alice@example.com")
        XCTAssertEqual(out["signedOut"]?["appleID"], "bob@example.com")
        XCTAssertEqual(out["signedOut"]?["webSessionsEnded"], 1)
        XCTAssertEqual(try a.authenticate(creds(api: key, web: bobs)).user, .nobody, "bob's token is dead")
        XCTAssertNotEqual(try a.authenticate(creds(api: key, web: alices)).user, .nobody, "alice's lives")
        XCTAssertEqual(try t.store.accounts.device().appleID, "alice@example.com")
        XCTAssertEqual(try t.store.accounts.events().count, before, "no account-changed event: the device's account did not change")
        // bob is still a user of this device (his data, --as).
        XCTAssertNoThrow(try a.listZones(as: caller(.private, bob)))

        // --as the device's own account signs the device out, as plain signout does.
        let mine = try a.signOut(as: caller(.private, .appleID("ALICE@example.com"))).document
        XCTAssertEqual(mine["status"], "noAccount")
        XCTAssertEqual(mine["signedOut"]?["appleID"], "alice@example.com")
        XCTAssertEqual(try a.authenticate(creds(api: key, web: alices)).user, .nobody)
        XCTAssertEqual(try t.store.accounts.events().last?["status"], "noAccount")
        // A user who never signed in here: refused, nothing changed.
        let snapshot = t.snapshot()
        XCTAssertEqual(code { try a.signOut(as: caller(.private, .appleID("carol@example.com"))) }.0, .authenticationRequired)
        XCTAssertEqual(t.snapshot(), snapshot)
        // Nobody signed in, no --as: nothing to sign out.
        XCTAssertEqual(try a.signOut(as: caller()).document, ["status": "noAccount"])
    }

    func testAUsersSessionsAreListedAndEndedOneByOneOrAll() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let key = try newAPIToken(a)
        let me = caller()
        try t.store.accounts.register(appleID: "bob@example.com")
        let bobs = try webToken(a, .appleID("bob@example.com"))
        let one = try webToken(a)
        now.ms += 1_000
        let two = try webToken(a, keep: true)
        // A request renews `two`: its replacement is of the same session.
        now.ms += 61_000
        let renewed = try XCTUnwrap(try a.rotateWebAuthToken(try a.authenticate(creds(api: key, web: two))))

        let listed = try a.listWebSessions(as: me)
        XCTAssertEqual(listed.listKey, "sessions")
        let sessions = try XCTUnwrap(listed.document["sessions"]?.arrayValue)
        XCTAssertEqual(sessions.count, 2, "two sign-ins of alice; bob's are his: \(sessions)")
        XCTAssertEqual(sessions.map { $0["created"] }, [.int(1_700_000_000_000), .int(1_700_000_001_000)])
        XCTAssertEqual(sessions[1]["keepSignedIn"], true)
        XCTAssertEqual(sessions[1]["renewed"], .int(now.ms), "the rotation renewed it")
        XCTAssertEqual(sessions[1]["expires"], .int(now.ms + 14 * 24 * 3600 * 1000))
        XCTAssertNil(sessions[0]["renewed"])
        XCTAssertEqual(sessions[0]["containerIdentifier"]?.stringValue, Self.container)
        let ids = sessions.map { $0["id"]!.stringValue! }
        for id in ids { XCTAssertEqual(id.count, 16) }
        let text = JSONWriter.compact(.object(listed.document))
        for tok in [one, two, renewed] { XCTAssertFalse(text.contains(tok), "no token is listed") }

        // Ending the renewed session ends its tokens, the replaced one and its replacement.
        XCTAssertEqual(try a.endWebSessions(ids[1], as: me).document, ["ended": .array([.string(ids[1])])])
        for tok in [two, renewed] { XCTAssertEqual(try a.authenticate(creds(api: key, web: tok)).user, .nobody) }
        XCTAssertNotEqual(try a.authenticate(creds(api: key, web: one)).user, .nobody)
        let snapshot = t.snapshot()
        XCTAssertEqual(code { try a.endWebSessions(ids[1], as: me) }.0, .notFound, "ended already")
        XCTAssertEqual(code { try a.endWebSessions("not-an-id", as: me) }.0, .badRequest)
        XCTAssertEqual(code { try a.endWebSessions(nil, as: caller(.private, .appleID("carol@example.com"))) }.0, .authenticationRequired)
        XCTAssertEqual(t.snapshot(), snapshot, "refusals change nothing")
        // bob's session is not alice's to end by its id.
        let bobID = try XCTUnwrap(try a.listWebSessions(as: caller(.private, .appleID("bob@example.com"))).document["sessions"]?.arrayValue?.first?["id"]?.stringValue)
        XCTAssertEqual(code { try a.endWebSessions(bobID, as: me) }.0, .notFound)
        // --all: every one of alice's; bob's stays.
        XCTAssertEqual(try a.endWebSessions(nil, as: me).document, ["ended": .array([.string(ids[0])])])
        XCTAssertEqual(try a.listWebSessions(as: me).document["sessions"], .array([]))
        XCTAssertNotEqual(try a.authenticate(creds(api: key, web: bobs)).user, .nobody)
    }

    // MARK: item 7: a server-to-server key acts as the user who registered it

    func testAServerKeyActsAsTheUserWhoRegisteredIt() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        try t.store.accounts.register(appleID: "bob@example.com")
        _ = try a.importSchema(SchemaImportRequest(text: """
            DEFINE SCHEMA
                RECORD TYPE Items (title STRING, GRANT WRITE TO "_creator", GRANT CREATE TO "_icloud", GRANT READ TO "_world");
            """), as: caller(.public))
        // bob registers the key (--as): it acts as bob, not as the device's alice.
        let added = try a.addServerKey(keyID: try signed("users/caller").keyID, publicKeyPEM: try fixture("server-key-public.pem"), container: Self.container,
                                       environment: .development, as: caller(.private, .appleID("bob@example.com"))).document
        let bob = try XCTUnwrap(try t.store.accounts.user(appleID: "bob@example.com"))
        XCTAssertEqual(added["userRecordName"], .string(bob.userRecordName))
        XCTAssertEqual(added["appleID"], "bob@example.com")
        XCTAssertEqual(try a.listServerKeys(container: Self.container, environment: .development).document["keys"]?.arrayValue?.first?["userRecordName"], .string(bob.userRecordName))

        let (keyID, callerSig, date) = try signed("users/caller")
        now.ms = date
        let auth = try a.authenticate(creds(signature: callerSig, endpoint: .usersCaller))
        XCTAssertEqual(auth.user, .userRecordName(bob.userRecordName))
        XCTAssertEqual(auth.serverKeyID, keyID)
        let web = auth.caller(container: Self.container, environment: .development, scope: .public, deviceID: "web")
        XCTAssertEqual(try a.callerIdentity(as: web).document["userRecordName"], .string(bob.userRecordName))
        // A save is bob's: creator and last modifier; the schema's grants apply to him as a user.
        let saved = try a.modifyRecords(ModifyRequest(operations: [RecordOperation(type: .create, recordName: "by-key", recordType: "Items", fields: [
            "title": RecordField(type: FieldType(.string), value: "signed")])]), as: web)
        let record = try XCTUnwrap(saved.results[0].record, "\(String(describing: saved.results[0].error))")
        XCTAssertEqual(record.created.userRecordName, bob.userRecordName)
        XCTAssertEqual(record.modified.userRecordName, bob.userRecordName)
        // "_creator" may write: bob through his key; alice may not.
        XCTAssertNil(try a.modifyRecords(ModifyRequest(operations: [RecordOperation(type: .forceUpdate, recordName: "by-key", recordType: "Items", fields: [
            "title": RecordField(type: FieldType(.string), value: "again")])]), as: web).results[0].error)
        XCTAssertEqual(try a.modifyRecords(ModifyRequest(operations: [RecordOperation(type: .forceUpdate, recordName: "by-key", recordType: "Items", fields: [
            "title": RecordField(type: FieldType(.string), value: "alice")])]), as: caller(.public)).results[0].error?.code, .accessDenied)
        // The device's status is the device's: a restricted device does not stop a developer's key.
        _ = try a.setAccountStatus(.restricted, as: caller())
        XCTAssertEqual(try a.callerIdentity(as: web).document["userRecordName"], .string(bob.userRecordName))

        // The other users/* endpoints refuse a key: 403, no sign-in.
        for (ep, endpoint) in [("users/discover", Endpoint.usersDiscover), ("users/lookup/email", .usersLookupEmail)] {
            let (_, sig, _) = try signed(ep)
            let (c, reason) = code { try a.authenticate(creds(signature: sig, endpoint: endpoint)) }
            XCTAssertEqual(c, .accessDenied, ep)
            XCTAssertEqual(c?.httpStatus, 403)
            XCTAssertTrue(reason.contains("only users/caller"), reason)
        }
    }

    /// A key reaches the public database only, and a push token is one of its user's devices:
    /// were tokens/create or tokens/register to take a key, its long-poll would deliver the
    /// user's private-database notifications — record names, zones, and the fields a
    /// subscription's desiredKeys name — to whoever holds the key.
    func testAServerKeyMakesNoPushTokenOfItsUser() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        _ = try a.addServerKey(keyID: try signed("users/caller").keyID, publicKeyPEM: try fixture("server-key-public.pem"), container: Self.container,
                               environment: .development, as: caller())
        let j = try JSONParser.parse(Array(try fixture("signed-requests.json").utf8))
        for (path, endpoint) in [("tokens/create", Endpoint.tokensCreate), ("tokens/register", .tokensRegister)] {
            let r = try XCTUnwrap(j["requests"]!.arrayValue!.first { $0["target"]!.stringValue!.contains("/development/" + path + "?") })
            let date = r["date"]!.stringValue!
            now.ms = Timestamps.parseISO8601(date)!
            let sig = ServerSignature(keyID: j["keyID"]!.stringValue!, iso8601Date: date, signatureV1: r["signatureV1"]!.stringValue!,
                                      body: Array(r["body"]!.stringValue!.utf8), target: r["target"]!.stringValue!)
            let (c, reason) = code { try a.authenticate(creds(nil, signature: sig, endpoint: endpoint)) }
            XCTAssertEqual(c, .accessDenied, "\(path) under a key: \(reason)")
            XCTAssertEqual(c?.httpStatus, 403)
        }
    }

    func testRegisteringAKeyNeedsAUserAndAnOlderStoresKeyActsAsNobodySayingHowToMendIt() throws {
        let t = TempStore(signIn: false), now = Now()
        let a = api(t.root, now)
        let pem = try fixture("server-key-public.pem")
        let snapshot = t.snapshot()
        let (c, reason) = code { try a.addServerKey(keyID: "k", publicKeyPEM: pem, container: Self.container, environment: .development, as: caller()) }
        XCTAssertEqual(c, .authenticationRequired)
        XCTAssertTrue(reason.contains("registering a server-to-server key") && reason.contains("no iCloud account is signed in"), reason)
        XCTAssertEqual(code { try a.addServerKey(keyID: "k", publicKeyPEM: pem, container: Self.container, environment: .development,
                                                 as: caller(.private, .appleID("carol@example.com"))) }.0, .authenticationRequired)
        XCTAssertEqual(t.snapshot(), snapshot, "nothing registered")

        // A key file as an older ck wrote it: no userRecordName.
        let (keyID, querySig, date) = try signed("records/query")
        let dir = t.root + "/containers/\(Self.container)/development"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let old: JSONValue = ["schemaVersion": 1, "keys": [["keyID": .string(keyID), "publicKey": .string(pem), "created": 1]]]
        try Data(JSONWriter.compact(old).utf8).write(to: URL(fileURLWithPath: dir + "/server-keys.json"))
        now.ms = date
        let auth = try a.authenticate(creds(signature: querySig, endpoint: .recordsQuery))
        XCTAssertEqual(auth.user, .nobody)
        let web = auth.caller(container: Self.container, environment: .development, scope: .public, deviceID: "web")
        try a.defineQueryableType("Items", container: Self.container)
        XCTAssertNoThrow(try a.queryRecords(QueryRecordsRequest(QueryRequest(recordType: "Items")), as: web), "it still reads the public database")
        let (c2, why) = code { try a.modifyRecords(ModifyRequest(operations: [RecordOperation(type: .create, recordName: "x", recordType: "Items", fields: [:])]), as: web) }
        XCTAssertEqual(c2, .accessDenied, "a key has no sign-in page to go to: 403, not 421")
        XCTAssertTrue(why.contains("has no user") && why.contains("ck server-key delete \(keyID)") && why.contains("ck server-key add \(keyID)"), why)
        XCTAssertEqual(code { try a.callerIdentity(as: web) }.0, .accessDenied)
    }
}
