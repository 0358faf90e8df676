import CKTestSupport
import Foundation
import XCTest

/// Bookmarks (each device's saved change tokens) live beside what they point into:
/// `zones/<zone>/tokens/<device>.json` and `<database>/tokens/<device>.json`; a data directory
/// of the earlier layout (`devices/<device>/bookmarks/…`) is moved on first use.
final class BookmarkMigrationTests: XCTestCase {
    func setUpZone(_ s: CLISandbox) -> (db: String, owner: String) {
        s.signIn()
        XCTAssertEqual(s.run(["zone", "create", "Lists", "Gone"]).status, 0)
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "save", "--type", "T", "--name", "a", "n=1"]).status, 0)
        let owner = s.run(["whoami"]).object["userRecordName"] as! String
        return (s.dataDir.path + "/containers/iCloud.com.example.app/development/private/" + owner, owner)
    }

    func testBookmarksLiveBesideTheirZoneAndGoWithIt() {
        let s = CLISandbox()
        let (db, _) = setUpZone(s)
        let fm = FileManager.default
        XCTAssertEqual(s.run(["--zone", "Lists", "zone", "changes"]).status, 0)
        XCTAssertEqual(s.run(["--device", "phone", "--zone", "Gone", "zone", "changes"]).status, 0)
        XCTAssertEqual(s.run(["database", "changes"]).status, 0)
        XCTAssertTrue(fm.fileExists(atPath: db + "/zones/Lists/tokens/default.json"))
        XCTAssertTrue(fm.fileExists(atPath: db + "/zones/Gone/tokens/phone.json"))
        XCTAssertTrue(fm.fileExists(atPath: db + "/tokens/default.json"))
        XCTAssertFalse(fm.fileExists(atPath: s.dataDir.path + "/devices"), "no separate device tree")
        // Two devices keep their own place.
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "save", "--type", "T", "--name", "b", "n=2"]).status, 0)
        XCTAssertEqual((s.run(["--zone", "Lists", "zone", "changes"]).zoneChanges["records"] as? [Any])?.count, 1)
        XCTAssertEqual((s.run(["--device", "phone", "--zone", "Lists", "zone", "changes"]).zoneChanges["records"] as? [Any])?.count, 2)
        // Deleting a zone takes its bookmarks; a zone made again starts from nothing.
        XCTAssertEqual(s.run(["zone", "delete", "Gone"]).status, 0)
        XCTAssertFalse(fm.fileExists(atPath: db + "/zones/Gone"))
        XCTAssertEqual(s.run(["zone", "create", "Gone"]).status, 0)
        XCTAssertEqual(s.run(["--device", "phone", "--zone", "Gone", "zone", "changes"]).status, 0, "no stale bookmark to expire")
    }

    func testAnEarlierDataDirectoryIsMigratedOnFirstUse() throws {
        let s = CLISandbox()
        let (db, owner) = setUpZone(s)
        let fm = FileManager.default
        // Fetch, then put the bookmarks where the earlier layout kept them.
        XCTAssertEqual(s.run(["--zone", "Lists", "zone", "changes"]).status, 0)
        XCTAssertEqual(s.run(["--zone", "Gone", "zone", "changes"]).status, 0)
        XCTAssertEqual(s.run(["database", "changes"]).status, 0)
        let legacy = s.dataDir.path + "/devices/default/bookmarks/iCloud.com.example.app/development/private/" + owner
        try fm.createDirectory(atPath: legacy + "/zones", withIntermediateDirectories: true)
        try fm.moveItem(atPath: db + "/zones/Lists/tokens/default.json", toPath: legacy + "/zones/Lists.json")
        try fm.moveItem(atPath: db + "/zones/Gone/tokens/default.json", toPath: legacy + "/zones/Gone.json")
        try fm.moveItem(atPath: db + "/tokens/default.json", toPath: legacy + "/database.json")
        try fm.removeItem(atPath: db + "/zones/Lists/tokens")
        try fm.removeItem(atPath: db + "/tokens")
        // The zone Gone is deleted while its bookmark is in the old place.
        try fm.removeItem(atPath: db + "/zones/Gone/tokens")
        XCTAssertEqual(s.run(["zone", "delete", "Gone"]).status, 0)
        XCTAssertEqual(s.run(["--zone", "Lists", "record", "save", "--type", "T", "--name", "b", "n=2"]).status, 0)

        // First use: the bookmark continues where it was (only b is new).
        let r = s.run(["--zone", "Lists", "zone", "changes"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual((r.zoneChanges["records"] as? [[String: Any]])?.map { $0["recordName"] as? String }, ["b"])
        XCTAssertFalse(fm.fileExists(atPath: s.dataDir.path + "/devices"), "the old tree is gone")
        XCTAssertTrue(fm.fileExists(atPath: db + "/zones/Lists/tokens/default.json"))
        XCTAssertTrue(fm.fileExists(atPath: db + "/tokens/default.json"), "the database bookmark moved too")
        XCTAssertFalse(fm.fileExists(atPath: db + "/zones/Gone"), "a deleted zone's bookmark is dropped, not resurrected")
        let st = s.run(["status"])
        XCTAssertEqual(st.status, 0, st.stderr)
        XCTAssertTrue(st.stdout.contains("behind"), st.stdout)
        XCTAssertEqual(s.run(["fsck"]).object["clean"] as? Bool, true)
    }
}
