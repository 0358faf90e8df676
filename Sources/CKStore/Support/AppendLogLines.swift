import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading an AppendLog by byte offset: the logs whose owners keep offsets (an inbox's read
/// offset) or read them whole (the account events).
extension AppendLog {
    /// Streams the committed entries from byte offset `offset` (where an entry starts) on,
    /// oldest first: each one's bytes (without its newline) and the offset after it. `body`
    /// returns false to stop. Bytes after the last newline within the committed end are no
    /// entry, and are never passed.
    func forEachEntry(from offset: Int64 = 0, _ body: (ArraySlice<UInt8>, Int64) throws -> Bool) throws {
        guard let dir = try Directory.open(directory) else { return }
        // A whole-lines log is committed up to its last newline: read to the end of the file.
        let end: Int64
        switch commit {
        case .index: end = try indexedHead(dir).end
        case .recorded(let e): end = e
        case .wholeLines: end = .max
        }
        guard end > offset, let f = try dir.openFile(name) else { return }
        defer { close(f) }
        try forEachLine(f, from: offset, to: end, body)
    }

    /// The lines of the log open as `f` from byte offset `offset` (where a line starts) up to
    /// `end` (or the file's end), each passed with the offset after it; bytes after the last
    /// newline are not. Read a chunk at a time: memory holds a chunk and the longest line.
    func forEachLine(_ f: Int32, from offset: Int64, to end: Int64 = .max, _ body: (ArraySlice<UInt8>, Int64) throws -> Bool) throws {
        // buffer[start...] holds the log from offset `at + start` on.
        var buffer = [UInt8]()
        var start = 0
        var at = offset
        while true {
            let want = Int(min(65536, end - at - Int64(buffer.count)))
            if want <= 0 { return }
            var chunk = [UInt8](repeating: 0, count: want)
            let n = chunk.withUnsafeMutableBytes { pread(f, $0.baseAddress, want, off_t(at) + off_t(buffer.count)) }
            if n < 0 { if errno == EINTR { continue }; throw FileSystem.failure("cannot read", path) }
            if n == 0 { return }
            buffer.append(contentsOf: chunk[0..<n])
            while let nl = buffer[start...].firstIndex(of: 0x0A) {
                if try !body(buffer[start..<nl], at + Int64(nl) + 1) { return }
                start = nl + 1
            }
            buffer.removeFirst(start)
            at += Int64(start)
            start = 0
        }
    }

    /// Where a whole-lines log's last whole line ends, read from the end backwards: what an
    /// append needs, at the cost of the torn tail (if any) and the last line, not of the log.
    func wholeLinesEnd(_ dir: Directory) throws -> Int64 {
        guard let f = try dir.openFile(name) else { return 0 }
        defer { close(f) }
        var st = stat()
        guard fstat(f, &st) == 0 else { throw FileSystem.failure("cannot stat", path) }
        var end = Int64(st.st_size)
        let chunk = 65536
        var buffer = [UInt8](repeating: 0, count: chunk)
        while end > 0 {
            let start = max(0, end - Int64(chunk))
            let want = Int(end - start)
            let n = buffer.withUnsafeMutableBytes { pread(f, $0.baseAddress, want, off_t(start)) }
            if n < 0 { if errno == EINTR { continue }; throw FileSystem.failure("cannot read", path) }
            guard n == want else { throw FileSystem.failure("short read of", path, errno: EIO) }
            if let nl = buffer[0..<want].lastIndex(of: 0x0A) { return start + Int64(nl) + 1 }
            end = start
        }
        return 0
    }

    /// A whole-lines log's head: its whole lines, and where the last one ends.
    func wholeLinesHead(_ dir: Directory) throws -> Head {
        guard let bytes = try dir.read(name) else { return Head(seq: 0, end: 0) }
        var lines: Int64 = 0
        var end = 0
        for (i, b) in bytes.enumerated() where b == 0x0A {
            lines += 1
            end = i + 1
        }
        return Head(seq: lines, end: Int64(end))
    }
}
