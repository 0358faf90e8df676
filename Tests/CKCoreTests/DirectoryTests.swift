import Foundation
import XCTest
@testable import CKCore

/// `Directory.openBeneath`: a record file opened in one call, never through a link.
final class DirectoryTests: XCTestCase {
    private func kind(_ r: Directory.BeneathOpen) -> String {
        switch r {
        case .opened(let f, _): close(f); return "opened"
        case .absent: return "absent"
        case .unsupported: return "unsupported"
        }
    }

    func testOpensAPlainFileBeneathAndNothingThroughALink() throws {
        let root = NSTemporaryDirectory() + "ck-dir-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/records/ab", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: root + "/elsewhere", withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: root + "/records/ab/x.json"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: root + "/elsewhere/y.json"))
        let d = try XCTUnwrap(try Directory.open(root + "/records"))
        guard kind(d.openBeneath("ab/x.json")) == "opened" else { throw XCTSkip("no openat2 here: each level is opened in turn") }
        XCTAssertEqual(kind(d.openBeneath("ab/none.json")), "absent")
        XCTAssertEqual(kind(d.openBeneath("cd/x.json")), "absent", "a shard not made yet")
        // Links at either level, a directory and a FIFO where the file should be: left to the
        // level-by-level open, which reports them.
        try fm.createSymbolicLink(atPath: root + "/records/cd", withDestinationPath: root + "/elsewhere")
        XCTAssertEqual(kind(d.openBeneath("cd/y.json")), "unsupported")
        try fm.createSymbolicLink(atPath: root + "/records/ab/l.json", withDestinationPath: root + "/elsewhere/y.json")
        XCTAssertEqual(kind(d.openBeneath("ab/l.json")), "unsupported")
        XCTAssertEqual(kind(d.openBeneath("ab")), "unsupported")
        XCTAssertEqual(mkfifo(root + "/records/ab/f.json", 0o600), 0)
        XCTAssertEqual(kind(d.openBeneath("ab/f.json")), "unsupported")
        XCTAssertEqual(kind(d.openBeneath("../elsewhere/y.json")), "unsupported", "nothing above the directory")
    }
}
