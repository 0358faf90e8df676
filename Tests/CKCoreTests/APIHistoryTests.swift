import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// The history entries of the API (log, show, diff, blame, restore, revert, tags, gc, token
/// expire) and the one permission gate on every history read: what the owner, a participant,
/// a user who accepted a public share, a user never invited and a public-database reader see;
/// owner-only maintenance; tags per database and the move of an earlier data directory's tags.
final class APIHistoryTests: XCTestCase {
    static let alice = "alice@example.com", bob = "bob@example.com", carol = "carol@example.com", dave = "dave@example.com", erin = "erin@example.com"
    /// What no one but alice may ever see of her unshared records.
    static let hidden = ["secret", "Diary", "classified", "whisper"]

    func ref(_ s: String) throws -> HistoryReference { try HistoryReference.parse(s, now: 0, timeZone: nil) }

    func text(_ b: some ResponseBody) -> String {
        var out: [UInt8] = []
        b.encodeJSON(into: &out, pretty: false)
        return String(decoding: out, as: UTF8.self)
    }

    func assertNothingHidden(_ s: String, _ what: String, of hidden: [String] = APIHistoryTests.hidden, file: StaticString = #filePath, line: UInt = #line) {
        for h in hidden { XCTAssertFalse(s.contains(h), "\(what) shows '\(h)': \(s)", file: file, line: line) }
    }

    /// The error a call throws.
    func failure(_ body: () throws -> Any) -> CloudKitError? {
        do { _ = try body(); return nil } catch let e as CloudKitError { return e } catch { return CloudKitError.internalError("\(error)") }
    }

    /// A share record's name (a UUID).
    static func isShare(_ name: String) -> Bool { UUID(uuidString: name) != nil }

    func seqs(_ b: DocumentBody) -> [Int64] { (b.document["changes"]?.arrayValue ?? []).compactMap { $0["seq"]?.int64Value } }
    func names(_ b: DocumentBody) -> [String] { (b.document["changes"]?.arrayValue ?? []).compactMap { $0["recordName"]?.stringValue } }

    /// alice's zone Lists: a shared list (groceries, milk; bob readOnly, carol readWrite, and
    /// public READ_ONLY, which dave accepts) beside her diary (secret), which she never shares;
    /// then edits of both, a record moved in and one moved out of the share.
    struct World {
        let t: TempStore
        let api: CloudKitAPI
        /// Points: the share accepted by all; milk's update; secret's update; eggs made; milk
        /// moved out of the share.
        var accepted: Int64 = 0, milkUpdate: Int64 = 0, secretUpdate: Int64 = 0, eggs: Int64 = 0, movedOut: Int64 = 0
    }

