@testable import CKCLI
import CKTestSupport
import Foundation
import Glibc
import XCTest

/// `ck serve`'s startup errors: a port already in use is EXISTS (exit 4) naming the address and
/// what to do, not an INTERNAL_ERROR (issue 35, item 19).
final class ServeCommandTests: XCTestCase {
    /// A socket listening on a free loopback port, and that port.
    private func occupiedPort() throws -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(fd, 1), 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    func testAPortInUseIsExit4NamingTheAddressAndTheWayOut() throws {
        let s = CLISandbox()
        let (fd, port) = try occupiedPort()
        defer { close(fd) }
        let r = s.run(["serve", "--port", String(port)])
        assertFailure(r, exit: 4, contains: "cannot listen on 127.0.0.1:\(port): Address already in use")
        XCTAssertTrue(r.stderr.contains("EXISTS") && r.stderr.contains("--port 0"), r.stderr)
        let json = s.run(["--error-format", "json", "serve", "--port", String(port)])
        XCTAssertEqual(json.status, 4)
        XCTAssertTrue(json.stderr.contains("\"serverErrorCode\":\"EXISTS\""), json.stderr)
    }

    /// A server raises its soft limit on open files to the hard one (at most 65,536): it holds
    /// a descriptor per connection and the directories of the commits it has yet to publish,
    /// and the shell's 1,024 is close to what 256 connections and 256 such directories take.
    func testServeRaisesTheSoftLimitOnOpenFiles() throws {
        var before = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &before), 0)
        defer { _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &before) }
        var low = before
        low.rlim_cur = min(before.rlim_max, 256)
        XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &low), 0)
        ServeCommand.raiseOpenFileLimit()
        var after = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &after), 0)
        XCTAssertEqual(after.rlim_cur, min(before.rlim_max, 65_536))
    }
}
