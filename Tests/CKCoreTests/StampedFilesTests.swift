import XCTest
@testable import CKCore

/// What a long-lived process keeps of small files is never staler than the files: a file
/// replaced (as every writer replaces them, by rename), removed, or swapped for a link is read
/// afresh.
final class StampedFilesTests: XCTestCase {
    func testAReplacedRemovedOrLinkedFileIsReadAfresh() throws {
        let dir = NSTemporaryDirectory() + "ck-stamped-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/a.json"
        let files = StampedFiles()
        XCTAssertNil(try files.readJSON(path), "absent")
        try FileSystem.writeJSON(path, ["v": 1])
        XCTAssertEqual(try files.readJSON(path), ["v": 1])
        // Same size, written within the same moment: a new inode all the same.
        try FileSystem.writeJSON(path, ["v": 2])
        XCTAssertEqual(try files.readJSON(path), ["v": 2])
        // A listing follows entries added.
        XCTAssertEqual(try files.list(dir), ["a.json"])
        try FileSystem.writeJSON(dir + "/b.json", ["v": 3])
        XCTAssertEqual(try files.list(dir), ["a.json", "b.json"])
        // A link put in its place is refused by the careful read, not served from memory.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: dir + "/b.json")
        XCTAssertThrowsError(try files.readJSON(path))
        try FileManager.default.removeItem(atPath: path)
        XCTAssertNil(try files.readJSON(path), "removed")
        // A parsed value is made once per version of the file.
        var parses = 0
        try FileSystem.writeJSON(path, ["v": 4])
        for _ in 0..<3 { _ = try files.value(path) { parses += 1; return parses } }
        XCTAssertEqual(parses, 1)
        try FileSystem.writeJSON(path, ["v": 5])
        XCTAssertEqual(try files.value(path) { parses += 1; return parses }, 2)
    }

    /// Only small record files are kept.
    func testOnlySmallRecordFilesAreKept() throws {
        let dir = NSTemporaryDirectory() + "ck-stamped-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = StampedFiles()
        try FileSystem.writeAtomically(dir + "/small.json", Array(repeating: 0x20, count: 100))
        try FileSystem.writeAtomically(dir + "/big.json", Array(repeating: 0x20, count: Int(StampedFiles.smallFile) + 1))
        var reads = 0
        for _ in 0..<2 { _ = try files.record(dir + "/small.json") { reads += 1; return nil } }
        XCTAssertEqual(reads, 1)
        XCTAssertNil(try files.record(dir + "/big.json") { reads += 1; return nil }, "not kept: the caller reads it")
        XCTAssertNil(try files.record(dir + "/absent.json") { reads += 1; return nil })
        XCTAssertEqual(reads, 1)
    }
}
