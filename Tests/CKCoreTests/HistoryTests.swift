import XCTest
@testable import CKCore

final class HistoryTests: XCTestCase {
    func testEveryWriteAppendsOneGaplessEntry() throws {
        let t = TempStore()
        let db = try t.db()
        _ = try db.createZone("Z")
        _ = try db.modify(zone: "Z", operations: [op(.create, "a"), op(.create, "b")])
        _ = try db.modify(zone: "Z", operations: [op(.forceDelete, "a")])
        let z = try db.zone("Z")
        XCTAssertEqual(try z.history.head(), 3)
        let entries = try z.history.entries(after: 0)
        XCTAssertEqual(entries.map { $0["seq"] }, [1, 2, 3])
        XCTAssertEqual(entries.map { $0["op"] }, ["save", "save", "delete"])
        XCTAssertEqual(try z.history.entries(after: 2).map { $0["recordName"] }, ["a"])
        XCTAssertEqual(try z.history.entries(after: 0, limit: 1).count, 1)
    }

    func testFilesArePrivate() throws {
        let t = TempStore()
        _ = try t.db().modify(zone: "_defaultZone", operations: [op(.create, "a")])
        let fm = FileManager.default
        let e = fm.enumerator(atPath: t.root)!
        while let rel = e.nextObject() as? String {
            let attrs = try fm.attributesOfItem(atPath: t.root + "/" + rel)
            let mode = (attrs[.posixPermissions] as! Int) & 0o777
            let isDir = (attrs[.type] as? FileAttributeType) == .typeDirectory
            XCTAssertEqual(mode, isDir ? 0o700 : 0o600, rel)
        }
    }
}
