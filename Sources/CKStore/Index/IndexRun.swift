import CKJSON
import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One index run on disk, mapped read-only: a header line, then lines sorted by their bytes
/// (IndexKey). A run is never changed in place — a new one is renamed over it — so a reader
/// keeps the version it mapped, whole, however long it reads. Bisection touches O(log n)
/// pages: a page of results costs O(page + log n), not O(zone).
///
/// The header is a JSON object padded with spaces to a fixed width, written last (the file's
/// size in it), so a run cut short by a crash or a full disk is told apart and never used.
final class IndexRun {
    static let headerWidth = 2048
    package static let format = "ck-index-1"

    package struct Header: Equatable {
        package var recordType: String
        /// The field (nil: the record-name run).
        package var field: String?
        /// History entry the run is as of; for a delta run, the base run's seq it extends.
        package var seq: Int64
        package var base: Int64?
        package var incarnation: String
        package var count: Int64
        package var bytes: Int64

        package var json: JSONValue {
            var o: [String: JSONValue] = [
                "schemaVersion": .int(FileFormat.schemaVersion), "format": .string(IndexRun.format), "recordType": .string(recordType),
                "seq": .int(seq), "incarnation": .string(incarnation), "count": .int(count), "bytes": .int(bytes),
            ]
            if let f = field { o["field"] = .string(f) }
            if let b = base { o["base"] = .int(b) }
            return .object(o)
        }

        package init(recordType: String, field: String?, seq: Int64, base: Int64?, incarnation: String, count: Int64, bytes: Int64) {
            self.recordType = recordType
            self.field = field
            self.seq = seq
            self.base = base
            self.incarnation = incarnation
            self.count = count
            self.bytes = bytes
        }

        package init?(_ j: JSONValue) {
            guard j["format"]?.stringValue == IndexRun.format, j["schemaVersion"]?.int64Value == FileFormat.schemaVersion,
                  let t = j["recordType"]?.stringValue, let s = j["seq"]?.int64Value, let inc = j["incarnation"]?.stringValue,
                  let c = j["count"]?.int64Value, let b = j["bytes"]?.int64Value else { return nil }
            recordType = t
            field = j["field"]?.stringValue
            seq = s
            base = j["base"]?.int64Value
            incarnation = inc
            count = c
            bytes = b
        }
    }

    package let header: Header
    private let base: UnsafeRawPointer?
    private let size: Int
    /// Where the sorted lines begin and end.
    package let start: Int
    package let end: Int

    private init(header: Header, base: UnsafeRawPointer?, size: Int) {
        self.header = header
        self.base = base
        self.size = size
        start = IndexRun.headerWidth
        end = size
    }

    deinit { if let b = base { munmap(UnsafeMutableRawPointer(mutating: b), size) } }

    /// Opens a run; nil when it is missing, cut short, or not a run of this format.
    static func open(_ dir: Directory, _ name: String) -> IndexRun? {
        guard let f = try? dir.openFile(name) else { return nil }
        defer { close(f) }
        var st = stat()
        guard fstat(f, &st) == 0, st.st_size >= Int64(headerWidth) else { return nil }
        let size = Int(st.st_size)
        guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, f, 0), p != MAP_FAILED else { return nil }
        let raw = UnsafeRawPointer(p)
        let headBytes = Array(UnsafeRawBufferPointer(start: raw, count: headerWidth))
        guard headBytes.last == 0x0A, let j = try? JSONParser.parse(Array(headBytes.dropLast())), let h = Header(j),
              h.bytes == Int64(size), size == headerWidth || raw.load(fromByteOffset: size - 1, as: UInt8.self) == 0x0A
        else {
            munmap(p, size)
            return nil
        }
        return IndexRun(header: h, base: raw, size: size)
    }

    private func byte(_ i: Int) -> UInt8 { base!.load(fromByteOffset: i, as: UInt8.self) }

    /// The line starting at `i` (without its newline) and where the next begins.
    package func line(at i: Int) -> (ArraySlice<UInt8>, next: Int) {
        var j = i
        while j < end && byte(j) != 0x0A { j += 1 }
        let bytes = Array(UnsafeRawBufferPointer(start: base! + i, count: j - i))
        return (bytes[...], j + 1)
    }

    /// Where the line holding offset `i` begins.
    private func lineStart(_ i: Int) -> Int {
        var j = i
        while j > start && byte(j - 1) != 0x0A { j -= 1 }
        return j
    }

    /// Where the line before the one starting at `i` begins (nil at the first line).
    func previousLine(before i: Int) -> Int? {
        guard i > start else { return nil }
        return lineStart(i - 1)
    }

    /// Offset of the first line whose bytes are ≥ `key` (as a prefix compare: a line equal to
    /// `key` followed by more bytes is greater); `end` when every line is smaller.
    package func lowerBound(_ key: [UInt8]) -> Int {
        var lo = start, hi = end
        // Invariant: every line starting before `lo` is < key; the line at `hi` (if any) is ≥
        // key. `lo` is a line start, so the line holding the midpoint starts at or after it.
        while lo < hi {
            let mid = lineStart(lo + (hi - lo) / 2)
            if compare(at: mid, key) < 0 { lo = nextLine(after: mid) } else { hi = mid }
        }
        return lo
    }

    /// Where the line after the one starting at `i` begins.
    func nextLine(after i: Int) -> Int {
        var j = i
        while j < end && byte(j) != 0x0A { j += 1 }
        return j + 1
    }

    /// Compares the line at `i` with `key`, byte by byte.
    private func compare(at i: Int, _ key: [UInt8]) -> Int {
        var j = i
        for k in key {
            guard j < end else { return -1 }
            let b = byte(j)
            if b == 0x0A { return -1 }
            if b != k { return b < k ? -1 : 1 }
            j += 1
        }
        return (j < end && byte(j) != 0x0A) ? 1 : 0
    }

    /// An estimate of the number of lines between two offsets.
    func estimatedLines(from a: Int, to b: Int) -> Double {
        guard header.count > 0, end > start else { return 0 }
        return Double(b - a) / Double(end - start) * Double(header.count)
    }
}

extension IndexRun {
    /// Every line from offset `i` on, in order; `body` returns false to stop.
    func forEachLine(from i: Int? = nil, _ body: (ArraySlice<UInt8>) throws -> Bool) rethrows {
        var at = i ?? start
        while at < end {
            let (l, next) = line(at: at)
            if try !body(l) { return }
            at = next
        }
    }
}
