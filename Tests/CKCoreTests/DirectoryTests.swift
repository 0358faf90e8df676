import CKModel
import Foundation
import XCTest
@testable import CKCore
@testable import CKStore

/// `Directory.openBeneath` and `Directory.open`: a record file, or a whole directory path,
/// opened in one call, never through a link.
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

    private func kind(_ r: Directory.WholeOpen) -> String {
        switch r {
        case .opened(let f): close(f); return "opened"
        case .absent: return "absent"
        case .unsupported: return "unsupported"
        }
    }

    private func refusal(_ body: () throws -> Directory?) -> String {
        do { _ = try body(); return "none" } catch let e as CloudKitError { return e.reason } catch { return "\(error)" }
    }

    func testOpensAWholePathInOneCallAndNothingThroughALink() throws {
        let root = NSTemporaryDirectory() + "ck-dir-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/a/b/c", withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: root + "/file"))
        try fm.createSymbolicLink(atPath: root + "/link", withDestinationPath: root + "/a")
        try fm.createSymbolicLink(atPath: root + "/a/blink", withDestinationPath: root + "/a/b")
        guard kind(Directory.openWhole(root + "/a/b/c")) == "opened" else { throw XCTSkip("no openat2 here: each level is opened in turn") }
        XCTAssertEqual(kind(Directory.openWhole(root + "/a/none")), "absent")
        XCTAssertEqual(kind(Directory.openWhole(root + "/a/none/deeper")), "absent")
        // A link at a middle level or at the last, a file where a directory should be: left to
        // the walk, which names them.
        XCTAssertEqual(kind(Directory.openWhole(root + "/link/b")), "unsupported")
        XCTAssertEqual(kind(Directory.openWhole(root + "/a/blink")), "unsupported")
        XCTAssertEqual(kind(Directory.openWhole(root + "/file")), "unsupported")
        XCTAssertEqual(kind(Directory.openWhole(root + "/file/x")), "unsupported")

        // `open` answers as the walk does, whichever way it went.
        let c = try XCTUnwrap(try Directory.open(root + "/a/b/c/"))
        XCTAssertEqual(c.path, root + "/a/b/c")
        XCTAssertNil(try Directory.open(root + "/a/none"))
        XCTAssertTrue(refusal { try Directory.open(root + "/link/b") }.contains("refusing to follow the symbolic link '\(root)/link'"))
        XCTAssertTrue(refusal { try Directory.open(root + "/a/blink") }.contains("refusing to follow the symbolic link '\(root)/a/blink'"))
        XCTAssertTrue(refusal { try Directory.open(root + "/file/x") }.contains("not a directory '\(root)/file'"))
        XCTAssertTrue(refusal { try Directory.open(root + "/a/../a") }.contains("refusing a path with '..' in it"))
        XCTAssertTrue(refusal { try Directory.open(root + "/link/b", create: true) }.contains("symbolic link"))
        XCTAssertFalse(fm.fileExists(atPath: root + "/a/b/new"))
        // Missing levels made on the way (0700).
        _ = try XCTUnwrap(try Directory.open(root + "/a/n/m", create: true))
        var st = stat()
        XCTAssertEqual(lstat(root + "/a/n/m", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)
    }
}

final class DirectoryPathTests: XCTestCase {
    /// A path the kernel may resolve in one call has components, none of them `.` or `..`.
    func testAPlainPathHasComponentsAndNoDotOrDotDot() {
        for plain in ["/a", "/a/b", "/a/b/", "//a//b", "/a/.../b", "/.hidden/x", "/a/..b/c", "/a/b.."] {
            XCTAssertTrue(Directory.isPlain(plain), plain)
        }
        for other in ["/", "//", "/.", "/..", "/a/./b", "/a/../b", "/a/..", "/a/.", "/./"] {
            XCTAssertFalse(Directory.isPlain(other), other)
        }
    }

    /// The walk's components, split on the bytes, are those a split by Characters gives, for
    /// any path: combining marks after a `/`, empty components, no component at all.
    func testComponentsAreThoseBetweenTheSlashes() {
        var rng = SystemRandomNumberGenerator()
        let pieces = ["/", "//", "a", "é", "e\u{301}", "\u{301}", "日本", ".", "..", "x y", "😀", "%2F"]
        for _ in 0..<3000 {
            let path = (0..<Int.random(in: 0...8, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            let expected = path.utf8.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
            XCTAssertEqual(Directory.components(of: path).map { Array($0.utf8) }, expected.map { Array($0.utf8) }, path)
        }
        XCTAssertEqual(Directory.components(of: "/a//b/"), ["a", "b"])
        XCTAssertEqual(Directory.components(of: "/"), [])
        XCTAssertEqual(Directory.components(of: ""), [])
    }
}
