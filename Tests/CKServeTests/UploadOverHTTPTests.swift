import CKCore
import CKModel
import CKTestSupport
import Foundation
import XCTest
@testable import CKServe

/// `POST /upload/<token>` (issue 35, item 5): the body goes to disk as it arrives, whatever its
/// framing; an upload URL takes one upload; one cut short leaves nothing and may be sent again.
final class UploadOverHTTPTests: XCTestCase {
    private func uploadPath(_ f: ServeFixture) throws -> String {
        let urls = try f.post("private", "assets/upload", #"{"tokens":[{"fieldName":"file","recordType":"Doc"}]}"#)
        let url = try XCTUnwrap((urls["tokens"] as? [[String: Any]])?.first?["url"] as? String)
        return String(url.dropFirst(f.url.count))
    }

    private func arriving(_ f: ServeFixture) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: f.root + "/assets/uploads")) ?? []).filter { $0.hasPrefix(".tmp-") }
    }

    func testAnUploadURLIsUsedOnce() throws {
        let f = try ServeFixture()
        let path = try uploadPath(f)
        let first = try f.client().request("POST", path, body: Array("once".utf8))
        XCTAssertEqual(first.status, 200, first.text)
        let second = try f.client().request("POST", path, body: Array("twice".utf8))
        XCTAssertEqual(second.status, 401, second.text)
        XCTAssertEqual(second["serverErrorCode"] as? String, "AUTHENTICATION_FAILED")
        XCTAssertTrue((second["reason"] as? String)?.contains("used already") ?? false, second.text)
    }

    func testAnUploadCutShortLeavesNothingAndTheURLMayBeTriedAgain() throws {
        let f = try ServeFixture()
        let path = try uploadPath(f)
        do {
            let c = try RawHTTPClient(port: f.port)
            XCTAssertTrue(c.send("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n" + String(repeating: "a", count: 300_000)))
            usleep(200_000)
            XCTAssertEqual(arriving(f).count, 1, "the body goes to a file as it arrives")
        }  // closed mid-body
        let deadline = Date().addingTimeInterval(3)
        while !arriving(f).isEmpty, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(arriving(f), [])
        // Chunked, in pieces: the same bytes as one piece.
        let c = try RawHTTPClient(port: f.port)
        XCTAssertTrue(c.send("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"))
        usleep(50_000)
        XCTAssertTrue(c.send("7\r\n, asset\r\n0\r\n\r\n"))
        let answer = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(answer.status, 200, answer.text)
        XCTAssertEqual((answer.json["singleFile"] as? [String: Any])?["fileChecksum"] as? String, AssetValue.checksum(of: Array("hello, asset".utf8)))
    }

    /// A chunked upload growing past 50 MB is refused when it does, and what came is removed.
    func testAChunkedUploadPastTheLimitIsRefusedAndDropped() throws {
        let f = try ServeFixture()
        let path = try uploadPath(f)
        let c = try RawHTTPClient(port: f.port, timeout: 30)
        XCTAssertTrue(c.send("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"))
        let piece = Array(String(format: "%x\r\n", 1 << 20).utf8) + [UInt8](repeating: 0x62, count: 1 << 20) + Array("\r\n".utf8)
        for _ in 0..<52 where c.send(piece) {}
        let answer = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(answer.status, 413, answer.text)
        let deadline = Date().addingTimeInterval(3)
        while !arriving(f).isEmpty, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(arriving(f), [])
    }
}
