import CKCrypto
import CKJSON
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKCore
@testable import CKStore

/// Authentication for `ck serve` (issue 29, Docs/serve.md "Tokens, keys and sign-in"), in
/// process: API tokens, web auth tokens (sessions, rotation, revocation, the device's status)
/// and server-to-server signatures — with forged, stale, foreign and huge inputs, and the data
/// directory unchanged by every refusal.
final class APIAuthTests: XCTestCase {
    static let container = "iCloud.com.example.test"

    func creds(_ scope: DatabaseScope? = .public, container: String = APIAuthTests.container, env: CKModel.Environment = .development,
               api token: String? = nil, web: String? = nil, signature: ServerSignature? = nil) -> WebCredentials {
        WebCredentials(container: container, environment: env, scope: scope, apiToken: token, webAuthToken: web, signature: signature)
    }

    func code(_ body: () throws -> Any) -> (ServerErrorCode?, String) {
        do { _ = try body(); return (nil, "") } catch let e as CloudKitError { return (e.code, e.reason) } catch { return (nil, "\(error)") }
    }

    func fixture(_ name: String) throws -> String {
        try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/auth/\(name)"), encoding: .utf8)
    }

    func newAPIToken(_ a: CloudKitAPI, env: CKModel.Environment = .development, container: String = APIAuthTests.container) throws -> String {
        try a.createAPIToken(name: nil, container: container, environment: env).document["apiToken"]!.stringValue!
    }

    func everyFileText(_ t: TempStore) -> String {
        t.snapshot().values.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
    }

    // MARK: API tokens

    func testAPITokensAreMadeListedDeletedAndKeptAcrossARestart() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let first = try a.createAPIToken(name: "web app", container: Self.container, environment: .development).document
        let token = first["apiToken"]!.stringValue!
        XCTAssertTrue(token.utf8.count == 64 && token.allSatisfy { "0123456789abcdef".contains($0) }, token)
        XCTAssertEqual(first["containerIdentifier"], .string(Self.container))
        XCTAssertEqual(first["environment"], "development")
        XCTAssertEqual(first["name"], "web app")
        XCTAssertEqual(first["created"], .int(now.ms))
        now.ms += 1
        let second = try newAPIToken(a)
        XCTAssertNotEqual(second, token)
        let production = try newAPIToken(a, env: .production)

        // A restart: a new API over the same directory finds them all, oldest first.
        let b = api(t.root, now)
        let list = try b.listAPITokens(container: Self.container, environment: .development)
        XCTAssertEqual(list.listKey, "apiTokens")
        XCTAssertEqual(list.document["apiTokens"]?.arrayValue?.map { $0["apiToken"]!.stringValue! }, [token, second])
        XCTAssertEqual(try b.listAPITokens(container: Self.container, environment: .production).document["apiTokens"]?.arrayValue?.count, 1)
        XCTAssertEqual(try b.listAPITokens(container: "iCloud.com.example.other", environment: .development).document["apiTokens"], .array([]))
        let file = try XCTUnwrap(try JSONParser.parse(Array(Data(contentsOf: URL(fileURLWithPath: t.root + "/containers/iCloud.com.example.test/development/api-tokens.json")))))
        XCTAssertEqual(file["apiTokens"]?.arrayValue?.count, 2, "readable JSON where Docs/storage.md says")

