import CKTestSupport
import Foundation
import XCTest

/// Real request bodies (Tests/Fixtures/wire: iCloud.com browser captures, icloudpd cassettes,
/// Apple's reference) fed to `record modify` and `record query`, and real response records fed
/// to `import`: each is accepted and answered as a real client expects.
final class WireRequestTests: XCTestCase {
    private func fields(_ record: [String: Any]) -> [String: [String: Any]] { record["fields"] as? [String: [String: Any]] ?? [:] }
    private func types(_ record: [String: Any]) -> [String: String] { fields(record).mapValues { $0["type"] as? String ?? "" } }

    /// A store where the Photos schema is known: development, with CPLAlbum's encrypted name
    /// and modification date typed by an earlier save (as the real zone's schema has them).
    private func photos() -> CLISandbox {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "PrimarySync").status, 0)
        let seed = s.run(["--zone", "PrimarySync", "record", "save", "--type", "CPLAlbum", "--name", "seed",
                          "albumNameEnc:ENCRYPTED_BYTES=U0VFRA==", "userModificationDate:TIMESTAMP=1775666000000", "isDeleted=0"])
        XCTAssertEqual(seed.status, 0, seed.stderr)
        return s
    }

    func testBrowserAlbumRequestsAreAcceptedWithTheirTypesFromTheSchema() {
        let s = photos()
        // Create: every value untyped; the schema types albumNameEnc as ENCRYPTED_BYTES.
        let create = WireFixture("records-modify.request.photos-album-create")
        let expected = WireFixture("records-modify.response.photos-album-create").records[0]
        let made = s.run(["record", "modify"], stdin: create.text)
        XCTAssertEqual(made.status, 0, made.stderr)
        let album = made.record
        for (k, t) in types(expected) { XCTAssertEqual(types(album)[k], t, "field \(k) typed as Apple's server typed it") }
        Shape.assertSameKeys(album, expected, "created album")
        XCTAssertEqual(fields(album)["albumNameEnc"]?["value"] as? String, "QUxCVU1fTkFNRV9FTkNfMDAx", "bytes kept as sent")
        let name = album["recordName"] as? String ?? ""
        XCTAssertEqual(name.count, 36, "a new record gets a UUID name: \(name)")

        // Rename: update with the album's tag; the untyped millisecond value becomes a TIMESTAMP.
        let rename = WireFixture("records-modify.request.photos-album-rename")
        let tag = album["recordChangeTag"] as? String ?? ""
        let renamed = s.run(["record", "modify"], stdin: rename.text(replacing: ["ALBUM_RECORD_ID_001": name, "RECORD_CHANGE_TAG_227": tag]))
        XCTAssertEqual(renamed.status, 0, renamed.stderr)
        XCTAssertEqual(types(renamed.record)["userModificationDate"], "TIMESTAMP")
        XCTAssertEqual(fields(renamed.record)["userModificationDate"]?["value"] as? Int, 1_775_666_024_305)
        XCTAssertEqual(types(renamed.record)["albumNameEnc"], "ENCRYPTED_BYTES")
        // The same request again: its tag is stale now → CONFLICT for that record, as on the server.
        let stale = s.run(["record", "modify"], stdin: rename.text(replacing: ["ALBUM_RECORD_ID_001": name, "RECORD_CHANGE_TAG_227": tag]))
        XCTAssertEqual(stale.status, 9)
        XCTAssertEqual(stale.record["serverErrorCode"] as? String, "CONFLICT")

        // Soft delete (isDeleted = 1 by update), add a photo to it, then remove it with forceDelete.
        let soft = WireFixture("records-modify.request.photos-album-delete-flag")
        let newTag = renamed.record["recordChangeTag"] as? String ?? ""
        let flagged = s.run(["record", "modify"], stdin: soft.text(replacing: ["ALBUM_RECORD_ID_001": name, "RECORD_CHANGE_TAG_289": newTag]))
        XCTAssertEqual(flagged.status, 0, flagged.stderr)
        XCTAssertEqual(fields(flagged.record)["isDeleted"]?["value"] as? Int, 1)
        let add = WireFixture("records-modify.request.photos-album-add-photo")
        let added = s.run(["record", "modify"], stdin: add.text)
        XCTAssertEqual(added.status, 0, added.stderr)
        Shape.assertSameKeys(added.record, WireFixture("records-modify.response.photos-album-add-photo").records.first, "added relation")
        let remove = WireFixture("records-modify.request.photos-album-remove-photo-forcedelete")
        let removed = s.run(["record", "modify"], stdin: remove.text)
        XCTAssertEqual(removed.status, 0, removed.stderr)
        // The recorded response is exactly this, plus the syncToken iCloud.com adds when asked (getCurrentSyncToken).
        XCTAssertEqual(removed.object["records"] as? NSArray, WireFixture("records-modify.response.photos-album-remove-photo-forcedelete").object["records"] as? NSArray,
                       "the forceDelete response is exactly the recorded one")
    }

    func testIcloudpdDeleteAnswersWithTheDesiredKeysOnly() {
        let s = photos()
        let request = WireFixture("records-modify.request.photos-icloudpd-delete")
        let expected = WireFixture("records-modify.response.photos-icloudpd-delete").records[0]
        let name = "A5A7C0F1-BE37-46D8-9A99-400AD6DC2351"
        let seeded = s.ck("--zone", "PrimarySync", "record", "save", "--type", "CPLAsset", "--name", name, "isDeleted=0", "isFavorite=1")
        let tag = seeded.record["recordChangeTag"] as? String ?? ""
        let r = s.run(["record", "modify"], stdin: request.text(replacing: ["1s2g": tag]))
        XCTAssertEqual(r.status, 0, r.stderr)
        Shape.assertSameKeys(r.record, expected, optional: ["expirationTime"], "icloudpd's delete response")
        XCTAssertEqual(Set(fields(r.record).keys), Set(fields(expected).keys), "desiredKeys: [isDeleted]")
        XCTAssertEqual(fields(r.record)["isDeleted"]?["value"] as? Int, 1)
        XCTAssertEqual(fields(s.ck("--zone", "PrimarySync", "record", "get", name).record)["isFavorite"]?["value"] as? Int, 1, "update merges")
    }

    func testApplesReferenceRequests() {
        let s = CLISandbox()
        s.signIn()
        // One operation from Apple's ModifyRecords page, sent as a request (default zone, no atomic).
        let op = WireFixture("records-modify.request.apple-doc-create-operation")
        let r = s.run(["record", "modify"], stdin: "{\"operations\": [\(op.text)]}")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.record["recordName"] as? String, "Mei Chen")
        XCTAssertEqual(types(r.record), ["firstName": "STRING", "lastName": "STRING"])

        // An update from the same page: untyped integers into an existing record (tag swapped for the live one).
        let made = s.ck("record", "save", "--type", "Poster", "--name", "101", "width:DOUBLE=10", "height:DOUBLE=20")
        let update = WireFixture("records-modify.request.apple-doc-update-operation")
        let body = "{\"operations\": [\(update.text(replacing: ["e": made.record["recordChangeTag"] as? String ?? ""]))]}"
        let u = s.run(["record", "modify"], stdin: body)
        XCTAssertEqual(u.status, 0, u.stderr)
        XCTAssertEqual(types(u.record), ["width": "DOUBLE", "height": "DOUBLE"], "untyped integers take the fields' DOUBLE type")
        XCTAssertEqual(fields(u.record)["width"]?["value"] as? Double, 18)

        // createShortGUID: the response carries a shortGUID, kept by later saves.
        XCTAssertEqual(s.ck("zone", "create", "myCustomZone").status, 0)
        let sg = s.run(["record", "modify"], stdin: WireFixture("records-modify.request.apple-doc-create-shortguid").text)
        XCTAssertEqual(sg.status, 0, sg.stderr)
        let guid = sg.record["shortGUID"] as? String ?? ""
        XCTAssertEqual(guid.count, 25, sg.stdout)
        let later = s.ck("--zone", "myCustomZone", "record", "save", "--name", "RecordA", "--force", "n=1")
        XCTAssertEqual(later.record["shortGUID"] as? String, guid)
        XCTAssertEqual(s.ck("--zone", "myCustomZone", "record", "get", "RecordA").record["shortGUID"] as? String, guid)
    }

    func testUntypedValuesThatDoNotFitTheFieldAreRefusedWithCloudKitsReason() {
        let s = photos()
        let bad = #"{"operations": [{"operationType": "forceUpdate", "record": {"recordName": "seed", "fields": {"userModificationDate": {"value": "yesterday"}}}}]}"#
        s.assertUnchanged("a string into a TIMESTAMP field") {
            let r = s.run(["--zone", "PrimarySync", "record", "modify"], stdin: bad)
            XCTAssertEqual(r.status, 9)
            XCTAssertEqual(r.record["serverErrorCode"] as? String, "BAD_REQUEST")
            XCTAssertTrue((r.record["reason"] as? String ?? "").hasPrefix("Invalid value, expected type TIMESTAMP"), r.stdout)
        }
        // The same value with its type: the schema's type mismatch, as before.
        assertFailure(s.run(["--zone", "PrimarySync", "record", "save", "--name", "seed", "--force", "userModificationDate:STRING=yesterday"]), exit: 6, contains: "type mismatch")
        // An untyped value into a field the record already has, without schema help (production-like): the record's type.
        let base64 = s.run(["--zone", "PrimarySync", "record", "save", "--stdin", "--name", "seed", "--force"],
                           stdin: #"{"recordType": "CPLAlbum", "fields": {"albumNameEnc": {"value": "TkVX"}}}"#)
        XCTAssertEqual(base64.status, 0, base64.stderr)
        XCTAssertEqual(types(base64.record)["albumNameEnc"], "ENCRYPTED_BYTES")
    }

    func testRealQueryRequests() {
        let s = photos()
        XCTAssertEqual(s.ck("--zone", "PrimarySync", "record", "save", "--type", "CheckIndexingState", "--name", "state", "state=FINISHED", "progress=100").status, 0)
        // The recorded request has no filter: Photos' schema has the index it needs.
        XCTAssertEqual(s.ck("schema", "index", "add", "CheckIndexingState", "___recordID", "QUERYABLE").status, 0)
        let state = s.run(["record", "query"], stdin: WireFixture("records-query.request.photos-checkindexingstate").text)
        XCTAssertEqual(state.status, 0, state.stderr)
        Shape.assertSameKeys(state.record, WireFixture("records-query.response.photos-checkindexingstate-2023").records.first, "CheckIndexingState")

        // icloudpd's asset listing: typed filters, desiredKeys, resultsLimit.
        for (i, dir) in ["ASCENDING", "DESCENDING"].enumerated() {
            XCTAssertEqual(s.ck("--zone", "PrimarySync", "record", "save", "--type", "CPLAssetAndMasterByAddedDate", "--name", "page\(i)",
                                "startRank=0", "direction=\(dir)", "resJPEGThumbWidth=480", "secret=kept").status, 0)
        }
        let request = WireFixture("records-query.request.photos-assets")
        var body = request.object
        body["zoneID"] = ["zoneName": "PrimarySync"]
        let text = String(decoding: try! JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        let r = s.run(["record", "query"], stdin: text)
        XCTAssertEqual(r.status, 0, r.stderr)
        let records = r.object["records"] as? [[String: Any]] ?? []
        XCTAssertEqual(records.map { $0["recordName"] as? String }, ["page0"], "startRank == 0 and direction == ASCENDING")
        XCTAssertEqual(Set(fields(records.first ?? [:]).keys), ["resJPEGThumbWidth"], "only desiredKeys come back")
    }

    // MARK: import

    /// Records copied from recorded responses, one per line, as `ck import` reads them.
    private func lines(_ fixtures: [String]) -> String {
        fixtures.flatMap { WireFixture($0).records }.map {
            String(decoding: try! JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self)
        }.joined(separator: "\n") + "\n"
    }

    func testImportLoadsRecordsCopiedFromRealResponses() {
        let s = CLISandbox()
        s.signIn()
        let sources = ["records-query.response.photos-assets", "records-query.response.photos-recently-deleted-expirationtime"]
        let r = s.run(["import", "--format", "ndjson"], stdin: lines(sources))
        XCTAssertEqual(r.status, 0, r.stderr)
        let recorded = sources.flatMap { WireFixture($0).records }
        XCTAssertEqual(r.stdout.split(separator: "\n").count, recorded.count)
        for theirs in recorded {
            let name = theirs["recordName"] as! String
            let mine = s.ck("--zone", "PrimarySync", "record", "get", "--name", name)
            XCTAssertEqual(mine.status, 0, "\(name): \(mine.stderr)")
            XCTAssertEqual(mine.record["recordType"] as? String, theirs["recordType"] as? String)
            // Every field as the server sent it: same types, same values (remote assets keep their
            // keys); a reference now names the importer's zone, so its owner is the importer.
            func comparable(_ f: [String: [String: Any]]) -> NSDictionary {
                var out = f
                for (k, v) in f where v["type"] as? String == "REFERENCE" {
                    var ref = v["value"] as? [String: Any] ?? [:]
                    var zone = ref["zoneID"] as? [String: Any] ?? [:]
                    zone["ownerRecordName"] = nil
                    ref["zoneID"] = zone
                    out[k] = ["type": "REFERENCE", "value": ref]
                }
                return out as NSDictionary
            }
            XCTAssertEqual(comparable(fields(mine.record)), comparable(fields(theirs)), name)
            if let ref = fields(mine.record)["masterRef"]?["value"] as? [String: Any] {
                XCTAssertEqual((ref["zoneID"] as? [String: Any])?["ownerRecordName"] as? String,
                               (mine.record["zoneID"] as? [String: Any])?["ownerRecordName"] as? String)
            }
        }
        // A remote asset's bytes are not here; asking for them says where they are.
        let asset = s.run(["--zone", "PrimarySync", "record", "get", "--name", "ATHLCfCNzYgUm2ZF/nHvUbleC3ld", "--asset", "resOriginalRes"])
        assertFailure(asset, exit: 3, contains: "cvws.icloud-content.com")

        // Public records (zoneID _defaultZone) and a records/lookup record without a zoneID.
        let pub = s.run(["--db", "public", "import"], stdin: lines(["records-query.response.public-reference", "records-lookup.response.ticket-delivery"]))
        XCTAssertEqual(pub.status, 0, pub.stderr)
        let ticket = s.ck("--db", "public", "record", "get", "2/2/4dca04a3465b95866423323d7f3e1e31ad3ac0ef")
        XCTAssertEqual(types(ticket.record), ["signedTicket": "BYTES"])
        XCTAssertEqual(fields(ticket.record)["signedTicket"]?["value"] as? String, "czhjaAEAAADwBQAA/wAAADCCBewwggL+MIICpKADAgECAggcrXLgBzKYBDAKBggq")
    }

    func testRealRecordsFeedBackThroughSaveAndModify() {
        let s = CLISandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "PrimarySync").status, 0)
        let expiring = WireFixture("records-query.response.photos-recently-deleted-expirationtime").records[0]
        let text = String(decoding: try! JSONSerialization.data(withJSONObject: expiring), as: UTF8.self)
        // As a record (its recordChangeTag makes it an update of a record that is not here: NOT_FOUND, not a key error).
        let save = s.run(["record", "save", "--stdin"], stdin: text)
        assertFailure(save, exit: 3, contains: "recordChangeTag specified, but record 'AeYfMtlOMb3dM9bETic9fXkMpjMV' not found in zone PrimarySync of the private database")
        // As a forceReplace operation: accepted, server-only keys ignored. Its zoneID names
        // PrimarySync, so the request must be for that zone (never written elsewhere).
        let op = "{\"operations\": [{\"operationType\": \"forceReplace\", \"record\": \(text)}]}"
        assertFailure(s.run(["record", "modify"], stdin: op), exit: 6, contains: "but the request is for zone '_defaultZone'")
        let m = s.run(["--zone", "PrimarySync", "record", "modify"], stdin: op)
        XCTAssertEqual(m.status, 0, m.stderr)
        XCTAssertEqual(m.record["recordName"] as? String, expiring["recordName"] as? String)
        // Unknown keys that no server sends are still refused.
        assertFailure(s.run(["--zone", "PrimarySync", "record", "save", "--stdin"], stdin: #"{"recordName": "x", "recordType": "T", "surprise": 1}"#),
                      exit: 6, contains: "unknown record key 'surprise'")
    }

    func testExportImportRoundTripsAssetsIntoAFreshDataDirectory() throws {
        let a = CLISandbox()
        a.signIn()
        let bytes = Data((0..<4096).map { UInt8(65 + $0 % 26) })
        let file = a.root.appendingPathComponent("photo.heic")
        try bytes.write(to: file)
        XCTAssertEqual(a.ck("zone", "create", "Photos").status, 0)
        XCTAssertEqual(a.ck("--zone", "Photos", "record", "save", "--type", "Photo", "--name", "p1", "image:ASSET=@" + file.path,
                            "thumbs:ASSET_LIST=@" + file.path).status, 0)
        let exported = a.ck("export")
        XCTAssertEqual(exported.status, 0, exported.stderr)

        let b = CLISandbox()
        b.signIn("bob@example.com")
        let imported = b.run(["import"], stdin: exported.stdout)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let got = b.run(["--zone", "Photos", "record", "get", "p1", "--asset", "image"])
        XCTAssertEqual(got.status, 0, got.stderr)
        XCTAssertEqual(Data(got.stdout.utf8), bytes, "the asset's bytes came along")
        let url = ((((b.ck("--zone", "Photos", "record", "get", "p1").record["fields"] as? [String: Any])?["image"] as? [String: Any])?["value"]
            as? [String: Any])?["downloadURL"] as? String) ?? ""
        XCTAssertTrue(url.contains(b.dataDir.lastPathComponent), "now served from the new data directory: \(url)")

        // A downloadURL whose bytes do not match the checksum brings nothing: that record
        // fails, the others load, and no asset is stored.
        let image = (((exported.stdout.split(separator: "\n").first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [String: Any])?["fields"]
            as? [String: Any])?["image"] as? [String: Any])?["value"] as? [String: Any] ?? [:]
        let forged = a.root.appendingPathComponent("forged.bin")
        try Data(repeating: 0x41, count: bytes.count).write(to: forged)
        let record: [String: Any] = ["recordName": "p2", "recordType": "Photo", "zoneID": ["zoneName": "Photos"],
                                     "fields": ["image": ["type": "ASSETID", "value": ["fileChecksum": image["fileChecksum"] ?? "", "size": bytes.count,
                                                                                     "downloadURL": forged.absoluteString]]]]
        let line = String(decoding: try JSONSerialization.data(withJSONObject: record), as: UTF8.self)
        let c = CLISandbox()
        c.signIn()
        let bad = c.run(["import"], stdin: line + "\n" + #"{"recordName": "p3", "recordType": "Photo", "zoneID": {"zoneName": "Photos"}, "fields": {}}"# + "\n")
        XCTAssertEqual(bad.status, 9, bad.stderr)
        XCTAssertTrue(bad.stdout.contains("no asset with checksum"), bad.stdout)
        XCTAssertEqual(c.run(["--zone", "Photos", "record", "get", "p3"]).status, 0)
        let stored = (FileManager.default.enumerator(atPath: c.dataDir.path)?.compactMap { $0 as? String } ?? []).filter { path in
            var isDir: ObjCBool = false
            return path.split(separator: "/").contains("assets")
                && FileManager.default.fileExists(atPath: c.dataDir.appendingPathComponent(path).path, isDirectory: &isDir) && !isDir.boolValue
        }
        XCTAssertEqual(stored, [], "no asset stored from a forged downloadURL")

        // A downloadURL naming a device, a FIFO or a directory is never read (no hang, no huge read).
        let fifo = a.root.appendingPathComponent("fifo").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        for target in ["/dev/zero", "/dev/stdin", fifo, a.root.path] {
            var hostile = record
            hostile["recordName"] = "h"
            hostile["fields"] = ["image": ["type": "ASSETID", "value": ["fileChecksum": image["fileChecksum"] ?? "", "size": bytes.count,
                                                                        "downloadURL": URL(fileURLWithPath: target).absoluteString]]]
            let text = String(decoding: try JSONSerialization.data(withJSONObject: hostile), as: UTF8.self)
            c.assertUnchanged("downloadURL \(target)") {
                let r = c.run(["import"], stdin: text + "\n")
                XCTAssertEqual(r.status, 9, "\(target): \(r.stderr)")
                XCTAssertTrue(r.stdout.contains("could not be read"), r.stdout)
            }
        }
        XCTAssertEqual(c.run(["--zone", "Photos", "record", "get", "p2"]).status, 3)
    }
}
