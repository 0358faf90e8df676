import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// Sharing through the API, in-process: who may see what of a share (`share get`, `share list`,
/// `records/resolve`, `records/accept`), what a participant's write to a record not shared with
/// them answers, and the Web Services bodies of resolve and accept.
///
/// The world: alice's zone Lists holds `groceries` (shared with bob read-write and carol
/// read-only, both accepted) with its item `milk`, and her `diary`, shared with nobody; dave
/// signed in once and was never invited.
final class APISharingTests: XCTestCase {
    struct World {
        let t: TempStore
        let api: CloudKitAPI
        let guid: String
        let shareName: String
    }

    func body(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    func save(_ a: CloudKitAPI, _ name: String, type: String, parent: String? = nil, zone: String = "Lists", as user: String = "alice",
              scope: DatabaseScope = .private, _ fields: [String: JSONValue] = ["title": "x"]) throws -> OperationResult {
        var o = op(.create, name, type: type, fields)
        o.parent = parent
        return try a.modifyRecords(ModifyRequest(operations: [o], zoneName: zone), as: caller(user, scope)).results[0]
    }

    func world() throws -> World {
        let t = TempStore(signIn: false)
        for u in ["dave", "carol", "bob", "alice"] {
            try t.store.accounts.signIn(appleID: "\(u)@example.com", givenName: u.capitalized, familyName: nil, phone: nil)
        }
        let a = api(t.root)
        _ = try a.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: caller("alice"))
        XCTAssertNil(try save(a, "groceries", type: "List").error)
        XCTAssertNil(try save(a, "milk", type: "Item", parent: "groceries").error)
        XCTAssertNil(try save(a, "diary", type: "Note", ["text": "not for sharing"]).error)
        let share = try a.createShare(ShareCreateRequest(zoneName: "Lists", recordName: "groceries", participants: [
            ShareParticipantRequest(user: .email("bob@example.com"), permission: .readWrite),
            ShareParticipantRequest(user: .email("carol@example.com"), permission: .readOnly),
        ]), as: caller("alice"))
        let record = try XCTUnwrap(share.results.first?.value)
        let guid = try XCTUnwrap(record["shortGUID"]?.stringValue)
        for u in ["bob", "carol"] {
            XCTAssertNil(try a.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(guid)]), as: caller(u)).failures.first)
        }
        return World(t: t, api: a, guid: guid, shareName: try XCTUnwrap(record["recordName"]?.stringValue))
    }

    /// A second, public share in the zone: `party`, public read-only, with bob invited.
    func publicParty(_ w: World) throws -> String {
        XCTAssertNil(try save(w.api, "party", type: "List").error)
        let share = try w.api.createShare(ShareCreateRequest(zoneName: "Lists", recordName: "party", participants: [
            ShareParticipantRequest(user: .email("bob@example.com"), permission: .readWrite),
        ], publicPermission: .readOnly), as: caller("alice"))
        return try XCTUnwrap(share.results.first?.value?["shortGUID"]?.stringValue)
    }

    func emails(_ share: JSONValue?) -> [String] {
        (share?["participants"]?.arrayValue ?? []).compactMap { $0["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue }
    }

    func error(_ body: () throws -> Any) -> CloudKitError? {
        do { _ = try body(); return nil } catch { return error as? CloudKitError }
    }

    func text(_ r: some ResponseBody) -> String { JSONWriter.compact(r.jsonValue) }

    // MARK: a share's creation answers as Apple's does

    /// A share created as Web Services sends it (records/modify of a `cloudkit.share` with
    /// `forRecord`), and by ck's `share create`, answers with the keys Apple lists for it:
    /// shortGUID, share, publicPermission, participants, owner and currentUserParticipant.
    func testAShareCreationAnswersWithShareAndCurrentUserParticipant() throws {
        let w = try world()
        XCTAssertNil(try save(w.api, "chores", type: "List").error)
        let tag = try XCTUnwrap(try w.api.lookupRecords(LookupRecordsRequest(recordNames: ["chores"], zoneName: "Lists"), as: caller("alice")).jsonValue["records"]?.arrayValue?.first?["recordChangeTag"]?.stringValue)
        let body = try body("""
            {"operations": [{"operationType": "create", "record": {"recordType": "cloudkit.share", "fields": {},
              "forRecord": {"recordName": "chores", "recordChangeTag": "\(tag)"}, "publicPermission": "NONE",
              "participants": [{"type": "USER", "permission": "READ_WRITE", "acceptanceStatus": "INVITED",
                                "userIdentity": {"lookupInfo": {"emailAddress": "bob@example.com"}}}]}}],
             "zoneID": {"zoneName": "Lists"}}
            """)
        let made = try w.api.modifyRecords(try ModifyRequest.parse(body), as: caller("alice"))
        let share = try XCTUnwrap(made.jsonValue["records"]?.arrayValue?.first)
        let name = try XCTUnwrap(share["recordName"]?.stringValue)
        for key in ["shortGUID", "share", "publicPermission", "participants", "owner", "currentUserParticipant"] {
            XCTAssertNotNil(share[key], "\(key) missing from \(JSONWriter.compact(share))")
        }
        XCTAssertEqual(share["share"], ["recordName": .string(name)])
        XCTAssertEqual(share["currentUserParticipant"]?["type"]?.stringValue, "OWNER")
        XCTAssertEqual(share["currentUserParticipant"]?["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue, "alice@example.com")
        XCTAssertEqual(share["currentUserParticipant"], share["owner"])
        XCTAssertEqual(emails(share), ["alice@example.com", "bob@example.com"])

        // ck's share create answers the same keys.
        XCTAssertNil(try save(w.api, "garden", type: "List").error)
        let created = try XCTUnwrap(try w.api.createShare(ShareCreateRequest(zoneName: "Lists", recordName: "garden"), as: caller("alice")).results.first?.value)
        XCTAssertEqual(created["share"], ["recordName": created["recordName"] ?? .null])
        XCTAssertEqual(created["currentUserParticipant"]?["type"]?.stringValue, "OWNER")
        // A participant who fetches the share is its currentUserParticipant; its root still names it.
        _ = try w.api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(try XCTUnwrap(share["shortGUID"]?.stringValue))]), as: caller("bob"))
        let fetched = try XCTUnwrap(try w.api.lookupRecords(LookupRecordsRequest(recordNames: [name, "chores"], zoneName: "Lists"), as: caller("bob", .shared)).jsonValue["records"]?.arrayValue)
        XCTAssertEqual(fetched.first?["currentUserParticipant"]?["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue, "bob@example.com")
        XCTAssertEqual(fetched.first?["share"], ["recordName": .string(name)])
        XCTAssertEqual(fetched.last?["share"], ["recordName": .string(name)])
    }

    /// A share's creation changes its root; a later operation of the same atomic batch on the
    /// root, with the tag the client has, conflicts with that change. The batch is dropped
    /// whole, so the CONFLICT's serverRecord is the root as the server holds it — not the
    /// version the dropped batch made, which no fetch can return and no retry can match.
    func testAConflictInADroppedBatchCarriesTheRecordTheServerHolds() throws {
        let w = try world()
        XCTAssertNil(try save(w.api, "chores", type: "List").error)
        let lookup = { try XCTUnwrap(try w.api.lookupRecords(LookupRecordsRequest(recordNames: ["chores"], zoneName: "Lists"), as: caller("alice")).jsonValue["records"]?.arrayValue?.first) }
        let before = try lookup()
        let tag = try XCTUnwrap(before["recordChangeTag"]?.stringValue)
        let body = try body("""
            {"operations": [{"operationType": "create", "record": {"recordType": "cloudkit.share", "fields": {},
                             "forRecord": {"recordName": "chores", "recordChangeTag": "\(tag)"}}},
                            {"operationType": "update", "record": {"recordName": "chores", "recordChangeTag": "\(tag)", "fields": {"title": {"value": "y"}}}}],
             "zoneID": {"zoneName": "Lists"}}
            """)
        let results = try w.api.modifyRecords(try ModifyRequest.parse(body), as: caller("alice")).results
        XCTAssertEqual(results.map { $0.error?.code }, [.atomicError, .conflict])
        let conflict = try XCTUnwrap(results[1].error)
        XCTAssertEqual(try lookup(), before, "nothing applied")
        XCTAssertEqual(conflict.serverRecord?.recordChangeTag, tag, "the server's record, not the dropped batch's")
        XCTAssertNil(conflict.serverRecord?.share)
        XCTAssertTrue(conflict.reason.contains("an earlier operation of this request"), conflict.reason)
    }

    // MARK: share get, list: a share the caller may not see does not exist for them

    /// A share has at most 100 participants, its owner included (CKShare's limit): the 100th
    /// invitation is taken, the 101st refused with LIMIT_EXCEEDED and the share left as it was;
    /// a removed participant makes room.
    func testAShareTakesAtMostAHundredParticipants() throws {
        let w = try world()
        for i in 0..<97 { try w.t.store.accounts.register(appleID: "guest\(i)@example.com") }
        let invite = { (emails: [String]) in
            try w.api.updateShare(ShareUpdateRequest(reference: w.guid, update: .addParticipants(emails.map {
                ShareParticipantRequest(user: .email($0), permission: .readOnly) })), as: caller("alice"))
        }
        // alice, bob, carol and 97 guests: 100.
        XCTAssertEqual(emails(try invite((0..<97).map { "guest\($0)@example.com" }).results.first?.value).count, 100)
        XCTAssertEqual(error { try invite(["dave@example.com"]) }?.code, .limitExceeded)
        XCTAssertFalse(emails(try invite([]).results.first?.value).contains("dave@example.com"), "the refused invitation changed nothing")
        _ = try w.api.updateShare(ShareUpdateRequest(reference: w.guid, update: .removeParticipant(appleID: "guest0@example.com")), as: caller("alice"))
        XCTAssertTrue(emails(try invite(["dave@example.com"]).results.first?.value).contains("dave@example.com"))
    }

    func testAShareANeverInvitedUserAsksForIsNotFoundAsAnUnknownShortGUID() throws {
        let w = try world()
        let before = w.t.snapshot()
        for scope in [DatabaseScope.private, .shared] {
            let hidden = try XCTUnwrap(error { try w.api.lookupShare(ShareLookupRequest(reference: w.guid), as: caller("dave", scope)) })
            let unknown = try XCTUnwrap(error { try w.api.lookupShare(ShareLookupRequest(reference: "0AAAAAAAAAAAAAAAAAAAAAAAA"), as: caller("dave", scope)) })
            XCTAssertEqual(hidden.code, .notFound)
            XCTAssertEqual(hidden.reason.replacingOccurrences(of: w.guid, with: "0AAAAAAAAAAAAAAAAAAAAAAAA"), unknown.reason)
            XCTAssertNil(hidden.recordName)
            XCTAssertNil(hidden.zoneID)
            for secret in ["bob@example.com", "carol@example.com", w.shareName, "groceries"] {
                XCTAssertFalse(JSONWriter.compact(hidden.envelope()).contains(secret), secret)
            }
            // Also by its URL.
            XCTAssertEqual(error { try w.api.lookupShare(ShareLookupRequest(reference: ShareInfo.url(shortGUID: w.guid)), as: caller("dave", scope)) }?.code, .notFound)
        }
        // Its participants see it whole.
        let bob = try w.api.lookupShare(ShareLookupRequest(reference: w.guid), as: caller("bob", .shared))
        XCTAssertEqual(emails(bob.results[0].value), ["alice@example.com", "bob@example.com", "carol@example.com"])
        XCTAssertEqual(bob.results[0].value?["currentUserParticipant"]?["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue, "bob@example.com")
        XCTAssertEqual(w.t.snapshot(), before)
    }

    func testARemovedParticipantNoLongerSeesAShareThatIsNotPublic() throws {
        let w = try world()
        _ = try w.api.updateShare(ShareUpdateRequest(reference: w.guid, update: .removeParticipant(appleID: "carol@example.com")), as: caller("alice"))
        XCTAssertEqual(error { try w.api.lookupShare(ShareLookupRequest(reference: w.guid), as: caller("carol", .shared)) }?.reason,
                       "no share has the short GUID '\(w.guid)'")
        XCTAssertTrue(try w.api.listShares(ShareListRequest(), as: caller("carol", .shared)).results.isEmpty)
        // Nor can she accept it again (the owner invites her again, or nobody).
        let again = try w.api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(w.guid)]), as: caller("carol"))
        XCTAssertEqual(again.failures.first?.reason, "no share has the short GUID '\(w.guid)'")
    }

    func testSomeoneHoldingAPublicSharesURLSeesItsOwnerAndThemselvesOnly() throws {
        let w = try world()
        let party = try publicParty(w)
        // dave, never invited, looks at it by its URL: the owner only, no one else's email.
        let seen = try w.api.lookupShare(ShareLookupRequest(reference: ShareInfo.url(shortGUID: party)), as: caller("dave"))
        let share = try XCTUnwrap(seen.results.first?.value)
        XCTAssertEqual(share["publicPermission"]?.stringValue, "READ_ONLY")
        XCTAssertEqual(emails(share), ["alice@example.com"])
        XCTAssertEqual(share["owner"]?["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue, "alice@example.com")
        XCTAssertNil(share["currentUserParticipant"])
        XCTAssertFalse(text(seen).contains("bob@example.com"))
        // Once he accepted: himself too, as currentUserParticipant; still not bob.
        let accepted = try w.api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(party)]), as: caller("dave"))
        XCTAssertNil(accepted.failures.first)
        XCTAssertEqual(accepted.results[0].value?["participantType"]?.stringValue, "PUBLIC_USER")
        XCTAssertFalse(text(accepted).contains("bob@example.com"))
        let after = try XCTUnwrap(try w.api.lookupShare(ShareLookupRequest(reference: party), as: caller("dave", .shared)).results.first?.value)
        XCTAssertEqual(emails(after), ["alice@example.com", "dave@example.com"])
        XCTAssertEqual(after["currentUserParticipant"]?["type"]?.stringValue, "PUBLIC_USER")
        // His share list, and the share record itself through records/lookup, show the same.
        let listed = try w.api.listShares(ShareListRequest(), as: caller("dave", .shared))
        XCTAssertEqual(listed.results.count, 1)
        XCTAssertFalse(text(listed).contains("bob@example.com"))
        let shareName = try XCTUnwrap(after["recordName"]?.stringValue)
        let looked = try w.api.lookupRecords(LookupRecordsRequest(recordNames: [shareName], zoneName: "Lists"), as: caller("dave", .shared))
        XCTAssertEqual(looked.results.first?.record?.recordType, ShareInfo.recordType)
        XCTAssertFalse(text(looked).contains("bob@example.com"))
        var browsed: [Record] = []
        try w.api.listRecords(ListRecordsRequest(zoneName: "Lists"), as: caller("dave", .shared)) { browsed += $0.records; return true }
        XCTAssertTrue(browsed.contains { $0.recordType == ShareInfo.recordType })
        XCTAssertFalse(browsed.map { JSONWriter.compact($0.json()) }.joined().contains("bob@example.com"))
        // bob, whom alice invited, sees everyone, dave included.
        let bob = try w.api.lookupShare(ShareLookupRequest(reference: party), as: caller("bob"))
        XCTAssertEqual(emails(bob.results.first?.value), ["alice@example.com", "bob@example.com", "dave@example.com"])
    }

    // MARK: records/resolve

    func testResolveBodiesAreReadStrictly() throws {
        let good = try ResolveSharesRequest(json: try body(#"{"shortGUIDs":[{"value":"0AAAAAAAAAAAAAAAAAAAAAAAA"},{"value":"0BBBBBBBBBBBBBBBBBBBBBBBB","shouldFetchRootRecord":true,"rootRecordDesiredKeys":["title"]}]}"#))
        XCTAssertEqual(good.shortGUIDs, [ShortGUIDRequest("0AAAAAAAAAAAAAAAAAAAAAAAA"),
                                         ShortGUIDRequest("0BBBBBBBBBBBBBBBBBBBBBBBB", shouldFetchRootRecord: true, rootRecordDesiredKeys: ["title"])])
        let accept = try AcceptSharesRequest(json: try body(#"{"shortGUIDs":[{"value":"0AAAAAAAAAAAAAAAAAAAAAAAA"}]}"#))
        XCTAssertEqual(accept.shortGUIDs.map(\.value), ["0AAAAAAAAAAAAAAAAAAAAAAAA"])
        let bad: [(String, String)] = [
            (#"[]"#, "must be a JSON object"),
            (#"{}"#, "shortGUIDs is missing"),
            (#"{"shortGUIDs":{"value":"x"}}"#, "shortGUIDs must be an array"),
            (#"{"shortGUIDs":[]}"#, "at least one share"),
            (#"{"shortGUIDs":[{"value":"0AAAAAAAAAAAAAAAAAAAAAAAA"}],"zoneID":{}}"#, "unknown key 'zoneID'"),
            (#"{"shortGUIDs":["0AAAAAAAAAAAAAAAAAAAAAAAA"]}"#, "shortGUIDs[0] must be a JSON object"),
            (#"{"shortGUIDs":[{"guid":"0AAAAAAAAAAAAAAAAAAAAAAAA"}]}"#, "unknown key 'guid' in shortGUIDs[0]"),
            (#"{"shortGUIDs":[{"value":7}]}"#, "shortGUIDs[0].value must be a string"),
            (#"{"shortGUIDs":[{}]}"#, "needs a 'value' string"),
            (#"{"shortGUIDs":[{"value":"not a guid!"}]}"#, "is not a share URL"),
            (#"{"shortGUIDs":[{"value":"0AAAAAAAAAAAAAAAAAAAAAAAA","shouldFetchRootRecord":"yes"}]}"#, "shouldFetchRootRecord must be true or false"),
        ]
        for (text, words) in bad {
            for parse in [{ _ = try ResolveSharesRequest(json: $0) }, { _ = try AcceptSharesRequest(json: $0) }] as [(JSONValue) throws -> Void] {
                XCTAssertThrowsError(try parse(try body(text)), text) { e in
                    XCTAssertEqual((e as? CloudKitError)?.code, .badRequest, text)
                    XCTAssertTrue((e as? CloudKitError)?.reason.contains(words) == true, "\(text): \((e as? CloudKitError)?.reason ?? "")")
                }
            }
        }
    }

    func testResolveAnswersEachShortGUIDAsTheCallerMaySeeIt() throws {
        let w = try world()
        let party = try publicParty(w)
        let before = w.t.snapshot()
        let req = try ResolveSharesRequest(json: try body("""
            {"shortGUIDs": [{"value": "\(w.guid)", "shouldFetchRootRecord": true}, {"value": "0AAAAAAAAAAAAAAAAAAAAAAAA"},
                            {"value": "\(party)", "shouldFetchRootRecord": true}]}
            """))
        // bob takes part in both: everything, the roots included.
        let bob = try w.api.resolveShares(req, as: caller("bob"))
        XCTAssertEqual(bob.results.count, 3)
        XCTAssertEqual(bob.results[0].value?["rootRecordName"]?.stringValue, "groceries")
        XCTAssertEqual(bob.results[0].value?["rootRecord"]?["recordName"]?.stringValue, "groceries")
        XCTAssertEqual(bob.results[0].value?["participantStatus"]?.stringValue, "ACCEPTED")
        XCTAssertEqual(bob.results[0].value?["databaseScope"]?.stringValue, "SHARED")
        XCTAssertEqual(emails(bob.results[0].value?["share"]), ["alice@example.com", "bob@example.com", "carol@example.com"])
        XCTAssertEqual(bob.results[1].error?.code, .notFound)
        XCTAssertEqual(bob.results[2].value?["participantStatus"]?.stringValue, "INVITED")
        // dave: the private share does not exist for him — the words of the unknown one; the
        // public one shows its owner, and no root record (he may not read it yet).
        let dave = try w.api.resolveShares(req, as: caller("dave"))
        let hidden = try XCTUnwrap(dave.results[0].error), unknown = try XCTUnwrap(dave.results[1].error)
        XCTAssertEqual(hidden.code, .notFound)
        XCTAssertEqual(hidden.reason.replacingOccurrences(of: w.guid, with: "0AAAAAAAAAAAAAAAAAAAAAAAA"), unknown.reason)
        let publicView = try XCTUnwrap(dave.results[2].value)
        XCTAssertEqual(emails(publicView["share"]), ["alice@example.com"])
        XCTAssertEqual(publicView["ownerIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue, "alice@example.com")
        XCTAssertNil(publicView["rootRecord"])
        XCTAssertNil(publicView["participantStatus"])
        for secret in ["bob@example.com", "carol@example.com", "groceries", w.shareName, "diary"] {
            XCTAssertFalse(text(dave).contains(secret), secret)
        }
        // Nobody signed in (a server-to-server key): public shares only.
        let nobody = try w.api.resolveShares(req, as: caller(.public, .nobody))
        XCTAssertEqual(nobody.failures.map(\.code), [.notFound, .notFound])
        XCTAssertEqual(emails(nobody.results[2].value?["share"]), ["alice@example.com"])
        // Resolving changes nothing.
        XCTAssertEqual(w.t.snapshot(), before)
        // Once dave accepted the public share, its root is his to read.
        _ = try w.api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(party)]), as: caller("dave"))
        XCTAssertEqual(try w.api.resolveShares(req, as: caller("dave")).results[2].value?["rootRecord"]?["recordName"]?.stringValue, "party")
    }

    // MARK: records/accept

    func testAcceptOfAShareTheCallerMayNotSeeChangesNothing() throws {
        let w = try world()
        let before = w.t.snapshot()
        let r = try w.api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(w.guid), ShortGUIDRequest("0AAAAAAAAAAAAAAAAAAAAAAAA")]), as: caller("dave"))
        XCTAssertEqual(r.failures.map(\.code), [.notFound, .notFound])
        XCTAssertEqual(r.failures[0].reason.replacingOccurrences(of: w.guid, with: "0AAAAAAAAAAAAAAAAAAAAAAAA"), r.failures[1].reason)
        XCTAssertFalse(text(r).contains(w.shareName))
        XCTAssertEqual(w.t.snapshot(), before)
        // A malformed short GUID fails the request.
        XCTAssertEqual(error { try w.api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest("no!")]), as: caller("dave")) }?.code, .badRequest)
        XCTAssertEqual(w.t.snapshot(), before)
        // Accepting again changes nothing either.
        XCTAssertNil(try w.api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(w.guid)]), as: caller("bob")).failures.first)
        XCTAssertEqual(w.t.snapshot(), before)
    }

    // MARK: a participant's writes to records not shared with them

    /// An update, replace or delete of `diary` (alice's, not shared with bob) answers what the
    /// same write of `ghost` (no record at all) answers: NOT_FOUND, in the shared database's words.
    func testAParticipantsWriteToAHiddenRecordIsNotFoundAsAMissingOne() throws {
        let w = try world()
        let diaryTag = try XCTUnwrap(w.api.lookupRecords(LookupRecordsRequest(recordNames: ["diary"], zoneName: "Lists"), as: caller("alice")).jsonValue["records"]?.arrayValue?.first?["recordChangeTag"]?.stringValue)
        let before = w.t.snapshot()
        let kinds: [(RecordOperationType, String?)] = [(.update, diaryTag), (.replace, diaryTag), (.delete, diaryTag), (.forceDelete, nil)]
        for (type, tag) in kinds {
            func write(_ name: String) throws -> CloudKitError? {
                let o = op(type, name, type: nil, tag: tag, type.isDelete ? [:] : ["text": "mine"])
                return try w.api.modifyRecords(ModifyRequest(operations: [o], zoneName: "Lists"), as: caller("bob", .shared)).results[0].error
            }
            let hidden = try XCTUnwrap(try write("diary"), "\(type)")
            let missing = try XCTUnwrap(try write("ghost"), "\(type)")
            XCTAssertEqual(hidden.code, .notFound, "\(type): \(hidden.reason)")
            let lead = type.checksTag ? "recordChangeTag specified, but " : ""
            XCTAssertEqual(hidden.reason, lead + "record 'diary' not found in zone Lists of the shared database", "\(type)")
            XCTAssertEqual(hidden.reason.replacingOccurrences(of: "diary", with: "ghost"), missing.reason, "\(type)")
            XCTAssertEqual(hidden.zoneID, missing.zoneID)
            XCTAssertNil(hidden.serverRecord)
            // Through ck's delete as well.
            if type == .forceDelete {
                let d = try w.api.deleteRecords(DeleteRecordsRequest(recordNames: ["diary"], zoneName: "Lists"), as: caller("bob", .shared))
                XCTAssertEqual(d.results[0].error?.reason, hidden.reason)
            }
        }
        XCTAssertEqual(w.t.snapshot(), before)
    }

    /// A create (or a force save, which creates) of `diary` cannot be done, and is refused as
    /// every create outside the share is, in one set of words: whether it has no parent or one
    /// in the share, and whether `diary` exists or not.
    func testAParticipantsCreateOfAHiddenNameIsRefusedAsACreateOutsideTheShare() throws {
        let w = try world()
        let before = w.t.snapshot()
        func create(_ name: String, parent: String?, _ type: RecordOperationType = .create) throws -> CloudKitError? {
            var o = op(type, name, type: "Item", ["title": "mine"])
            o.parent = parent
            return try w.api.modifyRecords(ModifyRequest(operations: [o], zoneName: "Lists"), as: caller("bob", .shared)).results[0].error
        }
        let outside = try XCTUnwrap(try create("ghost", parent: nil))
        XCTAssertEqual(outside.code, .accessDenied)
        for (name, parent, type) in [("diary", nil, RecordOperationType.create), ("diary", "groceries", .create), ("diary", "groceries", .forceUpdate),
                                     ("diary", "groceries", .forceReplace), ("diary", nil, .forceUpdate)] as [(String, String?, RecordOperationType)] {
            let e = try XCTUnwrap(try create(name, parent: parent, type), "\(name) \(parent ?? "-") \(type)")
            XCTAssertEqual(e.code, .accessDenied)
            XCTAssertEqual(e.reason, outside.reason, "\(name) under \(parent ?? "nothing") (\(type))")
            XCTAssertFalse(e.reason.contains("not shared"))
            XCTAssertFalse(e.reason.contains("ck "), e.reason)
            XCTAssertNil(e.serverRecord)
        }
        XCTAssertEqual(w.t.snapshot(), before)
        // A name of his own under the shared list is his to create.
        XCTAssertNil(try create("eggs", parent: "groceries"))
        // And a record not shared with him is no target of a VALIDATE reference.
        func reference(_ target: String) throws -> CloudKitError? {
            var o = op(.create, "ref-\(target)", type: "Item", [:])
            o.parent = "groceries"
            o.fields = ["about": try RecordField.parse(name: "about", json: ["value": ["recordName": .string(target), "action": "VALIDATE"], "type": "REFERENCE"])]
            return try w.api.modifyRecords(ModifyRequest(operations: [o], zoneName: "Lists"), as: caller("bob", .shared)).results[0].error
        }
        let toDiary = try XCTUnwrap(try reference("diary")), toGhost = try XCTUnwrap(try reference("ghost"))
        XCTAssertEqual(toDiary.code, .validatingReferenceError)
        XCTAssertEqual(toDiary.reason.replacingOccurrences(of: "diary", with: "ghost"), toGhost.reason)
    }

    // MARK: changing shares

    func testShareChangesAnswerWithTheShareAsTheCallerSawIt() throws {
        let w = try world()
        // carol leaves: her answer is the share her write left, herself REMOVED.
        let left = try w.api.updateShare(ShareUpdateRequest(reference: w.guid, update: .leave), as: caller("carol", .shared))
        let share = try XCTUnwrap(left.results.first?.value)
        XCTAssertEqual(share["currentUserParticipant"]?["acceptanceStatus"]?.stringValue, "REMOVED")
        XCTAssertNil(share["zoneID"], "a records/modify answer carries no zoneID")
        // Then it no longer exists for her.
        XCTAssertEqual(error { try w.api.lookupShare(ShareLookupRequest(reference: w.guid), as: caller("carol")) }?.code, .notFound)
        // Only its owner deletes it; the answer is its tombstone.
        XCTAssertEqual(error { try w.api.updateShare(ShareUpdateRequest(reference: w.guid, update: .delete), as: caller("bob")) }?.code, .accessDenied)
        let deleted = try w.api.updateShare(ShareUpdateRequest(reference: w.guid, update: .delete), as: caller("alice"))
        XCTAssertEqual(deleted.results.first?.value, Record.tombstone(recordName: w.shareName, zoneID: nil))
        // A share create outside a custom zone of the private database names no command.
        let e = try XCTUnwrap(error { try w.api.createShare(ShareCreateRequest(zoneName: ZoneID.defaultZoneName, recordName: "x"), as: caller("alice")) })
        XCTAssertEqual(e.code, .badRequest)
        XCTAssertFalse(e.reason.contains("--"), e.reason)
        let who = try XCTUnwrap(error { try w.api.createShare(ShareCreateRequest(zoneName: "Lists", recordName: "diary", participants: [ShareParticipantRequest(user: .email("zed@example.com"), permission: .readOnly)]), as: caller("alice")) })
        XCTAssertEqual(who.code, .notFound)
        XCTAssertEqual(who.nextStep, .signInUser(appleID: "zed@example.com"))
        XCTAssertFalse(who.reason.contains("ck "), who.reason)
    }
}
