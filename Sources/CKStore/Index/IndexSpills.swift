import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Unsorted index lines, one spill file per run, in a temporary directory: what a build from
/// the record files writes as it reads them, then sorts one run at a time.
final class IndexSpills {
    private let parent: Directory
    private let name: String
    private let dir: Directory
    private var files: [String: Int] = [:]
    private var buffers: [[UInt8]] = []

    package init(in parent: Directory) throws {
        self.parent = parent
        name = FileSystem.temporaryName()
        dir = try parent.subdirectory(name, create: true)!
    }

    private func key(_ type: String, _ field: String?) -> String { type + "\u{0}" + (field ?? "") + (field == nil ? "\u{1}" : "") }

    package func add(type: String, field: String?, _ line: [UInt8]) throws {
        let k = key(type, field)
        let i: Int
        if let j = files[k] { i = j } else { i = buffers.count; files[k] = i; buffers.append([]) }
        buffers[i].append(contentsOf: line)
        buffers[i].append(0x0A)
        if buffers[i].count >= 1 << 18 { try flush(i) }
    }

    private func flush(_ i: Int) throws {
        guard !buffers[i].isEmpty else { return }
        try dir.append(String(i), buffers[i], durable: false)
        buffers[i].removeAll(keepingCapacity: true)
    }

    /// The lines of one run, sorted by their bytes (repeats included).
    func sortedLines(type: String, field: String?, _ body: (ArraySlice<UInt8>) throws -> Void) throws {
        guard let i = files[key(type, field)] else { return }
        try flush(i)
        let bytes = try dir.read(String(i)) ?? []
        try dir.remove(String(i))
        var ranges: [(Int, Int)] = []
        var s = 0
        for (j, b) in bytes.enumerated() where b == 0x0A {
            ranges.append((s, j))
            s = j + 1
        }
        bytes.withUnsafeBufferPointer { p in
            let base = p.baseAddress!
            ranges.sort { a, b in
                let la = a.1 - a.0, lb = b.1 - b.0
                let c = memcmp(base + a.0, base + b.0, min(la, lb))
                return c != 0 ? c < 0 : la < lb
            }
        }
        for (a, b) in ranges { try body(bytes[a..<b]) }
    }

    package func discard() { try? parent.removeTree(name) }
}