        XCTAssertEqual(try b.deleteAPIToken(token, container: Self.container, environment: .development).document, ["apiToken": .string(token), "deleted": true])
        XCTAssertEqual(try b.listAPITokens(container: Self.container, environment: .development).document["apiTokens"]?.arrayValue?.count, 1)
        XCTAssertNoThrow(try b.authenticate(creds(env: .production, api: production)))
    }

    func testBadAPITokenRequestsNameTheProblemAndChangeNothing() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let token = try newAPIToken(a)
        let before = t.snapshot()
        var (c, why) = code { try a.deleteAPIToken(String(repeating: "0", count: 64), container: Self.container, environment: .development) }
        XCTAssertEqual(c, .notFound)
        XCTAssertTrue(why.contains("00000000…") && !why.contains(String(repeating: "0", count: 64)), why)
        (c, why) = code { try a.deleteAPIToken(token, container: Self.container, environment: .production) }
        XCTAssertEqual(c, .notFound, "a token of development is not one of production")
        (c, why) = code { try a.deleteAPIToken("not-a-token", container: Self.container, environment: .development) }
        XCTAssertEqual(c, .badRequest)
        XCTAssertTrue(why.contains("64 lowercase hex"), why)
        (c, _) = code { try a.deleteAPIToken(String(repeating: "f", count: 5_000_000), container: Self.container, environment: .development) }
        XCTAssertEqual(c, .badRequest)
        (c, why) = code { try a.createAPIToken(name: "", container: Self.container, environment: .development) }
        XCTAssertEqual(c, .badRequest, why)
        (c, why) = code { try a.createAPIToken(name: "tab\there", container: Self.container, environment: .development) }
        XCTAssertEqual(c, .badRequest, why)
        (c, _) = code { try a.createAPIToken(name: String(repeating: "n", count: 300), container: Self.container, environment: .development) }
        XCTAssertEqual(c, .badRequest)
        (c, why) = code { try a.createAPIToken(name: nil, container: "com.example.nope", environment: .development) }
        XCTAssertEqual(c, .badRequest)
        XCTAssertTrue(why.contains("iCloud."), why)
        XCTAssertEqual(t.snapshot(), before)
    }

    // MARK: authenticate: the API token

    func testEveryRequestNeedsAnAPITokenOfItsContainerAndEnvironment() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let token = try newAPIToken(a)
        let production = try newAPIToken(a, env: .production)
        let elsewhere = try newAPIToken(a, container: "iCloud.com.example.other")
        let before = t.snapshot()

        XCTAssertEqual(try a.authenticate(creds(api: token)).user, .nobody)
        XCTAssertEqual(try a.authenticate(creds(nil, api: token)).user, .nobody, "tokens/* paths have no database")
        XCTAssertEqual(try a.authenticate(creds(.private, api: token)).user, .nobody, "no session: nobody; the preflight asks for one")

        func refused(_ c: WebCredentials, _ words: String, _ line: UInt = #line) {
            XCTAssertThrowsError(try a.authenticate(c), line: line) { e in
                let e = e as! CloudKitError
                XCTAssertEqual(e.code, .authenticationFailed, line: line)
                XCTAssertEqual(e.code.httpStatus, 401, line: line)
                XCTAssertTrue(e.reason.contains(words), e.reason, line: line)
                for secret in [token, production, elsewhere] { XCTAssertFalse(e.reason.contains(secret), "a secret echoed: \(e.reason)", line: line) }
            }
        }
        refused(creds(), "no ckAPIToken and no server-to-server signature")
        refused(creds(api: ""), "no ckAPIToken")
        var forged = Array(token)
        forged[63] = forged[63] == "0" ? "1" : "0"
        refused(creds(api: String(forged)), "is not an API token of iCloud.com.example.test (development) (revoked, or never made in this data directory); make one: ck --container iCloud.com.example.test api-token create")
        refused(creds(api: token.uppercased()), "64 lowercase hex")
        refused(creds(api: production), "is a token of the production environment")
        refused(creds(env: .production, api: token), "is a token of the development environment")
        // A token of another container of the data directory (the default container's, in a
        // page configured with the app's own): named, with the command that makes the right one.
        refused(creds(api: elsewhere), "is a token of iCloud.com.example.other (development), not of iCloud.com.example.test; make one for it: ck --container iCloud.com.example.test api-token create")
        refused(creds(container: "iCloud.com.example.other", api: token), "is a token of iCloud.com.example.test (development), not of iCloud.com.example.other; make one for it: ck --container iCloud.com.example.other api-token create")
        refused(creds(container: "iCloud.com.example.other", env: .production, api: production), "is a token of iCloud.com.example.test (production), not of iCloud.com.example.other; make one for it: ck --container iCloud.com.example.other --env production api-token create")
        refused(creds(api: String(repeating: "a", count: 8_000_000)), "aaaaaaaa…")
        refused(creds(api: token + "\n"), "is 65 characters, not 64: it ends in a newline (%0A)")
        refused(creds(api: String(token.dropLast())), "is 63 characters; an API token is 64 lowercase hex digits")
        // Deleted: refused from the next request on.
        _ = try a.deleteAPIToken(token, container: Self.container, environment: .development)
        refused(creds(api: token), "not an API token of")
        _ = before
    }

    // MARK: web auth tokens

    func testAWebAuthTokenNamesItsUserAndRotatesKeepingTheOldOneUntilItExpires() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let apiKey = try newAPIToken(a)
        let made = try a.createWebAuthToken(as: caller(), keepSignedIn: false).document
        let alice = try t.store.accounts.user(appleID: "alice@example.com")!.userRecordName
        let token = made["ckWebAuthToken"]!.stringValue!
        let expires = now.ms + 30 * 60 * 1000
        XCTAssertEqual(made["userRecordName"], .string(alice))
        XCTAssertEqual(made["expires"], .int(expires))
        XCTAssertEqual(token.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))), token,
                       "nothing in a token changes under URL encoding")
        XCTAssertFalse(everyFileText(t).contains(token), "the store keeps only the token's hash")

        // Within a minute: the user, no rotation.
        now.ms += 30_000
        let within = try a.authenticate(creds(api: apiKey, web: token))
        XCTAssertEqual(within.user, .userRecordName(alice))
        XCTAssertNil(try a.rotateWebAuthToken(within))
        // After a minute: the next request gets a replacement, once.
        now.ms += 31_000
        let first = try a.authenticate(creds(api: apiKey, web: token))
        XCTAssertEqual(first.user, .userRecordName(alice))
        let rotated = try XCTUnwrap(try a.rotateWebAuthToken(first))
        XCTAssertNil(try a.rotateWebAuthToken(first), "once")
        XCTAssertNotEqual(rotated, token)
        XCTAssertFalse(everyFileText(t).contains(rotated))
        // As live CloudKit: the replaced token keeps working until its own expiry, without
        // another rotation, long past any grace — after a restart too.
        now.ms += 20 * 60 * 1000
        let replayed = try api(t.root, now).authenticate(creds(api: apiKey, web: token))
        XCTAssertEqual(replayed.user, .userRecordName(alice), "a replaced token lasts until it expires")
        XCTAssertNil(try a.rotateWebAuthToken(replayed), "a replaced token is not replaced again")
        now.ms = expires
        let dead = try a.authenticate(creds(api: apiKey, web: token))
        XCTAssertEqual(dead.user, .nobody, "then it is dead")
        XCTAssertTrue(dead.nobodyReason?.reason.contains("expired at") == true, "\(String(describing: dead.nobodyReason))")
        // The new one has a fresh lifetime: it rotates in its turn.
        let second = try a.authenticate(creds(api: apiKey, web: rotated))
        XCTAssertEqual(second.user, .userRecordName(alice))
        let third = try XCTUnwrap(try a.rotateWebAuthToken(second))
        // Unused for 30 minutes: expired.
        now.ms += 30 * 60 * 1000 + 1
        XCTAssertEqual(try a.authenticate(creds(api: apiKey, web: third)).user, .nobody)
    }

    /// `ck serve --strict-token-rotation`: Apple's documented single use — a replaced token
    /// works for two minutes (the requests on their way with it), then is refused, saying so.
    /// The rule is the reader's: the same store under the live rule takes it again.
    func testUnderStrictRotationAReplacedTokenLastsTwoMinutes() throws {
        let t = TempStore(), now = Now()
        let strict = api(t.root, now, webTokenRotation: .strict)
        let apiKey = try newAPIToken(strict)
        let token = try strict.createWebAuthToken(as: caller(), keepSignedIn: false).document["ckWebAuthToken"]!.stringValue!
        now.ms += 61_000
        let rotated = try XCTUnwrap(try strict.rotateWebAuthToken(try strict.authenticate(creds(api: apiKey, web: token))))
        now.ms += 119_000
        XCTAssertNotEqual(try strict.authenticate(creds(api: apiKey, web: token)).user, .nobody, "in flight: still taken")
        now.ms += 1_000
        let refused = try strict.authenticate(creds(.private, api: apiKey, web: token))
        XCTAssertEqual(refused.user, .nobody)
        let why = try XCTUnwrap(refused.nobodyReason)
        XCTAssertEqual(why.code, .authenticationRequired)
        XCTAssertTrue(why.reason.contains("was replaced at") && why.reason.contains("--strict-token-rotation"), why.reason)
        // The preflight refuses with that reason, not with the device's account (which is signed in).
        let caller = refused.caller(container: Self.container, environment: .development, scope: .private, deviceID: "web")
        let (c, reason) = code { try strict.listZones(as: caller) }
        XCTAssertEqual(c, .authenticationRequired)
        XCTAssertTrue(reason.contains("was replaced at") && !reason.contains("no iCloud account"), reason)
        XCTAssertNotEqual(try strict.authenticate(creds(api: apiKey, web: rotated)).user, .nobody, "the newest token works")
        XCTAssertNotEqual(try api(t.root, now).authenticate(creds(api: apiKey, web: token)).user, .nobody, "the live rule, on the same store, takes it")
    }

    func testKeepSignedInLastsTwoWeeks() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let apiKey = try newAPIToken(a)
        let made = try a.createWebAuthToken(as: caller(), keepSignedIn: true).document
        XCTAssertEqual(made["expires"], .int(now.ms + 14 * 24 * 3600 * 1000))
        now.ms += 13 * 24 * 3600 * 1000
        let r = try a.authenticate(creds(api: apiKey, web: made["ckWebAuthToken"]!.stringValue!))
        XCTAssertNotEqual(r.user, .nobody)
        let renewed = try XCTUnwrap(try a.rotateWebAuthToken(r))
        now.ms += 14 * 24 * 3600 * 1000 - 1
        XCTAssertNotEqual(try a.authenticate(creds(api: apiKey, web: renewed)).user, .nobody, "a rotation renews two weeks")
    }

    func testForgedForeignAndHugeWebAuthTokensAreNobody() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let apiKey = try newAPIToken(a)
        let prodAPI = try newAPIToken(a, env: .production)
        let otherAPI = try newAPIToken(a, container: "iCloud.com.example.other")
        let token = try a.createWebAuthToken(as: caller(), keepSignedIn: false).document["ckWebAuthToken"]!.stringValue!
        var flipped = Array(token)
        flipped[10] = flipped[10] == "A" ? "B" : "A"
        for web in [String(flipped), String(token.dropLast()), token + "A", token.uppercased(), "", String(repeating: "A", count: 43),
                    String(repeating: "x", count: 10_000_000), token.replacingOccurrences(of: "-", with: "+"), "../../device"] where web != token {
            let auth = try a.authenticate(creds(api: apiKey, web: web))
            XCTAssertEqual(auth.user, .nobody, String(web.prefix(60)))
            XCTAssertNil(auth.webAuthToken)
            XCTAssertEqual(auth.nobodyReason?.code, .authenticationRequired)
            if web.count >= 20 { XCTAssertFalse(auth.nobodyReason?.reason.contains(String(web.prefix(20))) ?? true, "the token is not echoed: \(String(describing: auth.nobodyReason))") }
        }
        XCTAssertEqual(try a.authenticate(creds(env: .production, api: prodAPI, web: token)).user, .nobody, "a session of development only")
        XCTAssertEqual(try a.authenticate(creds(container: "iCloud.com.example.other", api: otherAPI, web: token)).user, .nobody, "of its container only")
        // A session never stands in for the API token.
        XCTAssertThrowsError(try a.authenticate(creds(web: token)))
    }

    func testSigningOutOrSwitchingAccountsRevokesTheSessions() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let apiKey = try newAPIToken(a)
        let device = caller()
        let one = try a.createWebAuthToken(as: device, keepSignedIn: true).document["ckWebAuthToken"]!.stringValue!
        let two = try a.createWebAuthToken(as: device, keepSignedIn: false).document["ckWebAuthToken"]!.stringValue!
        _ = try a.signOut(as: device)
        for tok in [one, two] { XCTAssertEqual(try a.authenticate(creds(api: apiKey, web: tok)).user, .nobody) }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: t.root + "/web-sessions"), [])

        _ = try a.signIn(SignInRequest(appleID: "alice@example.com"), as: device)
        let alices = try a.createWebAuthToken(as: device, keepSignedIn: false).document["ckWebAuthToken"]!.stringValue!
        _ = try a.signIn(SignInRequest(appleID: "bob@example.com"), as: device)
        XCTAssertEqual(try a.authenticate(creds(api: apiKey, web: alices)).user, .nobody, "bob signing in signs alice out")
        let bobs = try a.createWebAuthToken(as: device, keepSignedIn: false).document
        XCTAssertEqual(try a.authenticate(creds(api: apiKey, web: bobs["ckWebAuthToken"]!.stringValue!)).user, .userRecordName(bobs["userRecordName"]!.stringValue!))
    }

    func testTheDevicesStatusBindsItsOwnAccountsSessionsAndNoOthers() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let apiKey = try newAPIToken(a)
        // bob signed in here once; alice is the device's account now.
        _ = try a.signIn(SignInRequest(appleID: "bob@example.com"), as: caller())
        _ = try a.signIn(SignInRequest(appleID: "alice@example.com"), as: caller())
        let alice = try a.createWebAuthToken(as: caller(), keepSignedIn: false).document["ckWebAuthToken"]!.stringValue!
        let bob = try a.createWebAuthToken(as: caller(.private, .appleID("bob@example.com")), keepSignedIn: false).document
        XCTAssertNotNil(bob["userRecordName"])
        func privateRead(_ web: String) throws -> ServerErrorCode? {
            let user = try a.authenticate(creds(.private, api: apiKey, web: web)).user
            return code { try a.listZones(as: caller(.private, user)) }.0
        }
        XCTAssertNil(try privateRead(alice))
        XCTAssertNil(try privateRead(bob["ckWebAuthToken"]!.stringValue!))
        for status in [AccountStatus.restricted, .temporarilyUnavailable, .couldNotDetermine] {
            _ = try a.setAccountStatus(status, as: caller())
            XCTAssertEqual(try privateRead(alice), .authenticationRequired, "\(status) binds the device's own account over HTTP")
            XCTAssertNil(try privateRead(bob["ckWebAuthToken"]!.stringValue!), "another user's session stands on its own")
            XCTAssertEqual(code { try a.createWebAuthToken(as: caller(), keepSignedIn: false) }.0, .authenticationRequired)
        }
    }

    func testAWebAuthTokenNeedsAUserSignedInHere() throws {
        let t = TempStore(signIn: false), now = Now()
        let a = api(t.root, now)
        let before = t.snapshot()
        var (c, why) = code { try a.createWebAuthToken(as: caller(), keepSignedIn: false) }
        XCTAssertEqual(c, .authenticationRequired)
        XCTAssertTrue(why.contains("no iCloud account is signed in"), why)
        (c, why) = code { try a.createWebAuthToken(as: caller(.private, .appleID("carol@example.com")), keepSignedIn: false) }
        XCTAssertEqual(c, .authenticationRequired)
        XCTAssertTrue(why.contains("never signed in on this device"), why)
        (c, _) = code { try a.createWebAuthToken(as: caller(.private, .nobody), keepSignedIn: false) }
        XCTAssertEqual(c, .badRequest)
        (c, _) = code { try a.createWebAuthToken(as: Caller(container: "nope"), keepSignedIn: false) }
        XCTAssertEqual(c, .badRequest)
        XCTAssertEqual(t.snapshot(), before)
    }

    func testTheSignInPageListsTheUsersWhoSignedInHere() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        _ = try a.signIn(SignInRequest(appleID: "bob@example.com", givenName: "Bob", familyName: "Builder"), as: caller())
        let body = try a.webSignInUsers()
        XCTAssertEqual(body.listKey, "users")
        let users = try XCTUnwrap(body.document["users"]?.arrayValue)
        XCTAssertEqual(users.map { $0["appleID"]!.stringValue! }, ["alice@example.com", "bob@example.com"])
        XCTAssertEqual(users[0]["name"], "Alice")
        XCTAssertEqual(users[1]["name"], "Bob Builder")
        XCTAssertNotNil(users[1]["userRecordName"]?.stringValue)
    }

    // MARK: server-to-server keys

    func testServerKeysAreRegisteredListedAndDeleted() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let pem = try fixture("server-key-public.pem")
        let added = try a.addServerKey(keyID: "key-1", publicKeyPEM: pem, container: Self.container, environment: .development, as: caller()).document
        XCTAssertEqual(added["keyID"], "key-1")
        XCTAssertEqual(added["publicKey"], .string(pem), "openssl's PEM, as it wrote it")
        XCTAssertEqual(added["created"], .int(now.ms))
        XCTAssertEqual(added["containerIdentifier"], .string(Self.container))
        // Base64 of the DER alone names the same key, and reads back in PEM.
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        XCTAssertEqual(try a.addServerKey(keyID: "key-2", publicKeyPEM: body, container: Self.container, environment: .development, as: caller()).document["publicKey"], .string(pem))
        let before = t.snapshot()
        let (c, why) = code { try a.addServerKey(keyID: "key-1", publicKeyPEM: pem, container: Self.container, environment: .development, as: caller()) }
        XCTAssertEqual(c, .exists)
        XCTAssertTrue(why.contains("key-1"), why)
        XCTAssertEqual(t.snapshot(), before)

        let listed = try api(t.root, now).listServerKeys(container: Self.container, environment: .development)
        XCTAssertEqual(listed.listKey, "keys")
        XCTAssertEqual(listed.document["keys"]?.arrayValue?.map { $0["keyID"]!.stringValue! }, ["key-1", "key-2"])
        XCTAssertEqual(try a.listServerKeys(container: Self.container, environment: .production).document["keys"], .array([]))
        XCTAssertEqual(try a.deleteServerKey(keyID: "key-2", container: Self.container, environment: .development).document, ["keyID": "key-2", "deleted": true])
        XCTAssertEqual(code { try a.deleteServerKey(keyID: "key-2", container: Self.container, environment: .development) }.0, .notFound)
    }

    func testKeysThatAreNotP256PublicKeysAreRefusedSayingWhy() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let before = t.snapshot()
        let cases: [(String, String)] = [
            (try fixture("server-key-private.pem"), "private key"),
            (try fixture("secp384r1-public.pem"), "secp384r1"),
            (try fixture("rsa-public.pem"), "rsaEncryption"),
            ("hello", "not a PEM public key"),
            ("", "not a PEM public key"),
            ("-----BEGIN PUBLIC KEY-----\nAAAA\n", "no '-----END PUBLIC KEY-----' line"),
            ("-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n", "not valid base64"),
            ("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "no PUBLIC KEY block"),
            (String(repeating: "A", count: 200_000), "limit"),
        ]
        for (pem, words) in cases {
            let (c, why) = code { try a.addServerKey(keyID: "k", publicKeyPEM: pem, container: Self.container, environment: .development, as: caller()) }
            XCTAssertEqual(c, .badRequest, words)
            XCTAssertTrue(why.contains(words), "\(words): \(why)")
        }
        for id in ["", "has space", "slash/", String(repeating: "k", count: 129), "tab\t"] {
            XCTAssertEqual(code { try a.addServerKey(keyID: id, publicKeyPEM: try self.fixture("server-key-public.pem"), container: Self.container, environment: .development, as: caller()) }.0, .badRequest, id)
        }
        XCTAssertEqual(t.snapshot(), before)
    }

    // MARK: authenticate: signatures

    struct Signed {
        let date, body, target, signature: String
        func signature(body: String? = nil, target: String? = nil, date: String? = nil, sig: String? = nil, keyID: String) -> ServerSignature {
            ServerSignature(keyID: keyID, iso8601Date: date ?? self.date, signatureV1: sig ?? signature, body: Array((body ?? self.body).utf8), target: target ?? self.target)
        }
    }

    func signedFixtures() throws -> (keyID: String, requests: [Signed]) {
        let j = try JSONParser.parse(Array(try fixture("signed-requests.json").utf8))
        let requests = j["requests"]!.arrayValue!.map {
            Signed(date: $0["date"]!.stringValue!, body: $0["body"]!.stringValue!, target: $0["target"]!.stringValue!, signature: $0["signatureV1"]!.stringValue!)
        }
        return (j["keyID"]!.stringValue!, requests)
    }

    func testSignaturesMadeByOpenSSLAuthenticateInThePublicDatabaseOnly() throws {
        let t = TempStore(), now = Now()
        let a = api(t.root, now)
        let (keyID, requests) = try signedFixtures()
        _ = try a.addServerKey(keyID: keyID, publicKeyPEM: try fixture("server-key-public.pem"), container: Self.container, environment: .development, as: caller())
        now.ms = Timestamps.parseISO8601(requests[0].date)! + 1_000
        let query = requests[0], caller = requests[1], privateZones = requests[2]
        let before = t.snapshot()

        // The key acts as the user who registered it (alice, the device's account).
        let alice = try XCTUnwrap(try t.store.accounts.user(appleID: "alice@example.com"))
        var asAlice = WebAuthentication(user: .userRecordName(alice.userRecordName), serverKeyID: keyID)
        asAlice.account = alice
        XCTAssertEqual(try a.authenticate(creds(signature: query.signature(keyID: keyID))), asAlice)
        XCTAssertEqual(try a.authenticate(creds(signature: caller.signature(keyID: keyID))).serverKeyID, keyID, "an empty body (GET)")
        // A signature stands alone: a bogus API token or a web session beside it changes nothing.
        XCTAssertEqual(try a.authenticate(creds(api: "bogus", signature: query.signature(keyID: keyID))).user, .userRecordName(alice.userRecordName))
        // A signed request outside the public database: 403.
        XCTAssertThrowsError(try a.authenticate(creds(.private, signature: privateZones.signature(keyID: keyID)))) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .accessDenied)
            XCTAssertEqual((e as? CloudKitError)?.code.httpStatus, 403)
        }

        func refused(_ s: ServerSignature, env: CKModel.Environment = .development, _ words: String, _ line: UInt = #line) {
            XCTAssertThrowsError(try a.authenticate(creds(env: env, signature: s)), line: line) { e in
                XCTAssertEqual((e as? CloudKitError)?.code, .authenticationFailed, line: line)
                XCTAssertTrue((e as? CloudKitError)?.reason.contains(words) == true, "\(e)", line: line)
            }
        }
        refused(query.signature(body: query.body + " ", keyID: keyID), "does not verify")
        refused(query.signature(body: caller.body, keyID: keyID), "does not verify")
        refused(query.signature(target: String(query.target.prefix { $0 != "?" }), keyID: keyID), "does not verify")
        refused(query.signature(target: caller.target, keyID: keyID), "does not verify")
        refused(query.signature(target: query.target.replacingOccurrences(of: "/development/", with: "/production/"), keyID: keyID), "does not verify")
        refused(query.signature(date: "2026-11-25T13:05:26Z", keyID: keyID), "does not verify")
        refused(query.signature(sig: caller.signature, keyID: keyID), "does not verify")
        refused(query.signature(sig: "not base64!", keyID: keyID), "not base64")
        refused(query.signature(sig: "", keyID: keyID), "does not verify")
        refused(query.signature(sig: String(repeating: "A", count: 1_000_000), keyID: keyID), "not base64")
        refused(query.signature(keyID: "someone-else"), "names no server-to-server key")
        refused(query.signature(keyID: String(repeating: "k", count: 100_000)), "names no server-to-server key")
        refused(query.signature(keyID: keyID), env: .production, "names no server-to-server key of iCloud.com.example.test (production)")
        for date in ["yesterday", "2026-11-25", "2026-11-25T13:05:25", "2026-11-25 13:05:25Z", "", String(repeating: "2", count: 10_000)] {
            refused(query.signature(date: date, keyID: keyID), "is not an ISO 8601 UTC date-time")
        }
        // The clock: within five minutes either way, not beyond.
        now.ms = Timestamps.parseISO8601(query.date)! + 5 * 60 * 1000
        XCTAssertNoThrow(try a.authenticate(creds(signature: query.signature(keyID: keyID))))
        now.ms += 1_000
        refused(query.signature(keyID: keyID), "must be dated within 5 minutes")
        now.ms = Timestamps.parseISO8601(query.date)! - 5 * 60 * 1000 - 1_000
        refused(query.signature(keyID: keyID), "ahead of the server's clock")
        // Deleted key: refused.
        now.ms = Timestamps.parseISO8601(query.date)!
        _ = try a.deleteServerKey(keyID: keyID, container: Self.container, environment: .development)
        refused(query.signature(keyID: keyID), "names no server-to-server key")
        _ = before
    }

    /// A key made now by openssl, a request signed now: the whole path a server-to-server script
    /// takes (Docs/serve.md). Skipped without openssl; the fixtures above cover the same ground.
    func testARequestSignedNowByOpenSSL() throws {
        let tool = try OpenSSL(self)
        try tool.run("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "k.pem")
        try tool.run("ec", "-in", "k.pem", "-pubout", "-out", "pub.pem")
        let t = TempStore(), now = Now()
        now.ms = Int64(Date().timeIntervalSince1970 * 1000)
        let a = api(t.root, now)
        _ = try a.addServerKey(keyID: "live", publicKeyPEM: try tool.text("pub.pem"), container: Self.container, environment: .development, as: caller())
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        let date = f.string(from: Date(timeIntervalSince1970: Double(now.ms) / 1000))
        let body = #"{"records":[{"recordName":"r1"}]}"#
        let target = "/database/1/\(Self.container)/development/public/records/lookup?ckjsVersion=2.6.4&clientId=abc"
        try tool.write("request", Array((date + ":" + Data(SHA256.digest(Array(body.utf8))).base64EncodedString() + ":" + target).utf8))
        try tool.run("dgst", "-sha256", "-sign", "k.pem", "-out", "request.sig", "request")
        let sig = Data(try tool.bytes("request.sig")).base64EncodedString()
        let s = ServerSignature(keyID: "live", iso8601Date: date, signatureV1: sig, body: Array(body.utf8), target: target)
        XCTAssertEqual(try a.authenticate(creds(signature: s)).serverKeyID, "live")
        var other = s
        other.body = Array(#"{"records":[{"recordName":"r2"}]}"#.utf8)
        XCTAssertThrowsError(try a.authenticate(creds(signature: other)))
    }
}
