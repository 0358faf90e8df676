import CKTestSupport
import Foundation
import XCTest

/// ck's JSON held against bodies recorded from Apple's servers (Tests/Fixtures/wire): each
/// command prints the body of the Web Services endpoint it stands for (Docs/wire.md), with the
/// keys and value shapes the recordings show. Key order is not compared: ck sorts keys.
final class WireShapeTests: XCTestCase {
    /// Keys ck's error dictionaries add to the recorded ones: `uuid` (Apple's reference lists
    /// it on per-record errors; it is on every request-level one) and SPEC's `ckErrorCode`.
    let errorExtras: Set<String> = ["uuid", "ckErrorCode"]

    private func asset(_ s: CLISandbox, _ text: String) -> String {
        let f = s.root.appendingPathComponent("asset-\(text.count).bin")
        try! Data(text.utf8).write(to: f)
        return f.path
    }

    /// A private-database zone shaped like Photos' PrimarySync: a master with an encrypted
    /// name and an asset, and an asset record pointing at it with DELETE_SELF.
    private func photosLikeZone() -> CLISandbox {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "PrimarySync").status, 0)
        let master = s.run(["--zone", "PrimarySync", "record", "save", "--type", "CPLMaster", "--name", "ATHLCfCNzYgUm2ZF/nHvUbleC3ld",
                            "filenameEnc:ENCRYPTED_BYTES=SU1HXzM1ODIuSEVJQw==", "itemType=public.heic", "originalOrientation=1",
                            "resOriginalRes:ASSET=@" + asset(s, "original bytes")])
        XCTAssertEqual(master.status, 0, master.stderr)
        let a = s.run(["--zone", "PrimarySync", "record", "save", "--type", "CPLAsset", "--name", "1E560E3B-DB4F-4BBD-8091-DBA2674BB953",
                       "masterRef:REFERENCE=ATHLCfCNzYgUm2ZF/nHvUbleC3ld,DELETE_SELF", "addedDate:TIMESTAMP=1685668041943", "isFavorite=0"])
        XCTAssertEqual(a.status, 0, a.stderr)
        return s
    }

    // MARK: records and values

    func testRecordsAndValuesAreShapedAsRecorded() {
        let recorded = WireFixture("records-query.response.photos-assets")
        let master = recorded.records[0], photo = recorded.records[2]
        let s = photosLikeZone()
        XCTAssertEqual(s.ck("schema", "index", "add", "CPLMaster", "___recordID", "QUERYABLE").status, 0)
        let q = s.ck("--zone", "PrimarySync", "record", "query", "--type", "CPLMaster")
        XCTAssertEqual(q.status, 0, q.stderr)
        let mine = q.record
        Shape.assertSameKeys(mine, master, "record")
        Shape.assertSameKeys(mine["zoneID"], master["zoneID"], "record.zoneID")
        XCTAssertEqual((mine["zoneID"] as? [String: Any])?["zoneType"] as? String, "REGULAR_CUSTOM_ZONE")
        for k in ["created", "modified"] { Shape.assertSameKeys(mine[k], master[k], "record.\(k)") }
        XCTAssertEqual(mine["pluginFields"] as? NSDictionary, [:] as NSDictionary)

        let fields = mine["fields"] as? [String: [String: Any]] ?? [:]
        let theirs = master["fields"] as? [String: [String: Any]] ?? [:]
        for (k, v) in fields { XCTAssertEqual(Set(v.keys), Shape.keys(theirs["itemType"]), "fields.\(k)") }
        XCTAssertEqual(fields["filenameEnc"]?["type"] as? String, theirs["filenameEnc"]?["type"] as? String, "ENCRYPTED_BYTES")
        XCTAssertEqual(fields["filenameEnc"]?["value"] as? String, theirs["filenameEnc"]?["value"] as? String)

        // ASSETID in the private database: fileChecksum, size, wrappingKey, referenceChecksum, downloadURL.
        let myAsset = fields["resOriginalRes"]?["value"], theirAsset = theirs["resOriginalRes"]?["value"]
        XCTAssertEqual(fields["resOriginalRes"]?["type"] as? String, "ASSETID")
        Shape.assertSameKeys(myAsset, theirAsset, "ASSETID value")
        let a = myAsset as? [String: Any] ?? [:], b = theirAsset as? [String: Any] ?? [:]
        XCTAssertEqual(Shape.base64Length(a["wrappingKey"]), Shape.base64Length(b["wrappingKey"]), "a 16-byte wrapping key")
        XCTAssertEqual(Shape.base64Length(a["referenceChecksum"]), Shape.base64Length(b["referenceChecksum"]), "a 21-byte reference checksum")
        XCTAssertEqual(a["size"] as? Int, "original bytes".utf8.count)
        // The downloadURL serves the bytes.
        let url = a["downloadURL"] as? String ?? ""
        XCTAssertTrue(url.hasPrefix("file:///"), url)
        XCTAssertEqual(try? String(contentsOf: URL(string: url)!, encoding: .utf8), "original bytes")

        // REFERENCE: {recordName, action, zoneID{zoneName, ownerRecordName, zoneType}}, filled by the server.
        let p = s.ck("--zone", "PrimarySync", "record", "get", "1E560E3B-DB4F-4BBD-8091-DBA2674BB953")
        let myRef = ((p.record["fields"] as? [String: Any])?["masterRef"] as? [String: Any])?["value"] as? [String: Any]
        let theirRef = ((photo["fields"] as? [String: Any])?["masterRef"] as? [String: Any])?["value"] as? [String: Any]
        Shape.assertSameKeys(myRef, theirRef, "REFERENCE value")
        Shape.assertSameKeys(myRef?["zoneID"], theirRef?["zoneID"], "REFERENCE zoneID")
        XCTAssertEqual(myRef?["action"] as? String, "DELETE_SELF")
        XCTAssertEqual((myRef?["zoneID"] as? [String: Any])?["ownerRecordName"] as? String,
                       (p.record["zoneID"] as? [String: Any])?["ownerRecordName"] as? String, "the server fills in the owner")
        XCTAssertEqual(((p.record["fields"] as? [String: Any])?["addedDate"] as? [String: Any])?["type"] as? String, "TIMESTAMP")
    }

    func testPublicAssetsCarryNoKeysAndDefaultZonesSayDefaultZone() {
        let recorded = WireFixture("records-query.response.public-default-zone")
        let s = CLISandbox()
        s.signIn()
        let f = asset(s, "public bytes")
        XCTAssertEqual(s.ck("--db", "public", "record", "save", "--type", "Feed", "--name", "f1", "title=BrightDigit", "logo:ASSET=@" + f).status, 0)
        XCTAssertEqual(s.ck("schema", "index", "add", "Feed", "___recordID", "QUERYABLE").status, 0)
        let q = s.ck("--db", "public", "record", "query", "--type", "Feed")
        XCTAssertEqual(q.status, 0, q.stderr)
        Shape.assertSameKeys(q.object, recorded.object, "records/query body")
        Shape.assertSameKeys(q.record, recorded.records[1], "public record")
        Shape.assertSameKeys(q.record["zoneID"], recorded.records[1]["zoneID"], "public zoneID")
        XCTAssertEqual((q.record["zoneID"] as? [String: Any])?["zoneType"] as? String, "DEFAULT_ZONE")
        let logo = (((q.record["fields"] as? [String: Any])?["logo"] as? [String: Any])?["value"] as? [String: Any]) ?? [:]
        XCTAssertEqual(Set(logo.keys), ["fileChecksum", "size", "downloadURL"], "the public database does not encrypt assets")
    }

    // MARK: endpoints

    func testLookupShowsRecordsAndPerRecordErrors() {
        let s = photosLikeZone()
        let r = s.run(["--zone", "PrimarySync", "record", "get", "ATHLCfCNzYgUm2ZF/nHvUbleC3ld", "missing"])
        XCTAssertEqual(r.status, 9, r.stderr)
        XCTAssertEqual(Shape.keys(r.object), ["records"], "records/lookup: {records}")
        let items = r.object["records"] as? [[String: Any]] ?? []
        XCTAssertEqual(items.count, 2)
        Shape.assertSameKeys(items.first, WireFixture("records-query.response.photos-assets").records[0], "looked-up record")
        let recordedError = WireFixture("records-modify.response.public-per-record-access-denied").records[0]
        Shape.assertSameKeys(items.last, recordedError, optional: errorExtras, "per-record error")
        XCTAssertEqual(items.last?["serverErrorCode"] as? String, "NOT_FOUND")
        // One name: still {records:[…]}.
        XCTAssertEqual(Shape.keys(s.ck("--zone", "PrimarySync", "record", "get", "ATHLCfCNzYgUm2ZF/nHvUbleC3ld").object), ["records"])
    }

    func testModifyResponsesCarryNoZoneIDAndDeletionsAreBareTombstones() {
        let created = WireFixture("records-modify.response.public-create")
        let forceDeleted = WireFixture("records-modify.response.photos-album-remove-photo-forcedelete")
        let s = photosLikeZone()
        let save = s.ck("--zone", "PrimarySync", "record", "save", "--type", "CPLAlbum", "--name", "album", "position=1051646")
        XCTAssertEqual(save.status, 0, save.stderr)
        XCTAssertEqual(Shape.keys(save.object), Shape.keys(created.object), "records/modify: {records}")
        Shape.assertSameKeys(save.record, created.records[0], "modified record")
        XCTAssertNil(save.record["zoneID"])
        let del = s.ck("--zone", "PrimarySync", "record", "delete", "album")
        XCTAssertEqual(del.status, 0, del.stderr)
        Shape.assertSameKeys(del.record, forceDeleted.records[0], "records/modify tombstone")
        XCTAssertEqual(del.record["deleted"] as? Bool, true)
    }

    func testQueryPagesCarryAContinuationMarkerUntilTheLast() {
        let paged = WireFixture("records-query.response.private-continuation")
        let empty = WireFixture("records-query.response.public-empty")
        let s = CLISandbox()
        s.signIn()
        for i in 0..<3 { XCTAssertEqual(s.ck("record", "save", "--type", "Note", "--name", "n\(i)", "i=\(i)").status, 0) }
        XCTAssertEqual(s.ck("schema", "index", "add", "Note", "___recordID", "QUERYABLE").status, 0)
        let first = s.ck("record", "query", "--type", "Note", "--limit", "2")
        XCTAssertEqual(Shape.keys(first.object), Shape.keys(paged.object), "a page with more: {records, continuationMarker}")
        let marker = first.object["continuationMarker"] as? String ?? ""
        let last = s.ck("record", "query", "--type", "Note", "--limit", "2", "--continue", marker)
        XCTAssertEqual(Shape.keys(last.object), ["records"], "the last page: {records}")
        XCTAssertEqual((last.object["records"] as? [Any])?.count, 1)
        let none = s.ck("record", "query", "--type", "Note", "--filter", "i > 5")
        XCTAssertEqual(none.object as NSDictionary, empty.object as NSDictionary, "no match: exactly {\"records\": []}")
    }

    func testZoneChangesIsTheChangesZoneBody() {
        let recorded = WireFixture("changes-zone.response.photos-tombstone")
        let zone = (recorded.object["zones"] as? [[String: Any]])?.first ?? [:]
        let tombstone = (zone["records"] as? [[String: Any]])?.last ?? [:]
        let s = photosLikeZone()
        XCTAssertEqual(s.ck("--zone", "PrimarySync", "record", "save", "--type", "CPLAlbum", "--name", "ALBUM_RECORD_ID_999").status, 0)
        let token = s.ck("--zone", "PrimarySync", "zone", "changes", "--no-save").zoneChanges["syncToken"] as? String ?? ""
        XCTAssertEqual(s.ck("--zone", "PrimarySync", "record", "save", "--type", "CPLAsset", "--name", "ASSET_RECORD_ID_101", "isDeleted=0").status, 0)
        XCTAssertEqual(s.ck("--zone", "PrimarySync", "record", "delete", "ALBUM_RECORD_ID_999").status, 0)
        let r = s.ck("--zone", "PrimarySync", "zone", "changes", "--since", token)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(Shape.keys(r.object), Shape.keys(recorded.object), "changes/zone: {zones}")
        let mine = (r.object["zones"] as? [[String: Any]])?.first ?? [:]
        Shape.assertSameKeys(mine, zone, "zone entry")
        let records = mine["records"] as? [[String: Any]] ?? []
        let myTombstone = records.first { $0["deleted"] as? Bool == true }
        Shape.assertSameKeys(myTombstone, tombstone, "changes/zone tombstone")
        // The recorded live record is minimized by its publisher: ck's carries at least its keys.
        let live = (zone["records"] as? [[String: Any]])?.first ?? [:]
        let myLive = records.first { $0["deleted"] as? Bool == false } ?? [:]
        XCTAssertTrue(Shape.keys(live).isSubset(of: Shape.keys(myLive)), "\(Shape.keys(live)) ⊄ \(Shape.keys(myLive))")
    }

    func testSeveralZonesInOneZoneChangesCall() {
        let s = photosLikeZone()
        XCTAssertEqual(s.ck("zone", "create", "SharedSync").status, 0)
        XCTAssertEqual(s.ck("--zone", "SharedSync", "record", "save", "--type", "CPLAsset", "--name", "x").status, 0)
        let r = s.ck("--zone", "PrimarySync", "--zone", "SharedSync", "zone", "changes", "--from-start", "--no-save")
        XCTAssertEqual(r.status, 0, r.stderr)
        let zones = r.object["zones"] as? [[String: Any]] ?? []
        XCTAssertEqual(zones.map { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }, ["PrimarySync", "SharedSync"])
        XCTAssertEqual(zones.map { ($0["records"] as? [Any])?.count }, [2, 1])
        // Each zone continues from its own token; a zone that fails is an error entry, the others are fetched.
        let tokens = zones.map { $0["syncToken"] as? String ?? "" }
        XCTAssertEqual(s.ck("--zone", "SharedSync", "record", "save", "--type", "CPLAsset", "--name", "y").status, 0)
        let next = s.ck("--zone", "PrimarySync", "--zone", "SharedSync", "zone", "changes", "--since", tokens[0], "--since", tokens[1])
        XCTAssertEqual((next.object["zones"] as? [[String: Any]] ?? []).map { ($0["records"] as? [[String: Any]] ?? []).map { $0["recordName"] as? String } },
                       [[], ["y"]])
        let partial = s.run(["--zone", "PrimarySync", "--zone", "Nope", "zone", "changes", "--from-start", "--no-save"])
        XCTAssertEqual(partial.status, 9, partial.stderr)
        let entries = partial.object["zones"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.count, 2)
        XCTAssertEqual(entries.last?["serverErrorCode"] as? String, "ZONE_NOT_FOUND")
        XCTAssertEqual(((entries.last?["zoneID"] as? [String: Any])?["zoneName"]) as? String, "Nope")
        assertFailure(s.run(["--zone", "PrimarySync", "--zone", "SharedSync", "zone", "changes", "--since", tokens[0]]), exit: 2, contains: "one --since per --zone")
        assertFailure(s.run(["--zone", "PrimarySync", "--zone", "SharedSync", "record", "list"]), exit: 2, contains: "--zone")
        assertFailure(s.run(["--zone", "PrimarySync", "--zone", "PrimarySync", "zone", "changes"]), exit: 2, contains: "more than once")
    }

    func testDatabaseChangesListsDeletedZonesAsEntries() {
        let recorded = WireFixture("changes-database.response.photos")
        let deletedRecorded = WireFixture("zones-changes.response.private-deleted-zones")
        let s = photosLikeZone()
        XCTAssertEqual(s.ck("zone", "create", "CustomZone").status, 0)
        XCTAssertEqual(s.ck("zone", "delete", "CustomZone").status, 0)
        let r = s.ck("database", "changes", "--from-start", "--no-save")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(Shape.keys(r.object), Shape.keys(recorded.object), "changes/database: {zones, syncToken, moreComing}")
        let zones = r.object["zones"] as? [[String: Any]] ?? []
        let live = zones.first { $0["deleted"] as? Bool == false }
        let gone = zones.first { $0["deleted"] as? Bool == true }
        Shape.assertSameKeys(live, (recorded.object["zones"] as? [[String: Any]])?.first, "live zone entry")
        Shape.assertSameKeys(gone, (deletedRecorded.object["zones"] as? [[String: Any]])?.first, "deleted zone entry")
        XCTAssertEqual(((gone?["zoneID"] as? [String: Any])?["zoneName"]) as? String, "CustomZone")
        XCTAssertNil(r.object["deletedZones"])
    }

    func testZoneListIsShapedAsTheAPIsZonesList() {
        let recorded = WireFixture("zones-list.response.private-default-zone")
        let theirDefault = (recorded.object["zones"] as? [[String: Any]])?.first ?? [:]
        let s = photosLikeZone()
        let r = s.ck("zone", "list")
        XCTAssertEqual(Shape.keys(r.object), ["zones"])
        let zones = r.object["zones"] as? [[String: Any]] ?? []
        let mine = zones.first { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String == "_defaultZone" } ?? [:]
        Shape.assertSameKeys(mine, theirDefault, "default zone entry")
        for k in ["atomic", "isEligibleForZoneShare", "isEligibleForHierarchicalShare"] {
            XCTAssertEqual(mine[k] as? Bool, theirDefault[k] as? Bool, k)
        }
        Shape.assertSameKeys(mine["zoneID"], theirDefault["zoneID"], "zoneID")
        XCTAssertEqual((mine["zoneID"] as? [String: Any])?["zoneType"] as? String, "DEFAULT_ZONE")
        // A custom zone: atomic and shareable; with a change feed it carries its syncToken (Apple's zone dictionary).
        _ = s.ck("--zone", "PrimarySync", "zone", "changes", "--no-save")
        let custom = s.ck("zone", "list").object["zones"] as? [[String: Any]] ?? []
        let primary = custom.first { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String == "PrimarySync" } ?? [:]
        Shape.assertSameKeys(primary, theirDefault, optional: ["syncToken"], "custom zone entry")
        XCTAssertEqual(primary["atomic"] as? Bool, true)
        XCTAssertEqual(primary["isEligibleForZoneShare"] as? Bool, true)
        XCTAssertNotNil(primary["syncToken"] as? String)
    }

    func testWhoamiNamesTheUserAsUsersCurrentDoes() {
        let recorded = WireFixture("users-current.response.private")
        let theirs = recorded.object["userRecordName"] as? String ?? ""
        let s = CLISandbox()
        s.signIn()
        let mine = s.ck("whoami").object["userRecordName"] as? String ?? ""
        XCTAssertEqual(mine.count, theirs.count, "'_' and 32 hex digits, as recorded: \(mine) vs \(theirs)")
        XCTAssertTrue(mine.hasPrefix("_") && theirs.hasPrefix("_"))
    }

    // MARK: errors

    func testRequestLevelErrorsCarryARandomUUIDAndCloudKitsWording() throws {
        let atomic = WireFixture("error.response.modify-atomic-default-zone")
        let tag = WireFixture("error.response.modify-update-missing-recordchangetag")
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        let atomicBody = #"{"atomic": true, "operations": [{"operationType": "create", "record": {"recordType": "Feed", "fields": {"title": {"value": "x"}}}}]}"#
        var uuids: [String] = []
        for _ in 0..<2 {
            s.assertUnchanged("atomic in the default zone") {
                let r = s.run(["record", "modify", "--error-format", "json"], stdin: atomicBody)
                assertFailure(r, exit: 6)
                let env = (try? JSONSerialization.jsonObject(with: Data(r.stderr.utf8))) as? [String: Any] ?? [:]
                Shape.assertSameKeys(env, atomic.object, optional: ["ckErrorCode"], "request-level error")
                XCTAssertEqual(env["reason"] as? String, atomic.object["reason"] as? String)
                XCTAssertEqual(env["serverErrorCode"] as? String, "BAD_REQUEST")
                uuids.append(env["uuid"] as? String ?? "")
            }
        }
        let uuidShape = try NSRegularExpression(pattern: "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
        for u in uuids + [atomic.object["uuid"] as? String ?? ""] {
            XCTAssertEqual(uuidShape.numberOfMatches(in: u, range: NSRange(u.startIndex..., in: u)), 1, "a lower-case UUID like Apple's: \(u)")
        }
        XCTAssertNotEqual(uuids[0], uuids[1], "each error has its own uuid")

        // An update without its recordChangeTag: the whole request is refused, nothing is tried.
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "a", "n=1").status, 0)
        let body = #"{"operations": [{"operationType": "forceUpdate", "record": {"recordName": "a", "fields": {"n": {"value": 2}}}},"#
            + #"{"operationType": "update", "record": {"recordName": "a2", "fields": {"n": {"value": 3}}}}]}"#
        s.assertUnchanged("update without a tag") {
            let r = s.run(["--zone", "Z", "record", "modify", "--error-format", "json"], stdin: body)
            assertFailure(r, exit: 6)
            let env = (try? JSONSerialization.jsonObject(with: Data(r.stderr.utf8))) as? [String: Any] ?? [:]
            XCTAssertTrue((env["reason"] as? String ?? "").hasPrefix(tag.object["reason"] as? String ?? "?"), r.stderr)
        }
        for op in ["replace", "delete"] {
            s.assertUnchanged("\(op) without a tag") {
                let r = s.run(["--zone", "Z", "record", "modify"], stdin: #"{"operations": [{"operationType": "\#(op)", "record": {"recordName": "a"}}]}"#)
                assertFailure(r, exit: 6, contains: "missing required field 'recordChangeTag'")
            }
        }
    }
}
