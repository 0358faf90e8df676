import CKTestSupport
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `ck serve`'s memory under bursts of large bodies (issue 35, items 5 and 6), read from
/// /proc/PID/status of the server process: 16 uploads stalled part-way hold none of their bytes
/// (they go to disk as they come; before, the server held them, 1.2 GB for 16 × 50 MB), and
/// after 250 bodies of 2 MB — refused before they are read when anonymous, read when not — the
/// server returns to its resting size (before, tens of megabytes stayed in malloc's arenas).
final class ServeMemoryTests: XCTestCase {
    static let container = "iCloud.com.example.serve"

    func served() throws -> ServedSandbox { try ServedSandbox(container: Self.container) }

    /// A field of /proc/PID/status, in kB.
    func status(_ pid: Int32, _ field: String) -> Int {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    func testStalledUploadsHoldNoneOfTheirBytes() throws {
        let s = try served()
        let pid = s.serve.process.processIdentifier
        let tokens = (0..<16).map { #"{"fieldName":"file","recordName":"r\#($0)"}"# }.joined(separator: ",")
        let made = try s.post("private", "assets/upload", #"{"tokens":[\#(tokens)]}"#)
        let urls = try XCTUnwrap((made["tokens"] as? [[String: Any]])?.compactMap { $0["url"] as? String })
        XCTAssertEqual(urls.count, 16, made.text)
        usleep(300_000)
        let resting = status(pid, "VmRSS")

        let sent = 2 << 20
        let part = [UInt8](repeating: 0x61, count: sent)
        var clients: [HTTPTestClient] = []
        for url in urls {
            let c = try s.serve.client()
            try c.send("POST \(url.dropFirst(s.serve.url.count)) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 50000000\r\n\r\n")
            try c.send(part)
            clients.append(c)
        }
        // Until the server has taken what was sent: on disk, as it arrives.
        let uploads = s.sandbox.dataDir.appendingPathComponent("assets/uploads").path
        func arrived() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? []).filter { $0.hasPrefix(".tmp-") }
                .reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: uploads + "/" + $1)[.size] as? Int) ?? 0) }
        }
        var deadline = Date().addingTimeInterval(60)
        while arrived() < 16 * sent, Date() < deadline { usleep(50_000) }
        XCTAssertEqual(arrived(), 16 * sent, "the bytes of 16 stalled uploads, on disk")
        let peak = status(pid, "VmHWM")
        XCTAssertLessThan(peak - resting, 16 * 1024, "kB more than at rest, at the peak, with \(16 * sent / 1_048_576) MB of uploads in flight (resting \(resting) kB)")

        clients.removeAll()
        deadline = Date().addingTimeInterval(10)
        while arrived() > 0, Date() < deadline { usleep(50_000) }
        XCTAssertEqual(arrived(), 0, "uploads cut short leave nothing")
        XCTAssertEqual(s.serve.stop().status, 0)
    }

    func testMemoryReturnsToItsRestingSizeAfterABurstOfLargeBodies() throws {
        let s = try served()
        let pid = s.serve.process.processIdentifier
        usleep(300_000)
        let resting = status(pid, "VmRSS")
        let body = [UInt8](repeating: 0x78, count: 1_999_000)
        for token in [nil, s.apiToken] {
            let query = token.map { "?ckAPIToken=\($0)" } ?? ""
            var clients: [HTTPTestClient] = []
            for _ in 0..<250 {
                let c = try s.serve.client()
                try c.send("POST /database/1/\(Self.container)/development/public/records/query\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.count)\r\n\r\n")
                // An anonymous one may be answered and closed before all of it is sent.
                try? c.send(Array(body.dropLast()))
                clients.append(c)
            }
            for c in clients {
                try? c.send([0x78])
                let answer = try? c.readAnswer()
                XCTAssertEqual(answer?.status, token == nil ? 401 : 400)
            }
            clients.removeAll()
            usleep(500_000)
            let after = status(pid, "VmRSS")
            XCTAssertLessThan(after - resting, 16 * 1024, "kB kept after 250 \(token == nil ? "anonymous" : "authenticated") bodies of 2 MB (resting \(resting) kB)")
        }
        XCTAssertEqual(s.serve.stop().status, 0)
    }
}
