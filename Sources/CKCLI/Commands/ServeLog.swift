import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// ck serve's log on stderr: a line a request, from many connection threads at once. The lines
/// are gathered and written by a thread of their own a few milliseconds after the first of
/// them, in writes of whole lines of at most `PIPE_BUF` bytes (a pipe keeps each whole), where
/// every request made a `write(2)` of its own: a seventh of the system calls of a lookup.
/// `flush` writes what is gathered at once; the server calls it when it stops.
final class ServeLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private let fd: Int32
    /// How long the writer lets lines gather after the first: short enough that a person (or a
    /// script tailing the log) sees no delay.
    static let gatherMicroseconds: useconds_t = 5_000
    /// PIPE_BUF: a write of at most this many bytes to a pipe is never split.
    static let atomicWrite = Int(PIPE_BUF)

    init(fd: Int32 = 2) {
        self.fd = fd
        // The writer holds the log for good: a server logs until its process ends.
        let writer = Thread { self.run() }
        writer.name = "ck-serve-log"
        writer.start()
    }

    func line(_ text: String) {
        condition.lock()
        let first = pending.isEmpty
        pending.append(contentsOf: text.utf8)
        pending.append(UInt8(ascii: "\n"))
        condition.unlock()
        if first { condition.signal() }
    }

    /// Writes every line gathered so far.
    func flush() {
        condition.lock()
        let bytes = pending
        pending = []
        condition.unlock()
        write(bytes)
    }

    private func run() {
        while true {
            condition.lock()
            while pending.isEmpty { condition.wait() }
            condition.unlock()
            usleep(Self.gatherMicroseconds)
            flush()
        }
    }

    /// In pieces of whole lines, each at most `atomicWrite` bytes where a line allows.
    private func write(_ bytes: [UInt8]) {
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count {
                guard let nl = bytes[end...].firstIndex(of: UInt8(ascii: "\n")) else { end = bytes.count; break }
                if nl + 1 - start > Self.atomicWrite && end > start { break }
                end = nl + 1
            }
            var off = start
            while off < end {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, end - off) }
                if n < 0 { if errno == EINTR { continue }; return }
                off += n
            }
            start = end
        }
    }
}
