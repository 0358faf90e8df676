import Foundation
import CKJSON
import CKModel
import CKTestSupport
import XCTest
@testable import CKCore

/// The tracking state of a remote and the three-way rules on it, in-process: pages saved with
/// their cursor, a merge that takes only what changed remotely, conflicts left alone unless a
/// strategy decides, a push plan with the base's tags, and the base moved by a push's answers.
/// (The HTTP side, against a ck serve, is CKRemoteTests.)
final class RemoteTrackingTests: XCTestCase {
    let zone = RemoteZone(remote: "origin", zoneName: "Lists")

    func setUpStore() throws -> (TempStore, APIClient) {
        let t = TempStore()
        try t.api.addRemote("origin", url: try RemoteURL("http://127.0.0.1:9/database/1/iCloud.com.example.test/development"))
        return (t, t.client())
    }

    /// A record as a remote answers it.
    func remoteRecord(_ name: String, tag: String, title: String) -> JSONValue {
        .object(["recordName": .string(name), "recordType": "Item", "recordChangeTag": .string(tag),
                 "fields": .object(["title": .object(["value": .string(title), "type": "STRING"])])])
    }

    func title(_ c: APIClient, _ name: String) throws -> String? {
        try c.records(zone: "Lists")[name]?.fields["title"]?.value.stringValue
    }

