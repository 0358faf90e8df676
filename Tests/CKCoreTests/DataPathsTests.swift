import Foundation
import XCTest
import CKModel
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

    /// The paths made once (an environment's directory, the root's files) are the ones made each
    /// time: for any container, past the memo's bound, and from copies of the paths.
    func testPathsMadeOnceAreThePathsMadeEachTime() {
        let paths = DataPaths(root: "/nonexistent/ck-paths")
        XCTAssertEqual(paths.faultsFile, "/nonexistent/ck-paths/faults.json")
        XCTAssertEqual(paths.usersDirectory, "/nonexistent/ck-paths/users")
        XCTAssertEqual(paths.deviceFile, "/nonexistent/ck-paths/device.json")
        XCTAssertEqual(paths.webSessionsDirectory, "/nonexistent/ck-paths/web-sessions")
        for round in 0..<2 {
            for i in 0..<300 {
                let container = "iCloud.c\(i)"
                for env in [Environment.development, .production] {
                    let made = paths.container(container) + "/" + env.rawValue
                    XCTAssertEqual(paths.environment(container, env), made, "round \(round)")
                    XCTAssertEqual(paths.apiTokensFile(container, env), made + "/api-tokens.json")
                }
            }
        }
        let copy = paths
        XCTAssertEqual(copy.environment("iCloud.c1", .production), "/nonexistent/ck-paths/containers/iCloud.c1/production")
        // Names found on disk (fsck, a wrong API token's search) are not always a container's:
        // two canonically equivalent names are two directories, whichever is asked first, and
        // a long name a client sends is made each time.
        for (first, second) in [("iCloud.e\u{301}", "iCloud.\u{E9}"), ("iCloud.\u{E9}", "iCloud.e\u{301}")] {
            let fresh = DataPaths(root: "/nonexistent/ck-paths")
            XCTAssertEqual(fresh.environment(first, .production), fresh.container(first) + "/production")
            XCTAssertEqual(fresh.environment(second, .production), fresh.container(second) + "/production")
            XCTAssertNotEqual(fresh.environment(first, .production), fresh.environment(second, .production))
        }
        let long = "iCloud." + String(repeating: "x", count: 400)
        XCTAssertEqual(paths.environment(long, .development), paths.container(long) + "/development")
    }

    /// A user's file is named by the Apple ID lowercased; an ASCII one without capitals is
    /// taken as it is, anything else through `lowercased()`.
    func testUserFilesAreNamedByTheLowercasedAppleID() {
        XCTAssertEqual(DataPaths.lowercased("alice@example.com"), "alice@example.com")
        XCTAssertEqual(DataPaths.lowercased("Alice@Example.COM"), "alice@example.com")
        XCTAssertEqual(DataPaths.lowercased("\u{C9}lodie@example.com"), "\u{E9}lodie@example.com")
        XCTAssertEqual(DataPaths.lowercased("[\\]^_`@{|}~"), "[\\]^_`@{|}~", "the bytes around A-Z and a-z stay")
        let paths = DataPaths(root: "/nonexistent/ck-paths")
        XCTAssertEqual(paths.userFile(appleID: "Bob@Example.com"), paths.userFile(appleID: "bob@example.com"))
    }

    /// A zone's history takes its lock beside the database's zones, made when asked; a history
    /// elsewhere has none.
    func testAZoneHistoryLockIsBesideTheZones() {
        XCTAssertEqual(ChangeHistory.ofZone("/d/private/u/zones/Z%2F1").lockFile, "/d/private/u/locks/Z%2F1.lock")
        XCTAssertNil(ChangeHistory.ofZone("/d/private/u/other/Z").lockFile)
        XCTAssertNil(ChangeHistory.ofZone("zones").lockFile)
        XCTAssertEqual(ChangeHistory(directory: "/d", lockFile: "/d/lock").lockFile, "/d/lock")
        XCTAssertNil(ChangeHistory(directory: "/d").lockFile)
    }
}