    func world() throws -> World {
        let t = TempStore()
        for u in [Self.bob, Self.carol, Self.dave, Self.erin] { try t.store.accounts.signIn(appleID: u, givenName: nil, familyName: nil, phone: nil) }
        let api = api(t.root)
        var w = World(t: t, api: api)
        let a = t.client(caller(.private, .appleID(Self.alice)))
        try a.createZone("Lists")
        @discardableResult
        func save(_ ops: [RecordOperation]) throws -> Int64 {
            for r in try a.modify(zone: "Lists", operations: ops) { XCTAssertNil(r.error, "\(r)") }
            return try a.head(zone: "Lists")
        }
        try save([RecordOperation(type: .create, recordName: "groceries", recordType: "List", fields: ["title": field("Groceries")])])
        try save([RecordOperation(type: .create, recordName: "milk", recordType: "Item", fields: ["qty": field(1)], parent: "groceries")])
        try save([RecordOperation(type: .create, recordName: "secret", recordType: "Diary", fields: ["text": field("classified")])])
        let guid = try a.createShare(zone: "Lists", record: "groceries",
                                     participants: [try .parse(argument: Self.bob + ":readOnly"), try .parse(argument: Self.carol + ":readWrite")],
                                     publicPermission: .readOnly).shortGUID
        for u in [Self.bob, Self.carol, Self.dave] {
            XCTAssertNil(try api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(guid)]), as: caller(.shared, .appleID(u))).jsonValue["results"]?.arrayValue?.first?["serverErrorCode"])
        }
        w.accepted = try a.head(zone: "Lists")
        w.milkUpdate = try save([RecordOperation(type: .forceUpdate, recordName: "milk", fields: ["qty": field(2)])])
        w.secretUpdate = try save([RecordOperation(type: .forceUpdate, recordName: "secret", fields: ["text": field("classified whisper")])])
        // One commit: a child saved before its parent, which joins the share with it.
        w.eggs = try save([RecordOperation(type: .create, recordName: "yolk", recordType: "Item", fields: ["qty": field(1)], parent: "eggs"),
                           RecordOperation(type: .create, recordName: "eggs", recordType: "Item", fields: ["qty": field(12)], parent: "groceries")])
        // bread is made outside the share, then moved into it: from then on it is theirs to see.
        try save([RecordOperation(type: .create, recordName: "bread", recordType: "Item", fields: ["qty": field(1)])])
        try save([RecordOperation(type: .forceReplace, recordName: "bread", recordType: "Item", fields: ["qty": field(2)], parent: "groceries")])
        // milk leaves the share.
        w.movedOut = try save([RecordOperation(type: .forceReplace, recordName: "milk", recordType: "Item", fields: ["qty": field(3)])])
        try save([RecordOperation(type: .forceDelete, recordName: "yolk")])
        // The queries of Diary below have no filter: they need "___recordID" QUERYABLE.
        try a.addIndexes("Diary")
        return w
    }

    // MARK: the owner

    func testTheOwnerSeesEveryChangeAsBefore() throws {
        let w = try world()
        let head = try w.t.client(caller(.private, .appleID(Self.alice))).head(zone: "Lists")
        let log = try w.api.log(LogRequest(zoneName: "Lists", reverse: true), as: caller(.private, .appleID(Self.alice)))
        XCTAssertEqual(seqs(log), Array(1...head))
        let show = try w.api.show(ShowRequest(try ref("Lists@3")), as: caller(.private, .appleID(Self.alice)))
        XCTAssertEqual(show.document["after"]?["recordName"]?.stringValue, "secret")
        let diff = try w.api.diff(DiffRequest(from: try ref("Lists@0"), zoneName: "Lists", output: .nameOnly), as: caller(.private, .appleID(Self.alice)))
        XCTAssertEqual(names(diff).filter { !Self.isShare($0) }, ["bread", "eggs", "groceries", "milk", "secret"])
        let blame = try w.api.blame(BlameRequest(recordName: "secret", zoneName: "Lists"), as: caller(.private, .appleID(Self.alice)))
        XCTAssertEqual(blame.document["fields"]?.arrayValue?.first?["seq"]?.int64Value, w.secretUpdate)
    }

    // MARK: participants

    func testParticipantsSeeOnlyWhatWasSharedWithThemAtEachPoint() throws {
        let w = try world()
        for who in [Self.bob, Self.carol, Self.dave] {
            let c = caller(.shared, .appleID(who))
            let log = try w.api.log(LogRequest(zoneName: "Lists", patch: true, reverse: true), as: c)
            assertNothingHidden(text(log), "log --patch for \(who)")
            let listed = seqs(log)
            // Nothing before each one's acceptance was shared with them; nothing of secret ever.
            XCTAssertTrue(listed.allSatisfy { $0 > 5 }, "\(who): \(listed)")
            XCTAssertFalse(listed.contains(w.movedOut), "milk leaving the share is not theirs to see")
            let byName = Dictionary(grouping: log.document["changes"]!.arrayValue!, by: { $0["recordName"]!.stringValue! })
            // milk's update while shared; eggs and yolk made in one commit; bread joining; yolk's deletion.
            XCTAssertEqual(byName["milk"]?.count, 1, "\(who)")
            XCTAssertEqual(byName["yolk"]?.map { $0["operation"]!.stringValue! }, ["save", "delete"], "\(who): the child saved before its parent, in one commit")
            XCTAssertNotNil(byName["eggs"])
            // bread came into view with the change that moved it: to them it was made then.
            let bread = try XCTUnwrap(byName["bread"]?.first)
            XCTAssertNil(bread["prev"], "\(who): the version it replaced was not theirs")
            XCTAssertEqual(bread["fields"]?["qty"]?["old"], .null)
            // --field, --user filter within what they see.
            let fieldLog = try w.api.log(LogRequest(zoneName: "Lists", field: "text"), as: c)
            XCTAssertEqual(seqs(fieldLog), [], "\(who): only secret has a text field")

            // show of a hidden change: NOT_FOUND naming nothing of the record.
            for s in [3, w.secretUpdate, w.movedOut] {
                let e = failure { try w.api.show(ShowRequest(try self.ref("Lists@\(s)")), as: c) }
                XCTAssertEqual(e?.code, .notFound, "\(who) show \(s)")
                assertNothingHidden(e?.reason ?? "", "show \(s)")
                XCTAssertFalse((e?.reason ?? "").contains("milk"))
            }
            // blame of a hidden record: the words a missing one gets.
            let hiddenBlame = failure { try w.api.blame(BlameRequest(recordName: "secret", zoneName: "Lists"), as: c) }
            let missingBlame = failure { try w.api.blame(BlameRequest(recordName: "nosuch", zoneName: "Lists"), as: c) }
            XCTAssertEqual(hiddenBlame?.code, .notFound)
            XCTAssertEqual(hiddenBlame?.reason, missingBlame?.reason.replacingOccurrences(of: "nosuch", with: "secret"))
            // blame of a shared record stops at what they could see: bread's qty was set when it joined.
            let blame = try w.api.blame(BlameRequest(recordName: "bread", zoneName: "Lists"), as: c)
            XCTAssertEqual(blame.document["fields"]?.arrayValue?.first?["boundary"], true)

            // diff: what they could see at each point; secret never, milk deleted once it left.
            let all = try w.api.diff(DiffRequest(from: try ref("Lists@0"), zoneName: "Lists"), as: c)
            assertNothingHidden(text(all), "diff")
            XCTAssertEqual(names(all).filter { !Self.isShare($0) }, ["bread", "eggs", "groceries"])
            let out = try w.api.diff(DiffRequest(from: try ref("Lists@\(w.movedOut - 1)"), to: try ref("Lists@\(w.movedOut)"), zoneName: "Lists"), as: c)
            XCTAssertEqual(out.document["changes"]?.arrayValue?.map { "\($0["recordName"]!.stringValue!) \($0["status"]!.stringValue!)" }, ["milk deleted"])
            // A point before the share: nothing of theirs existed; the share brought every record in.
            let joined = try w.api.diff(DiffRequest(from: try ref("Lists@3"), to: try ref("Lists@\(w.accepted)"), zoneName: "Lists", output: .nameOnly), as: c)
            XCTAssertTrue(Set(names(joined)).isSuperset(of: ["groceries", "milk"]), "\(who): \(names(joined))")
            assertNothingHidden(text(joined), "diff across the share")

            // --at on get, list, query and export.
            let then = try ref("Lists@\(w.secretUpdate)")
            let got = try w.api.lookupRecords(LookupRecordsRequest(recordNames: ["secret", "nosuch", "milk"], zoneName: "Lists", at: then), as: c)
            XCTAssertEqual(got.results.map { $0.error?.code }, [.notFound, .notFound, nil])
            XCTAssertEqual(got.results[0].error?.reason.replacingOccurrences(of: "secret", with: "nosuch"), got.results[1].error?.reason)
            assertNothingHidden(text(got).replacingOccurrences(of: "'secret'", with: "''").replacingOccurrences(of: "\"secret\"", with: "\"\""), "get --at")
            var listed2: [String] = []
            try w.api.listRecords(ListRecordsRequest(zoneName: "Lists", at: then), as: c) { b in listed2 += b.records.map(\.recordName); return true }
            XCTAssertEqual(Set(listed2.filter { !Self.isShare($0) }), ["groceries", "milk"])
            let q = try w.api.queryRecords(QueryRecordsRequest(QueryRequest(recordType: "Diary"), zoneName: "Lists", at: then), as: c)
            XCTAssertEqual(q.records.count, 0)
            var pages = 0
            try w.api.queryAllRecords(QueryRecordsRequest(QueryRequest(recordType: "Diary"), zoneName: "Lists", at: then), as: c) { p in pages += p.records.count; return true }
            XCTAssertEqual(pages, 0)
            var exported = ""
            try w.api.exportRecords(ExportRequest(zoneName: "Lists", at: then), as: c) { exported += $0; return true }
            assertNothingHidden(exported, "export --at")
            XCTAssertTrue(exported.contains("\"milk\""))

            // restore and revert previews: nothing of secret; a hidden change is NOT_FOUND.
            let preview = try w.api.restore(RestoreRequest(try ref("Lists@\(w.accepted)"), zoneName: "Lists", dryRun: true), as: c)
            assertNothingHidden(text(preview), "restore --dry-run")
            let named = try w.api.restore(RestoreRequest(try ref("Lists@\(w.accepted)"), zoneName: "Lists", recordNames: ["secret"], dryRun: true), as: c)
            XCTAssertEqual(text(named), "{\"changes\":[]}")
            let hiddenRevert = failure { try w.api.revert(RevertRequest(try self.ref("Lists@\(w.secretUpdate)"), dryRun: true), as: c) }
            XCTAssertEqual(hiddenRevert?.code, .notFound)
            assertNothingHidden(hiddenRevert?.reason ?? "", "revert of a hidden change")
            let undo = try w.api.revert(RevertRequest(try ref("Lists@\(w.eggs)"), dryRun: true), as: c)
            XCTAssertEqual(undo.jsonValue["changes"]?.arrayValue?.map { "\($0["recordName"]!.stringValue!) \($0["status"]!.stringValue!)" }, ["eggs deleted"])
            // milk left their view: undoing its update is a CONFLICT (it is gone, to them).
            XCTAssertEqual(failure { try w.api.revert(RevertRequest(try self.ref("Lists@\(w.milkUpdate)"), dryRun: true), as: c) }?.code, .conflict)
        }
    }

    func testAParticipantsRestoreWritesOnlyWhatTheyMay() throws {
        let w = try world()
        let before = w.t.snapshot()
        // bob (readOnly): the plan is his view; writing it is refused record by record.
        let r = try w.api.restore(RestoreRequest(try ref("Lists@\(w.accepted)"), zoneName: "Lists"), as: caller(.shared, .appleID(Self.bob)))
        XCTAssertFalse(r.results.isEmpty)
        XCTAssertTrue(r.results.allSatisfy { $0.error != nil }, "\(r.results)")
        assertNothingHidden(text(r), "a refused restore")
        XCTAssertEqual(w.t.snapshot(), before)
        // carol (readWrite) restores eggs as it was: a new change in alice's zone.
        let e = try w.api.restore(RestoreRequest(try ref("Lists@\(w.movedOut)"), zoneName: "Lists", recordNames: ["yolk"]), as: caller(.shared, .appleID(Self.carol)))
        XCTAssertNil(e.results.first?.error)
        XCTAssertNotNil(try w.t.client(caller(.private, .appleID(Self.alice))).lookup(zone: "Lists", recordNames: ["yolk"])[0].record)
    }

    func testAConfirmedPreviewIsWrittenOnlyIfTheZoneHasNotMovedOn() throws {
        let w = try world()
        let alice = caller(.private, .appleID(Self.alice))
        let preview = try w.api.restore(RestoreRequest(try ref("Lists@\(w.accepted)"), zoneName: "Lists", dryRun: true), as: alice)
        XCTAssertEqual(preview.seq, w.accepted)
        XCTAssertFalse(preview.items.isEmpty)
        // The head the preview saw, and a write since: the confirmation would no longer write
        // what it showed, so it is refused and writes nothing.
        let bread = try w.t.client(alice).modify(zone: "Lists", operations: [RecordOperation(type: .forceUpdate, recordName: "bread", recordType: "Item", fields: ["qty": field(2)])])
        XCTAssertNil(bread.first?.error)
        let before = w.t.snapshot()
        for write in [{ try w.api.restore(RestoreRequest(try self.ref("Lists@\(w.accepted)"), zoneName: "Lists", ifHead: preview.head), as: alice) },
                      { try w.api.revert(RevertRequest(try self.ref("Lists@\(w.eggs)"), zoneName: "Lists", ifHead: preview.head), as: alice) }] {
            let e = failure { try write() }
            XCTAssertEqual(e?.code, .conflict)
            XCTAssertTrue(e?.reason.contains("preview again") == true, "\(String(describing: e))")
        }
        XCTAssertEqual(w.t.snapshot(), before)
        // Previewed again at the new head: written.
        let again = try w.api.revert(RevertRequest(try ref("Lists@\(w.eggs)"), zoneName: "Lists", dryRun: true), as: alice)
        XCTAssertEqual(again.head, preview.head + 1)
        let done = try w.api.revert(RevertRequest(try ref("Lists@\(w.eggs)"), zoneName: "Lists", ifHead: again.head), as: alice)
        XCTAssertTrue(done.results.allSatisfy { $0.error == nil }, "\(done.results)")
    }

    /// The console's filtered query (ck's --filter text) is records/query: the same gate.
    func testTheConsolesFilteredQueryShowsEachCallerOnlyWhatTheyMaySee() throws {
        let w = try world()
        let alice = caller(.private, .appleID(Self.alice))
        for (type, field) in [("Diary", "text"), ("Item", "qty"), ("Diary", "___recordID"), ("Item", "___recordID")] {
            _ = try w.api.addSchemaIndexes(SchemaIndexRequest(recordType: type, fieldName: field, indexes: [.queryable]), as: alice)
        }
        func query(_ type: String, _ filter: String, as c: Caller) throws -> String {
            text(try w.api.queryRecords(QueryRecordsRequest(QueryRequest(recordType: type), zoneName: "Lists"), filterTexts: [filter], timeZoneName: nil, as: c))
        }
        // The owner finds her diary by its text; no one else finds it, or learns it is there.
        XCTAssertTrue(try query("Diary", "text BEGINS_WITH class", as: alice).contains("secret"))
        for c in [caller(.shared, .appleID(Self.bob)), caller(.shared, .appleID(Self.carol)), caller(.shared, .appleID(Self.dave))] {
            assertNothingHidden(try query("Diary", "text BEGINS_WITH class", as: c), "a participant's filtered query")
            let items = try query("Item", "qty >= 0", as: c)
            XCTAssertTrue(items.contains("\"eggs\""), "the shared items are found: \(items)")
            assertNothingHidden(items, "a participant's filtered query of shared items")
        }
        // A user never invited, and another user's private database: no zone to query.
        for c in [caller(.shared, .appleID(Self.erin)), caller(.private, .appleID(Self.erin))] {
            XCTAssertEqual(failure { try query("Diary", "text BEGINS_WITH class", as: c) }?.code, .zoneNotFound)
        }
    }

    func testAUserNeverInvitedSeesNoHistory() throws {
        let w = try world()
        let c = caller(.shared, .appleID(Self.erin))
        XCTAssertEqual(failure { try w.api.log(LogRequest(zoneName: "Lists"), as: c) }?.code, .zoneNotFound)
        XCTAssertEqual(failure { try w.api.show(ShowRequest(try self.ref("Lists@3")), as: c) }?.code, .zoneNotFound)
        XCTAssertEqual(text(try w.api.log(LogRequest(allZones: true), as: c)), "{\"changes\":[]}")
        // Nor in alice's private database: erin's own is empty.
        XCTAssertEqual(failure { try w.api.log(LogRequest(zoneName: "Lists"), as: caller(.private, .appleID(Self.erin))) }?.code, .zoneNotFound)
    }

    func testADeletionIsJudgedByTheVersionItDeletedEvenInACascade() throws {
        let w = try world()
        let a = w.t.client(caller(.private, .appleID(Self.alice)))
        // A second share (trip, with a stop that cascades from it) that bob also takes part in.
        _ = try a.modify(zone: "Lists", operations: [RecordOperation(type: .create, recordName: "trip", recordType: "Trip", fields: ["t": field(1)])])
        let stop = RecordOperation(type: .create, recordName: "stop", recordType: "Stop",
                                   fields: ["in": try RecordField.parse(name: "in", json: ["type": "REFERENCE", "value": ["recordName": "trip", "action": "DELETE_SELF"]])], parent: "trip")
        XCTAssertNil(try a.modify(zone: "Lists", operations: [stop])[0].error)
        let share = try a.createShare(zone: "Lists", record: "trip", participants: [try .parse(argument: Self.bob)])
        _ = try w.api.acceptShares(AcceptSharesRequest(shortGUIDs: [ShortGUIDRequest(share.shortGUID)]), as: caller(.shared, .appleID(Self.bob)))
        let start = try a.head(zone: "Lists")
        XCTAssertNil(try a.modify(zone: "Lists", operations: [RecordOperation(type: .forceDelete, recordName: "trip")])[0].error)
        let log = try w.api.log(LogRequest(zoneName: "Lists", since: try ref("Lists@\(start)")), as: caller(.shared, .appleID(Self.bob)))
        let deleted = Set((log.document["changes"]?.arrayValue ?? []).filter { $0["operation"] == "delete" }.compactMap { $0["recordName"]?.stringValue })
        XCTAssertTrue(deleted.isSuperset(of: ["trip", "stop"]), "\(deleted)")
    }

    // MARK: the public database

    func testPublicReadersSeeOnlyWhatTheGrantsLetThem() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: Self.bob, givenName: nil, familyName: nil, phone: nil)
        try SchemaAdmin(paths: t.store.paths, container: testContainer).importSchema("""
        DEFINE SCHEMA
        RECORD TYPE Diary (text STRING, GRANT CREATE TO "_icloud", GRANT READ, WRITE TO "_creator");
        RECORD TYPE Note (title STRING, GRANT CREATE TO "_icloud", GRANT WRITE TO "_creator", GRANT READ TO "_world");
        """, validateOnly: false)
        let api = api(t.root)
        let pub = { (who: String) in t.client(caller(.public, .appleID(who))) }
        XCTAssertNil(try pub(Self.alice).modify(zone: "_defaultZone", operations: [op(.create, "secret", type: "Diary", ["text": "classified"])])[0].error)
        XCTAssertNil(try pub(Self.bob).modify(zone: "_defaultZone", operations: [op(.create, "mine", type: "Diary", ["text": "bob's"])])[0].error)
        XCTAssertNil(try pub(Self.alice).modify(zone: "_defaultZone", operations: [op(.create, "note", type: "Note", ["title": "hello"])])[0].error)
        XCTAssertNil(try pub(Self.alice).modify(zone: "_defaultZone", operations: [op(.forceDelete, "secret")])[0].error)
        // bob, then nobody at all (no account): the same device signed out sees only _world.
        for (c, visible) in [(caller(.public, .appleID(Self.bob)), ["mine", "note"]), (caller(.public, .nobody), ["note"])] {
            let log = try api.log(LogRequest(patch: true), as: c)
            assertNothingHidden(text(log), "public log --patch", of: ["secret", "classified"])
            XCTAssertEqual(Set(names(log)), Set(visible))
            for s in [1, 4] {
                let e = failure { try api.show(ShowRequest(try self.ref("_defaultZone@\(s)")), as: c) }
                XCTAssertEqual(e?.code, .notFound)
                assertNothingHidden(e?.reason ?? "", "show", of: ["secret", "classified", "Diary"])
            }
            XCTAssertEqual(Set(names(try api.diff(DiffRequest(from: try ref("_defaultZone@0"), to: try ref("_defaultZone@3")), as: c))), Set(visible))
            XCTAssertEqual(failure { try api.blame(BlameRequest(recordName: "secret", at: try self.ref("_defaultZone@3")), as: c) }?.code, .notFound)
            let got = try api.lookupRecords(LookupRecordsRequest(recordNames: ["secret"], at: try ref("_defaultZone@3")), as: c)
            XCTAssertEqual(got.results[0].error?.code, .notFound, "never ACCESS_DENIED naming the type")
            assertNothingHidden(text(got).replacingOccurrences(of: "'secret'", with: "").replacingOccurrences(of: "\"secret\"", with: ""), "get --at", of: ["secret", "classified", "Diary"])
        }
        // Signed out: the device has no account, and --as cannot lend one.
        try t.store.accounts.signOut()
        let e = try api.log(LogRequest(), as: caller(.public, .appleID(Self.alice)))
        XCTAssertEqual(Set(names(e)), ["note"])
    }

    // MARK: owner-only maintenance

    func testParticipantsCannotAgeOrTagTheOwnersHistory() throws {
        let w = try world()
        _ = try w.api.createTag(CreateTagRequest(name: "mine"), as: caller(.private, .appleID(Self.alice)))
        let before = w.t.snapshot()
        let c = caller(.shared, .appleID(Self.bob))
        let refusals: [(String, () throws -> Any)] = [
            ("gc", { try w.api.compactHistory(GCRequest(zoneName: "Lists"), as: c) }),
            ("gc --keep-since", { try w.api.compactHistory(GCRequest(zoneName: "Lists", keepSince: try self.ref("Lists@3")), as: c) }),
            ("token expire", { try w.api.expireTokens(ExpireTokensRequest(zoneName: "Lists"), as: c) }),
            ("tag create", { try w.api.createTag(CreateTagRequest(name: "x"), as: c) }),
            ("tag list", { try w.api.listTags(as: c) }),
            ("tag delete", { try w.api.deleteTags(DeleteTagsRequest(names: ["mine"]), as: c) }),
            ("a tag as a reference", { try w.api.diff(DiffRequest(from: try self.ref("mine"), zoneName: "Lists"), as: c) }),
        ]
        for (what, call) in refusals {
            XCTAssertEqual(failure(call)?.code, .accessDenied, what)
            XCTAssertEqual(w.t.snapshot(), before, "\(what) changed the data directory")
        }
        // zone purge stays private-only (ZoneLifecycle): the shared database refuses it.
        XCTAssertThrowsError(try w.t.client(caller(.shared, .appleID(Self.bob))).purgeZone("Lists"))
        XCTAssertEqual(w.t.snapshot(), before)
        // The owner may.
        XCTAssertEqual(try w.api.compactHistory(GCRequest(zoneName: "Lists", keep: 2), as: caller(.private, .appleID(Self.alice))).document["head"]?.int64Value,
                       try w.t.client(caller(.private, .appleID(Self.alice))).head(zone: "Lists"))
    }

    // MARK: tags

    func testTagsLiveInTheirOwnersDatabase() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: Self.bob, givenName: nil, familyName: nil, phone: nil)
        let api = api(t.root)
        for u in [Self.alice, Self.bob] {
            try t.client(caller(.private, .appleID(u))).createZone("Lists")
            XCTAssertNil(try t.client(caller(.private, .appleID(u))).modify(zone: "Lists", operations: [op(.create, "r", ["n": 1])])[0].error)
        }
        let mine = try api.createTag(CreateTagRequest(name: "v1", message: "alice's"), as: caller(.private, .appleID(Self.alice)))
        let aliceDB = try t.directory(as: Self.alice)
        XCTAssertTrue(FileManager.default.fileExists(atPath: aliceDB + "/tags/v1.json"))
        XCTAssertEqual(mine.document["zones"]?.arrayValue?.count, 1, "only alice's zones")
        XCTAssertFalse(text(mine).contains(try t.directory(as: Self.bob).dropFirst(t.root.count + 1)))
        // bob has his own namespace: the same name is free, his list shows only his, and
        // alice's tag is nothing to him.
        XCTAssertNoThrow(try api.createTag(CreateTagRequest(name: "v1"), as: caller(.private, .appleID(Self.bob))))
        XCTAssertEqual(try api.listTags(as: caller(.private, .appleID(Self.bob))).document["tags"]?.arrayValue?.count, 1)
        XCTAssertFalse(text(try api.listTags(as: caller(.private, .appleID(Self.bob)))).contains("alice's"))
        XCTAssertNoThrow(try api.deleteTags(DeleteTagsRequest(names: ["v1"]), as: caller(.private, .appleID(Self.bob))))
        XCTAssertEqual(failure { try api.deleteTags(DeleteTagsRequest(names: ["v1"]), as: caller(.private, .appleID(Self.bob))) }?.code, .notFound)
        XCTAssertTrue(FileManager.default.fileExists(atPath: aliceDB + "/tags/v1.json"), "bob cannot delete alice's tag")
        XCTAssertEqual(failure { try api.lookupRecords(LookupRecordsRequest(recordNames: ["r"], zoneName: "Lists", at: try self.ref("v1")), as: caller(.private, .appleID(Self.bob))) }?.code, .notFound)
        // alice's tag is a reference in her database, and only there.
        XCTAssertNil(try api.lookupRecords(LookupRecordsRequest(recordNames: ["r"], zoneName: "Lists", at: try ref("v1")), as: caller(.private, .appleID(Self.alice))).results[0].error)
        XCTAssertEqual(failure { try api.diff(DiffRequest(from: try self.ref("v1")), as: caller(.public, .appleID(Self.alice))) }?.code, .notFound)
        // The public database has tags of its own.
        XCTAssertNil(try t.client(caller(.public, .appleID(Self.alice))).modify(zone: "_defaultZone", operations: [op(.create, "p", ["n": 1])])[0].error)
        XCTAssertNoThrow(try api.createTag(CreateTagRequest(name: "v1"), as: caller(.public, .appleID(Self.bob))))
        XCTAssertEqual(try api.listTags(as: caller(.public, .appleID(Self.alice))).document["tags"]?.arrayValue?.count, 1)
        XCTAssertEqual(try api.listTags(as: caller(.private, .appleID(Self.alice))).document["tags"]?.arrayValue?.first?["message"], "alice's")
    }

    func testTagsOfAnEarlierDataDirectoryMoveIntoTheDatabasesTheyName() throws {
        let t = TempStore()
        try t.store.accounts.signIn(appleID: Self.bob, givenName: nil, familyName: nil, phone: nil)
        let api = api(t.root)
        for u in [Self.alice, Self.bob] {
            try t.client(caller(.private, .appleID(u))).createZone("Lists")
            XCTAssertNil(try t.client(caller(.private, .appleID(u))).modify(zone: "Lists", operations: [op(.create, "r", ["n": 1])])[0].error)
        }
        XCTAssertNil(try t.client(caller(.public, .appleID(Self.alice))).modify(zone: "_defaultZone", operations: [op(.create, "p", ["n": 1])])[0].error)
        let rel = { (p: String) in String(p.dropFirst(t.root.count + 1)) }
        let aliceZone = rel(try t.zoneStore("Lists", as: Self.alice).directory), bobZone = rel(try t.zoneStore("Lists", as: Self.bob).directory)
        let pubZone = rel(try t.zoneStore("_defaultZone", .public).directory)
        func point(_ z: String) -> JSONValue { ["zone": .string(z), "incarnation": .string(try! JSONParser.parse(Array(FileManager.default.contents(atPath: t.root + "/" + z + "/zone.json")!))["incarnation"]!.stringValue!), "seq": 1] }
        let legacy = t.root + "/tags"
        try FileManager.default.createDirectory(atPath: legacy, withIntermediateDirectories: true)
        func write(_ name: String, _ doc: JSONValue) { _ = FileManager.default.createFile(atPath: legacy + "/" + name, contents: Data(JSONWriter.pretty(doc).utf8)) }
        write("old.json", ["schemaVersion": 2, "name": "old", "created": 5, "message": "before", "zones": .array([point(aliceZone), point(bobZone), point(pubZone)])])
        write("empty.json", ["schemaVersion": 2, "name": "empty", "created": 5, "zones": []])
        write("hostile.json", ["schemaVersion": 2, "name": "hostile", "created": 5, "zones": [["zone": "../../etc/zones/x", "incarnation": "i", "seq": 1]]])
        _ = FileManager.default.createFile(atPath: legacy + "/damaged.json", contents: Data("{".utf8))

        // Any use of tags moves them: each database gets its own points of the tag.
        XCTAssertEqual(try api.listTags(as: caller(.private, .appleID(Self.bob))).document["tags"]?.arrayValue?.map { $0["name"] }, ["old"])
        for (db, zone) in [(try t.directory(as: Self.alice), aliceZone), (try t.directory(as: Self.bob), bobZone), (try t.directory(.public), pubZone)] {
            let moved = try JSONParser.parse(Array(try XCTUnwrap(FileManager.default.contents(atPath: db + "/tags/old.json"))))
            XCTAssertEqual(moved["zones"]?.arrayValue?.map { $0["zone"]?.stringValue }, [zone])
            XCTAssertEqual(moved["message"], "before")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: legacy).sorted(), ["damaged.json", "hostile.json"], "what does not read as a tag of a database stays")
        XCTAssertFalse(FileManager.default.fileExists(atPath: t.root + "/etc"))
        XCTAssertEqual(try api.lookupRecords(LookupRecordsRequest(recordNames: ["r"], zoneName: "Lists", at: try ref("old")), as: caller(.private, .appleID(Self.alice))).results[0].record?.recordName, "r")
        // Moving is done once: another use changes nothing.
        let after = t.snapshot()
        _ = try api.listTags(as: caller(.private, .appleID(Self.alice)))
        XCTAssertEqual(t.snapshot(), after)
        // Once the leftovers go, so does the directory.
        try FileManager.default.removeItem(atPath: legacy + "/damaged.json")
        try FileManager.default.removeItem(atPath: legacy + "/hostile.json")
        _ = try api.listTags(as: caller(.private, .appleID(Self.alice)))
        XCTAssertFalse(FileManager.default.fileExists(atPath: legacy))
    }

    // MARK: bad input

    func testBadInputFailsClearlyAndChangesNothing() throws {
        let w = try world()
        let other = w.t.client(caller(.private, .appleID(Self.alice)))
        try other.createZone("Other")
        _ = try other.modify(zone: "Other", operations: [op(.create, "o", ["n": 1])])
        let foreign = try other.zoneChanges(zone: "Other", since: nil, limit: 1).syncToken
        let before = w.t.snapshot()
        let a = caller(.private, .appleID(Self.alice))
        let cases: [(String, ServerErrorCode, () throws -> Any)] = [
            ("unknown tag", .notFound, { try w.api.diff(DiffRequest(from: try self.ref("nosuchtag"), zoneName: "Lists"), as: a) }),
            ("past the head", .badRequest, { try w.api.show(ShowRequest(try self.ref("Lists@999")), as: a) }),
            ("a foreign token", .badRequest, { try w.api.log(LogRequest(zoneName: "Lists", since: .token(foreign)), as: a) }),
            ("a forged token", .badRequest, { try w.api.show(ShowRequest(.token("ck1.forged"), zoneName: "Lists"), as: a) }),
            ("two zones", .badRequest, { try w.api.diff(DiffRequest(from: try self.ref("Lists@1"), to: try self.ref("Other@1")), as: a) }),
            ("the start", .badRequest, { try w.api.revert(RevertRequest(try self.ref("Lists@0")), as: a) }),
            ("a hostile zone", .badRequest, { try w.api.log(LogRequest(zoneName: "../../x"), as: a) }),
            ("a hostile record", .badRequest, { try w.api.blame(BlameRequest(recordName: String(repeating: "x", count: 300), zoneName: "Lists"), as: a) }),
            ("a hostile tag", .badRequest, { try w.api.createTag(CreateTagRequest(name: "a/../../b\u{0}"), as: a) }),
            ("a tag that reads as a time", .badRequest, { try w.api.createTag(CreateTagRequest(name: "yesterday"), as: a) }),
            ("an unknown user", .notFound, { try w.api.log(LogRequest(zoneName: "Lists", user: "nobody@example.com"), as: a) }),
            ("a negative keep", .badRequest, { try w.api.compactHistory(GCRequest(zoneName: "Lists", keep: -1), as: a) }),
            ("delete of an unknown tag", .notFound, { try w.api.deleteTags(DeleteTagsRequest(names: ["nosuchtag"]), as: a) }),
        ]
        for (what, code, call) in cases {
            XCTAssertEqual(failure(call)?.code, code, what)
            XCTAssertEqual(w.t.snapshot(), before, "\(what) changed the data directory")
        }
    }
}