    /// A remote's shared zone names its owner; a name that is no user record name (a path, a
    /// forged value) makes no user and writes nothing.
    func testASharedZoneOwnedByNoUserRecordNameIsRefusedAndChangesNothing() throws {
        let (t, c) = try setUpStore()
        var shared = c.caller
        shared.scope = .shared
        for owner in ["../../../etc", "_ABC", "_" + String(repeating: "0", count: 32) + "/x"] {
            let z = RemoteZone(remote: "origin", zoneName: "Trip", ownerRecordName: owner)
            try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A")], complete: true), for: z, as: shared)
            let users = try FileManager.default.contentsOfDirectory(atPath: t.root + "/users").sorted()
            XCTAssertThrowsError(try t.api.mergeRemote(z, as: shared), owner) { e in
                XCTAssertEqual((e as? CloudKitError)?.code, .badRequest, "\(e)")
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: t.root + "/users").sorted(), users, "no user made for \(owner)")
        }
    }

    /// CloudKit never shows a user's own zone in their shared database: a remote that names the
    /// caller (here) as the owner of a zone of the shared database writes nothing into the
    /// caller's private database.
    func testASharedZoneOwnedByTheCallerIsRefusedAndWritesNothingIntoTheirPrivateDatabase() throws {
        let (t, c) = try setUpStore()
        _ = try t.api.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Trip")]), as: c.caller)
        let me = try XCTUnwrap(try t.api.principal(c.caller).user?.userRecordName)
        var shared = c.caller
        shared.scope = .shared
        let z = RemoteZone(remote: "origin", zoneName: "Trip", ownerRecordName: me)
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("planted", tag: "1", title: "from the remote")], complete: true), for: z, as: shared)
        XCTAssertThrowsError(try t.api.mergeRemote(z, as: shared)) { e in
            XCTAssertEqual((e as? CloudKitError)?.code, .badRequest, "\(e)")
        }
        XCTAssertNil(try c.records(zone: "Trip")["planted"], "the caller's own private zone took a record of their shared database")
    }

    /// A zone whose name is long (or long once encoded for a file name: 23 CJK characters)
    /// is tracked like any other: fetched, it is among the zones a pull merges and a push sends.
    func testAZoneWithALongNameIsStillTracked() throws {
        let (t, c) = try setUpStore()
        for name in [String(repeating: "z", count: 230), String(repeating: "旅", count: 23)] {
            let z = RemoteZone(remote: "origin", zoneName: name)
            try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A")], complete: true), for: z, as: c.caller)
            XCTAssertTrue(try t.api.trackedZones(remote: "origin", as: c.caller).contains { $0.zoneName == name }, "zone of \(name.utf8.count) bytes is not tracked")
        }
    }

    /// The summary kept beside a zone's log answers only for the log it was made from: an
    /// append after it (a page fetched since) is read from the log, never missed.
    func testTheSummaryBesideALogIsUsedOnlyWhileTheLogIsUnchanged() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A")], syncToken: "t1", complete: true), for: zone, as: c.caller)
        _ = try t.api.mergeRemote(zone, as: c.caller)
        let settled = try t.api.remoteTracking(zone, remember: true, as: c.caller)
        XCTAssertEqual(settled.behind, 0)
        let log = try XCTUnwrap(FileManager.default.enumerator(atPath: t.root)?.compactMap { $0 as? String }.first { $0.hasSuffix("Lists.log") })
        let summaryPath = t.root + "/" + log + ".summary"
        XCTAssertTrue(FileManager.default.fileExists(atPath: summaryPath), "a fetch keeps the summary")
        // A page fetched since: the summary no longer answers; the merge takes the page.
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "2", title: "A2")], syncToken: "t2", complete: true), for: zone, as: c.caller)
        XCTAssertEqual(try t.api.remoteTracking(zone, as: c.caller).syncToken, "t2")
        XCTAssertEqual(try t.api.mergeRemote(zone, as: c.caller).saved, ["a"])
        XCTAssertEqual(try title(c, "a"), "A2")
        // A summary planted with another log's stamp is no summary.
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "3", title: "A3")], syncToken: "t3", complete: true), for: zone, as: c.caller)
        var planted = try XCTUnwrap(try JSONParser.parse(Array(Data(contentsOf: URL(fileURLWithPath: summaryPath)))).objectValue)
        planted["state"] = .object(["cursor": .object([:]), "complete": true, "fetched": 1, "behind": 0, "syncToken": "t2"])
        try Data(JSONWriter.compact(.object(planted)).utf8).write(to: URL(fileURLWithPath: summaryPath))
        XCTAssertEqual(try t.api.remoteTracking(zone, as: c.caller).behind, 1)
        XCTAssertEqual(try t.api.mergeRemote(zone, as: c.caller).saved, ["a"])
        XCTAssertEqual(try title(c, "a"), "A3")
    }

    func testFetchedPagesMergeIntoTheLocalStoreAsTheRemotesDevice() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A"), remoteRecord("b", tag: "1", title: "B")], syncToken: "t1", complete: false), for: zone, as: c.caller)
        let s = try t.api.remoteTracking(zone, as: c.caller)
        XCTAssertEqual(s.syncToken, "t1")
        XCTAssertEqual(s.fetched, 2)
        XCTAssertEqual(s.behind, 2)
        XCTAssertThrowsError(try c.records(zone: "Lists"), "a fetch makes no local zone, writes no record")
        let m = try t.api.mergeRemote(zone, as: c.caller)
        XCTAssertEqual(m.saved.sorted(), ["a", "b"])
        XCTAssertEqual(try title(c, "a"), "A")
        XCTAssertEqual(try c.records(zone: "Lists")["a"]?.modified.deviceID, "remote:origin")
        XCTAssertEqual(try t.api.remoteTracking(zone, as: c.caller).behind, 0, "the base moved to what was taken")
        XCTAssertTrue(try t.api.mergeRemote(zone, as: c.caller).saved.isEmpty, "a second merge has nothing to take")
    }

    func testRemoteDeletionsAreAppliedAndARecordChangedOnBothSidesIsAConflict() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A"), remoteRecord("b", tag: "1", title: "B")], syncToken: "t1"), for: zone, as: c.caller)
        _ = try t.api.mergeRemote(zone, as: c.caller)
        // Locally: b changed. Remotely: a deleted, b changed.
        try c.modify(zone: "Lists", operations: [RecordOperation(type: .forceUpdate, recordName: "b", recordType: "Item", fields: ["title": RecordField(type: FieldType(.string), value: "B local")])])
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("b", tag: "2", title: "B remote")], deleted: ["a"], syncToken: "t2"), for: zone, as: c.caller)
        let m = try t.api.mergeRemote(zone, as: c.caller)
        XCTAssertEqual(m.deleted, ["a"])
        XCTAssertEqual(m.conflicts, ["b"])
        XCTAssertNil(try c.records(zone: "Lists")["a"])
        XCTAssertEqual(try title(c, "b"), "B local", "a conflict is left as it is")
        XCTAssertEqual(try t.api.mergeRemote(zone, as: c.caller).conflicts, ["b"], "and stays one")
        let theirs = try t.api.mergeRemote(zone, strategy: .theirs, as: c.caller)
        XCTAssertEqual(theirs.saved, ["b"])
        XCTAssertEqual(try title(c, "b"), "B remote")
    }

    func testOursKeepsTheLocalVersionAndThePushSendsItOverTheRemotes() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("b", tag: "1", title: "B")]), for: zone, as: c.caller)
        _ = try t.api.mergeRemote(zone, as: c.caller)
        try c.modify(zone: "Lists", operations: [RecordOperation(type: .forceUpdate, recordName: "b", recordType: "Item", fields: ["title": RecordField(type: FieldType(.string), value: "mine")])])
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("b", tag: "2", title: "theirs")]), for: zone, as: c.caller)
        XCTAssertEqual(try t.api.pushPlan(zone, as: c.caller).behind, ["b"], "a push waits for the pull while the remote moved")
        XCTAssertEqual(try t.api.mergeRemote(zone, strategy: .ours, as: c.caller).conflicts, [])
        XCTAssertEqual(try title(c, "b"), "mine")
        let plan = try t.api.pushPlan(zone, as: c.caller)
        XCTAssertEqual(plan.behind, [])
        XCTAssertEqual(plan.operations.count, 1)
        XCTAssertEqual(plan.operations[0]["operationType"]?.stringValue, "update")
        XCTAssertEqual(plan.operations[0]["record"]?["recordChangeTag"]?.stringValue, "2", "sent with the tag of the version it overwrites")
    }

    func testThePushPlanSendsCreatesUpdatesAndDeletesWithTheBaseTags() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("keep", tag: "k1", title: "K"), remoteRecord("edit", tag: "e1", title: "E"),
                                                    remoteRecord("gone", tag: "g1", title: "G")]), for: zone, as: c.caller)
        _ = try t.api.mergeRemote(zone, as: c.caller)
        XCTAssertTrue(try t.api.pushPlan(zone, as: c.caller).operations.isEmpty, "nothing changed here since the base")
        try c.modify(zone: "Lists", operations: [
            RecordOperation(type: .forceUpdate, recordName: "edit", recordType: "Item", fields: ["title": RecordField(type: FieldType(.string), value: "E2")]),
            RecordOperation(type: .forceDelete, recordName: "gone"),
            RecordOperation(type: .create, recordName: "new", recordType: "Item", fields: ["title": RecordField(type: FieldType(.string), value: "N")]),
        ])
        let ops = try t.api.pushPlan(zone, as: c.caller).operations
        XCTAssertEqual(ops.map { $0["record"]?["recordName"]?.stringValue ?? "" }, ["edit", "gone", "new"])
        XCTAssertEqual(ops.map { $0["operationType"]?.stringValue ?? "" }, ["update", "delete", "create"])
        XCTAssertEqual(ops.map { $0["record"]?["recordChangeTag"]?.stringValue }, ["e1", "g1", nil])
        XCTAssertEqual(ops[0]["record"]?["fields"]?["title"]?["value"]?.stringValue, "E2")
        let forced = try t.api.pushPlan(zone, force: true, as: c.caller).operations
        XCTAssertEqual(forced.map { $0["operationType"]?.stringValue ?? "" }, ["forceUpdate", "forceDelete", "forceReplace"])
        // The remote's answers move the base: the next plan is empty.
        let answers: [JSONValue] = [remoteRecord("edit", tag: "e2", title: "E2"), .object(["recordName": "gone", "deleted": true]),
                                    .object(["recordName": "new", "recordType": "Item", "recordChangeTag": "n1"])]
        let out = try t.api.recordPushed(zone, sent: ops, answers: answers, as: c.caller)
        XCTAssertEqual(out.saved, ["edit", "new"])
        XCTAssertEqual(out.deleted, ["gone"])
        XCTAssertTrue(try t.api.pushPlan(zone, as: c.caller).operations.isEmpty, "an answer without fields takes the fields sent")
    }

    /// CloudKit names uploaded bytes by a checksum of its own: after a push, the base keeps the
    /// asset as it is here, so the asset does not look changed and is not sent again.
    func testAnAssetPushedIsNotSentAgainWhenTheServiceAnswersWithItsOwnChecksum() throws {
        let (t, c) = try setUpStore()
        _ = try t.api.modifyZones(ZonesModifyRequest(operations: [.init(.create, "Lists")]), as: c.caller)
        let bytes = Array("photo bytes".utf8)
        let sum = AssetValue.checksum(of: bytes)
        var save = ModifyRequest(operations: [RecordOperation(type: .create, recordName: "doc", recordType: "Doc", fields: [
            "file": RecordField(type: FieldType(.asset), value: ["fileChecksum": .string(sum), "size": .int(Int64(bytes.count))]),
        ])], zoneName: "Lists")
        save.uploadedAssets[sum] = bytes
        for case .failed(let e) in try t.api.modifyRecords(save, as: c.caller).results { throw e }
        let planned = try t.api.pushPlan(zone, as: c.caller).operations
        XCTAssertEqual(planned.count, 1)
        // What went out after the upload, and what the service answered: its own checksum.
        let receipt: JSONValue = .object(["fileChecksum": "AppleChecksumOfTheBytes", "size": .int(Int64(bytes.count)), "receipt": "r1"])
        var sentRecord = try XCTUnwrap(planned[0]["record"]?.objectValue)
        sentRecord["fields"] = .object(["file": .object(["type": "ASSETID", "value": receipt])])
        let answer: JSONValue = .object(["recordName": "doc", "recordType": "Doc", "recordChangeTag": "d1",
                                         "fields": .object(["file": .object(["type": "ASSETID", "value": .object([
                                             "fileChecksum": "AppleChecksumOfTheBytes", "size": .int(Int64(bytes.count)),
                                             "downloadURL": "https://cvws.icloud-content.com/B/x/${f}"])])])])
        let out = try t.api.recordPushed(zone, sent: [.object(["operationType": "create", "record": .object(sentRecord)])], answers: [answer], planned: planned, as: c.caller)
        XCTAssertEqual(out.saved, ["doc"])
        XCTAssertTrue(try t.api.pushPlan(zone, as: c.caller).operations.isEmpty, "the asset pushed looks changed: it would be sent again")
        XCTAssertEqual(try t.api.remoteTracking(zone, as: c.caller).behind, 0, "nothing to merge back either")
    }

    func testAPushAnswersConflictChangesNoBase() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A")]), for: zone, as: c.caller)
        _ = try t.api.mergeRemote(zone, as: c.caller)
        try c.modify(zone: "Lists", operations: [RecordOperation(type: .forceUpdate, recordName: "a", recordType: "Item", fields: ["title": RecordField(type: FieldType(.string), value: "A2")])])
        let ops = try t.api.pushPlan(zone, as: c.caller).operations
        let out = try t.api.recordPushed(zone, sent: ops, answers: [.object(["recordName": "a", "serverErrorCode": "CONFLICT", "reason": "oplock error"])], as: c.caller)
        XCTAssertEqual(out.failures.map(\.code), [.conflict])
        XCTAssertEqual(out.failures.first?.recordName, "a")
        XCTAssertEqual(try t.api.pushPlan(zone, as: c.caller).operations.count, 1, "still to send")
    }

    func testATornLastEntryIsNotState() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A")], syncToken: "t1"), for: zone, as: c.caller)
        let dir = try t.directory() + "/remotes/origin/zones"
        let log = dir + "/Lists.log"
        let h = try XCTUnwrap(FileHandle(forWritingAtPath: log))
        h.seekToEndOfFile()
        h.write(Data(#"{"syncToken":"t2","fetched":[{"recordName":"b""#.utf8))
        h.closeFile()
        let s = try t.api.remoteTracking(zone, as: c.caller)
        XCTAssertEqual(s.syncToken, "t1", "a page whose line never ended was never saved")
        XCTAssertEqual(s.fetched, 1)
        try t.api.saveFetched(FetchedPage(syncToken: "t3"), for: zone, as: c.caller)
        XCTAssertEqual(try t.api.remoteTracking(zone, as: c.caller).syncToken, "t3", "the next append cuts the torn tail")
        XCTAssertEqual(try t.api.remoteTracking(zone, as: c.caller).fetched, 1)
    }

    func testWholeLinesOfAnAppendThatNeverCommittedAreNoState() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A")], syncToken: "t1"), for: zone, as: c.caller)
        let log = try t.directory() + "/remotes/origin/zones/Lists.log"
        let h = try XCTUnwrap(FileHandle(forWritingAtPath: log))
        h.seekToEndOfFile()
        h.write(Data(("{\"begin\":true}\n{\"f\":" + JSONWriter.compact(remoteRecord("orphan", tag: "9", title: "O")) + "}\n").utf8))
        h.closeFile()
        XCTAssertEqual(try t.api.remoteTracking(zone, as: c.caller).fetched, 1, "no commit line: no state")
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("b", tag: "1", title: "B")], syncToken: "t2"), for: zone, as: c.caller)
        let s = try t.api.remoteTracking(zone, as: c.caller)
        XCTAssertEqual(s.fetched, 2, "the next append's begin drops what the failed one left")
        XCTAssertEqual(s.syncToken, "t2")
        XCTAssertTrue(try t.api.mergeRemote(zone, as: c.caller).saved.sorted() == ["a", "b"])
    }

    func testAResetForgetsWhatWasFetchedButKeepsTheBase() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A")], syncToken: "t1", complete: true), for: zone, as: c.caller)
        _ = try t.api.mergeRemote(zone, as: c.caller)
        try t.api.saveFetched(FetchedPage(reset: true), for: zone, as: c.caller)
        var s = try t.api.remoteTracking(zone, as: c.caller)
        XCTAssertNil(s.syncToken)
        XCTAssertFalse(s.complete)
        // Refetched from scratch: the same record again agrees with the base; nothing is written.
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A")], syncToken: "t9", complete: true), for: zone, as: c.caller)
        s = try t.api.remoteTracking(zone, as: c.caller)
        XCTAssertEqual(s.behind, 0)
        XCTAssertTrue(try t.api.mergeRemote(zone, as: c.caller).saved.isEmpty)
    }

    func testRemotesAreNamedCheckedRenamedAndRemovedWithTheirTracking() throws {
        let (t, c) = try setUpStore()
        XCTAssertThrowsError(try t.api.addRemote("origin", url: try RemoteURL("http://127.0.0.1:9/database/1/iCloud.x/development"))) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .exists)
        }
        for bad in ["", "-x", ".x", "a/b", "a b", String(repeating: "r", count: 65)] {
            XCTAssertThrowsError(try t.api.addRemote(bad, url: try RemoteURL("http://127.0.0.1:9/database/1/iCloud.x/development")), bad)
        }
        try t.api.saveFetched(FetchedPage(syncToken: "t1"), for: zone, as: c.caller)
        _ = try t.api.renameRemote("origin", to: "upstream")
        XCTAssertEqual(try t.api.remotes().map(\.name), ["upstream"])
        XCTAssertEqual(try t.api.remoteTracking(RemoteZone(remote: "upstream", zoneName: "Lists"), as: c.caller).syncToken, "t1")
        _ = try t.api.removeRemote("upstream")
        XCTAssertEqual(try t.api.remotes().count, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: try t.directory() + "/remotes/upstream"))
        XCTAssertThrowsError(try t.api.remoteTracking(RemoteZone(remote: "upstream", zoneName: "Lists"), as: c.caller)) {
            XCTAssertEqual(($0 as? CloudKitError)?.code, .notFound)
        }
    }

    func testTheDiffComparesTheLocalZoneWithTheRemoteAsFetched() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("same", tag: "1", title: "S"), remoteRecord("edit", tag: "1", title: "old"),
                                                    remoteRecord("theirs", tag: "1", title: "T")]), for: zone, as: c.caller)
        _ = try t.api.mergeRemote(zone, as: c.caller)
        try c.modify(zone: "Lists", operations: [
            RecordOperation(type: .forceUpdate, recordName: "edit", recordType: "Item", fields: ["title": RecordField(type: FieldType(.string), value: "new")]),
            RecordOperation(type: .forceDelete, recordName: "theirs"),
            RecordOperation(type: .create, recordName: "ours", recordType: "Item", fields: ["title": RecordField(type: FieldType(.string), value: "O")]),
        ])
        let d = try t.api.remoteDiff(zone, as: c.caller).document["changes"]?.arrayValue ?? []
        XCTAssertEqual(d.map { $0["recordName"]?.stringValue ?? "" }, ["edit", "ours", "theirs"])
        XCTAssertEqual(d.map { $0["status"]?.stringValue ?? "" }, ["changed", "added", "deleted"])
        XCTAssertEqual(d[0]["fields"]?["title"]?["old"]?["value"]?.stringValue, "old")
        XCTAssertEqual(d[0]["fields"]?["title"]?["new"]?["value"]?.stringValue, "new")
        let stat = try t.api.remoteDiff(zone, output: .stat, as: c.caller).document
        XCTAssertEqual(stat["changed"]?.int64Value, 1)
        XCTAssertEqual(stat["added"]?.int64Value, 1)
        XCTAssertEqual(stat["deleted"]?.int64Value, 1)
        let three = try t.api.remoteDiff(zone, record: "edit", as: c.caller).document
        XCTAssertEqual(three["base"]?["recordChangeTag"]?.stringValue, "1")
        XCTAssertEqual(three["local"]?["fields"]?["title"]?["value"]?.stringValue, "new")
    }

    func testStatusSaysHowFarEachZoneIsAheadOfAndBehindItsRemote() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A"), remoteRecord("b", tag: "1", title: "B")]), for: zone, as: c.caller)
        _ = try t.api.mergeRemote(zone, as: c.caller)
        try c.modify(zone: "Lists", operations: [RecordOperation(type: .forceDelete, recordName: "a")])
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("b", tag: "2", title: "B2"), remoteRecord("c", tag: "1", title: "C")]), for: zone, as: c.caller)
        let zones = try t.api.status(as: c.caller).document["zones"]?.arrayValue ?? []
        let lists = try XCTUnwrap(zones.first { $0["zoneName"]?.stringValue == "Lists" })
        XCTAssertEqual(lists["remotes"]?["origin"]?["ahead"]?.int64Value, 1)
        XCTAssertEqual(lists["remotes"]?["origin"]?["behind"]?.int64Value, 2)
        XCTAssertNil(zones.first { $0["zoneName"]?.stringValue == ZoneID.defaultZoneName }?["remotes"], "an untracked zone says nothing of remotes")
    }

    func testPruningAfterAWholeScanDeletesWhatItDidNotSee() throws {
        let (t, c) = try setUpStore()
        let z = RemoteZone(remote: "origin", zoneName: ZoneID.defaultZoneName)
        let other: JSONValue = .object(["recordName": "o", "recordType": "Other", "recordChangeTag": "1", "fields": .object([:])])
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A"), remoteRecord("b", tag: "1", title: "B"), other], cursor: ["Item": .null], startsScan: true), for: z, as: c.caller)
        try t.api.saveFetched(FetchedPage(complete: true), for: z, as: c.caller)
        _ = try t.api.mergeRemote(z, as: c.caller)
        XCTAssertEqual(try t.api.pruneUnseen(z, types: ["Item"], as: c.caller), [], "the scan saw everything")
        // The next scan sees only a.
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A")], cursor: ["Item": .null], complete: false, startsScan: true), for: z, as: c.caller)
        XCTAssertEqual(try t.api.pruneUnseen(z, types: ["Item"], as: c.caller), [], "not before the scan is whole")
        try t.api.saveFetched(FetchedPage(complete: true), for: z, as: c.caller)
        XCTAssertEqual(try t.api.pruneUnseen(z, types: ["Item"], as: c.caller), ["b"], "o is of a type the scan did not query")
        XCTAssertEqual(try t.api.mergeRemote(z, as: c.caller).deleted, ["b"])
        XCTAssertEqual(try c.records(zone: ZoneID.defaultZoneName).keys.sorted(), ["a", "o"])
    }

    func testGarbageAfterTheLastCommitIsNoStateButInsideAChangeIsDamageNamed() throws {
        let (t, c) = try setUpStore()
        try t.api.saveFetched(FetchedPage(records: [remoteRecord("a", tag: "1", title: "A")], syncToken: "t1"), for: zone, as: c.caller)
        let log = try t.directory() + "/remotes/origin/zones/Lists.log"
        func add(_ text: String) throws {
            let h = try XCTUnwrap(FileHandle(forWritingAtPath: log))
            h.seekToEndOfFile()
            h.write(Data(text.utf8))
            h.closeFile()
        }
        // What a crash with delayed allocation leaves: whole lines of zeros.
        try add(String(repeating: "\u{0}", count: 40) + "\n")
        XCTAssertEqual(try t.api.remoteTracking(zone, as: c.caller).syncToken, "t1")
        try t.api.saveFetched(FetchedPage(syncToken: "t2"), for: zone, as: c.caller)
        XCTAssertEqual(try t.api.remoteTracking(zone, as: c.caller).syncToken, "t2", "the next begin drops it")
        // A damaged line inside a committed change is named, with what to do.
        try add("{\"begin\":true}\nnot json\n{\"commit\":true,\"syncToken\":\"t3\"}\n")
        XCTAssertThrowsError(try t.api.remoteTracking(zone, as: c.caller)) { e in
            XCTAssertTrue((e as? CloudKitError)?.reason.contains("ck fetch") == true, "\(e)")
        }
    }
}
