import Foundation
import XCTest
@testable import CKStore

/// A data directory is named by its resolved path: links in the part that exists followed, `.`
/// and `..` taken out of the rest.
final class DataPathsTests: XCTestCase {
    func testResolvingFollowsLinksInWhatExistsAndCleansTheRest() throws {
        let base = try XCTUnwrap(realpath(NSTemporaryDirectory(), nil).map { p in defer { free(p) }; return String(cString: p) })
        let dir = base + "/ck-resolve-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/real", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createSymbolicLink(atPath: dir + "/link", withDestinationPath: dir + "/real")

        XCTAssertEqual(DataPaths.resolve("/"), "/")
        XCTAssertEqual(DataPaths.resolve(dir + "/real"), dir + "/real")
        XCTAssertEqual(DataPaths.resolve(dir + "//real/"), dir + "/real")
        XCTAssertEqual(DataPaths.resolve(dir + "/link"), dir + "/real", "a link that exists is followed")
        XCTAssertEqual(DataPaths.resolve(dir + "/link/new/./data"), dir + "/real/new/data", "the part that does not exist is kept, without '.'")
        XCTAssertEqual(DataPaths.resolve(dir + "/real/new/../other"), dir + "/real/other", "'..' in the missing part takes a component back")
    }
}
