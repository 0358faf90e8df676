import CKModel
import CKTestSupport
import XCTest
@testable import CKCore
@testable import CKStore

/// ck's own maintenance entries of the API, in-process: fsck, status, making a data directory
/// and choosing its default container.
final class APIMaintenanceTests: XCTestCase {
    static let container = "iCloud.com.example.test"

    func code(_ e: Error) -> ServerErrorCode? { (e as? CloudKitError)?.code }

    // MARK: fsck

    func testFsckReportsAndRepairs() throws {
        let t = TempStore()
        let a = api(t.root)
        try t.client().createZone("Z")
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "r1"), op(.create, "r2")], zoneName: "Z"), as: caller())
        let clean = try a.fsck(FsckRequest())
        XCTAssertFalse(clean.problemsRemain)
        XCTAssertEqual(clean.listKey, "problems")
        XCTAssertEqual(clean.jsonValue["clean"], true)
        XCTAssertEqual(clean.jsonValue["problems"], [])
        XCTAssertEqual(clean.jsonValue["checked"]?["records"], 2)

        try FileSystem.remove(try t.zoneStore("Z").recordPath("r1"))
        let before = t.snapshot()
        let dry = try a.fsck(FsckRequest(repair: false))
        XCTAssertTrue(dry.problemsRemain)
        XCTAssertEqual(dry.jsonValue["clean"], false)
        XCTAssertEqual(dry.items.map { $0.jsonValue["repaired"] }, [false])
        XCTAssertEqual(t.snapshot(), before, "a dry run changes nothing")
        let fixed = try a.fsck(FsckRequest())
        XCTAssertFalse(fixed.problemsRemain, "every problem repaired")
        XCTAssertEqual(fixed.jsonValue["clean"], false, "clean says whether anything was found")
        XCTAssertEqual(fixed.items.map { $0.jsonValue["repaired"] }, [true])
        XCTAssertEqual(try a.fsck(FsckRequest()).jsonValue["clean"], true, "a second run is clean")
        XCTAssertEqual(try a.lookupRecords(LookupRecordsRequest(recordNames: ["r1"], zoneName: "Z"), as: caller()).results[0].record?.recordName, "r1")
    }

    func testFsckOfNoDataDirectoryCreatesNothing() throws {
        let root = NSTemporaryDirectory() + "ck-core-" + UUID().uuidString
        let r = try CloudKitAPI(dataDirectory: root).fsck(FsckRequest())
        XCTAssertFalse(r.problemsRemain)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root))
    }

    // MARK: status

    func testStatusComposesAccountZonesBookmarksAndFaults() throws {
        let t = TempStore()
        let a = api(t.root)
        try t.client().createZone("Lists")
        _ = try a.modifyRecords(ModifyRequest(operations: [op(.create, "r1")], zoneName: "Lists"), as: caller())
        _ = try a.addFault(AddFaultRequest(op: .endpoint(.zonesList), error: .throttled))
        let alice = try XCTUnwrap(t.store.accounts.user(appleID: "alice@example.com"))
        let s = try a.status(as: caller())
        XCTAssertEqual(s.listKey, "zones")
        let doc = s.jsonValue
        XCTAssertEqual(doc["dataDirectory"], .string(t.root))
        XCTAssertEqual(doc["containerIdentifier"], .string(Self.container))
        XCTAssertEqual(doc["environment"], "development")
        XCTAssertEqual(doc["database"], "private")
        XCTAssertEqual(doc["device"], "default")
        XCTAssertEqual(doc["account"], ["status": "available", "userRecordName": .string(alice.userRecordName), "appleID": "alice@example.com"])
        XCTAssertEqual(doc["faults"], ["f1"], "the armed faults by ID; and they do not fail the status")
        let zones = doc["zones"]?.arrayValue ?? []
        XCTAssertEqual(zones.map { $0["zoneName"] }, ["_defaultZone", "Lists"])
        XCTAssertNil(zones[0]["bookmark"], "the default zone has no change feed")
        XCTAssertEqual(zones[1]["bookmark"], "none")
        XCTAssertEqual(zones[1]["behind"], 1)
        XCTAssertEqual(doc["databaseChanges"]?["bookmark"], "none")
        // The public database has no feeds.
        let pub = try a.status(as: caller(.public)).jsonValue
        XCTAssertEqual(pub["zones"], [["zoneName": "_defaultZone"]])
        XCTAssertNil(pub["databaseChanges"])
    }

    /// An unreadable database is part of the status, not its failure.
    func testStatusNeverFailsForAnUnreadableDatabase() throws {
        let t = TempStore()
        let a = api(t.root)
        try t.store.accounts.signOut()
        let before = t.snapshot()
        let s = try a.status(as: caller())
        XCTAssertNil(s.listKey, "no zones to list")
        XCTAssertEqual(s.jsonValue["account"], ["status": "noAccount"])
        XCTAssertNil(s.jsonValue["zones"])
        XCTAssertTrue(s.jsonValue["zonesUnavailable"]?.stringValue?.isEmpty == false)
        XCTAssertNil(s.jsonValue["faults"])
        XCTAssertEqual(try a.status(as: caller(.public, .nobody)).jsonValue["zones"], [["zoneName": "_defaultZone"]])
        XCTAssertEqual(t.snapshot(), before, "the status writes nothing")
        try t.store.accounts.setStatus(.restricted)
        XCTAssertNotNil(try a.status(as: caller()).jsonValue["zonesUnavailable"])
        // But a bad request is still refused: a container ID not iCloud.…, a user never signed in here.
        XCTAssertThrowsError(try a.status(as: caller(container: "com.example.app"))) { XCTAssertEqual(self.code($0), .badRequest) }
        XCTAssertThrowsError(try a.status(as: caller(.private, .appleID("nobody@example.com")))) { XCTAssertEqual(self.code($0), .authenticationRequired) }
        // A damaged faults file is left to the requests it fails.
        try FileSystem.writeAtomically(t.root + "/faults.json", Array("{oops".utf8))
        XCTAssertNoThrow(try a.status(as: caller(.public)))
    }

    // MARK: the data directory and its container

    func testInitializeMakesTheDirectoryOnce() throws {
        let base = NSTemporaryDirectory() + "ck-core-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false)
        let dir = base + "/.ck"
        XCTAssertEqual(try CloudKitAPI.initialize(dataDirectory: dir, discovered: true).jsonValue, ["dataDirectory": .string(DataPaths.resolve(dir)), "created": true])
        XCTAssertEqual(try CloudKitAPI.initialize(dataDirectory: dir, discovered: true).jsonValue["created"], false)
        var st = stat()
        XCTAssertEqual(lstat(base + "/.ck", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)

        // In the way: a file; a link where a discovered one is looked for.
        let file = base + "/file"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data()))
        XCTAssertThrowsError(try CloudKitAPI.initialize(dataDirectory: file)) { XCTAssertEqual($0 as? DataDirectoryFailure, .notADirectory(file)) }
        let link = base + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: base + "/.ck")
        XCTAssertThrowsError(try CloudKitAPI.initialize(dataDirectory: link, discovered: true)) { XCTAssertEqual(self.code($0), .accessDenied) }
        let followed = try CloudKitAPI.initialize(dataDirectory: link, discovered: false).jsonValue
        XCTAssertEqual(followed, ["dataDirectory": .string(DataPaths.resolve(dir)), "created": false], "a link given on purpose is followed")
        XCTAssertNoThrow(try CloudKitAPI.checkDataDirectory(base + "/absent", discovered: true), "what does not exist yet passes")
        XCTAssertFalse(FileManager.default.fileExists(atPath: base + "/absent"))
        // Others may not read it: it is made private.
        XCTAssertEqual(chmod(base + "/.ck", 0o755), 0)
        try CloudKitAPI.checkDataDirectory(base + "/.ck", discovered: true)
        XCTAssertEqual(lstat(base + "/.ck", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)
    }

    func testTheDefaultContainer() throws {
        let t = TempStore()
        let a = api(t.root)
        XCTAssertNil(try a.defaultContainer())
        XCTAssertEqual(try a.setDefaultContainer("iCloud.com.example.notes").jsonValue, ["containerIdentifier": "iCloud.com.example.notes"])
        XCTAssertEqual(try a.defaultContainer(), "iCloud.com.example.notes")
        let before = t.snapshot()
        for bad in ["com.example.notes", "iCloud.", "iCloud.a/b", ""] {
            XCTAssertThrowsError(try a.setDefaultContainer(bad), bad) { XCTAssertEqual(self.code($0), .badRequest, bad) }
        }
        XCTAssertEqual(t.snapshot(), before)
        XCTAssertEqual(try a.defaultContainer(), "iCloud.com.example.notes")
        XCTAssertEqual(try a.showContainer(as: caller(.shared)).jsonValue,
                       ["containerIdentifier": .string(Self.container), "environment": "development", "database": "shared", "dataDirectory": .string(t.root)])
        XCTAssertThrowsError(try a.showContainer(as: caller(container: "nope"))) { XCTAssertEqual(self.code($0), .badRequest) }
    }
}
