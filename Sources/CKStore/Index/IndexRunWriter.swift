import CKJSON
import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one index run as a temporary file, streaming its lines (given in order), then its
/// header, then fsyncs it; `publish` renames it into place. Memory stays that of one buffer.
final class IndexRunWriter {
    package let directory: Directory
    package let temporary: String
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var offset: Int64
    /// The lines added so far (repeats dropped).
    private(set) var count: Int64 = 0
    private var last: [UInt8]?
    private var closed = false

    package init(in dir: Directory) throws {
        directory = dir
        let tmp = try dir.prepare([UInt8](repeating: 0x20, count: IndexRun.headerWidth))
        temporary = tmp
        do { fd = try dir.openForWriting(tmp, create: false) } catch { dir.discard(tmp); throw error }
        offset = Int64(IndexRun.headerWidth)
        buffer.reserveCapacity(1 << 16)
    }

    deinit { if !closed { close(fd); directory.discard(temporary) } }

    /// Adds a line; lines come in strictly increasing byte order (a repeat is dropped).
    package func add(_ line: ArraySlice<UInt8>) throws {
        if let l = last {
            if l[...] == line { return }
            precondition(l.precedes(line), "index lines out of order")
        }
        last = Array(line)
        buffer.append(contentsOf: line)
        buffer.append(0x0A)
        count += 1
        if buffer.count >= 1 << 16 { try flush() }
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        try FileSystem.writeAt(fd, buffer, offset: offset, path: directory.path + "/" + temporary, rollback: false)
        offset += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Finishes the file (header, fsync) and renames it to `name`.
    package func publish(as name: String, header h: IndexRun.Header) throws {
        try flush()
        var header = h
        header.count = count
        header.bytes = offset
        var bytes = Array(JSONWriter.compact(header.json).utf8)
        guard bytes.count < IndexRun.headerWidth else { throw CloudKitError.internalError("index header too long for record type '\(h.recordType)'") }
        bytes += [UInt8](repeating: 0x20, count: IndexRun.headerWidth - 1 - bytes.count) + [0x0A]
        let path = directory.path + "/" + temporary
        try FileSystem.overwrite(fd, bytes, offset: 0, path: path)
        try FileSystem.fsync(fd, path: path)
        close(fd)
        closed = true
        try directory.publish(temporary, as: name)
    }
}
