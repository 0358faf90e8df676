import Foundation
import Glibc
import XCTest
@testable import CKCLI

/// ck serve's log: lines from many threads at once come out whole, in the order each thread
/// logged them, shortly after they were logged (no flush needed), every write to the pipe at
/// most PIPE_BUF bytes and ending with a line; `flush` writes at once.
final class ServeLogTests: XCTestCase {
    func testLinesFromManyThreadsComeOutWholeAndSoon() throws {
        // A socket of packets keeps each write apart: every read is one write of the log.
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fds[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let log = ServeLog(fd: fds[1])
        let threads = 8, each = 500
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<each { log.line("POST /database/1/x/development/private/records/lookup \(t) \(i) " + String(repeating: "x", count: i % 300)) }
        }
        // No flush: the log's own thread writes them.
        var text: [Substring] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while text.count < threads * each {
            let n = recv(fds[0], &chunk, chunk.count, 0)
            guard n > 0 else { return XCTFail("only \(text.count) lines came") }
            XCTAssertLessThanOrEqual(n, Int(PIPE_BUF), "a write a pipe keeps whole")
            XCTAssertEqual(chunk[n - 1], UInt8(ascii: "\n"), "a write of whole lines")
            text += String(decoding: chunk[0..<n], as: UTF8.self).split(separator: "\n")
        }
        var next = [Int](repeating: 0, count: threads)
        for l in text {
            let parts = l.split(separator: " ")
            guard parts.count >= 4, let t = Int(parts[2]), let i = Int(parts[3]) else { return XCTFail("a torn line: \(l)") }
            XCTAssertEqual(i, next[t], "thread \(t)'s lines in order")
            XCTAssertEqual(parts.count == 5 ? parts[4].count : 0, i % 300, "line \(t) \(i) whole")
            next[t] = i + 1
        }
        // A flush writes what is gathered (here, or the log's thread just before).
        log.line("last")
        log.flush()
        let n = recv(fds[0], &chunk, chunk.count, 0)
        XCTAssertEqual(n > 0 ? String(decoding: chunk[0..<n], as: UTF8.self) : "", "last\n")
    }
}
