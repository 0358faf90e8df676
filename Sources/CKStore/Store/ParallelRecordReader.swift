import CKModel
import Dispatch
import Foundation

/// Reads a zone's record files on every core while the caller consumes them in storage order:
/// shards are read and parsed a window at a time on worker threads, the next window while the
/// caller takes the current one, so output order and memory (two windows of shards) do not
/// depend on the zone's size, and the work of opening and parsing files is shared by the cores.
struct ParallelRecordReader {
    package let records: Directory
    let shards: [String]
    /// Work done for each record on the worker that read it (an export's output line), handed
    /// on with the record, so that it too is shared by the cores.
    package var prepare: ((Record) -> String)? = nil
    /// Shards per window: enough to keep the cores busy, few enough to keep memory flat.
    package static let window = 8

    /// What one window read: per shard, its records or the first error met.
    private final class Window: @unchecked Sendable {
        var results: [Result<[(Record, String?)], Error>]
        init(count: Int) { results = Array(repeating: .success([]), count: count) }
    }

    private func read(_ range: Range<Int>) -> Window {
        let w = Window(count: range.count)
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: range.count) { i in
            let shard = shards[range.lowerBound + i]
            var out: [(Record, String?)] = []
            let r: Result<[(Record, String?)], Error>
            do {
                if let dir = try records.subdirectory(shard) {
                    for file in try dir.entries() where file.hasSuffix(".json") && !file.hasPrefix(".") {
                        // Gone since the listing: deleted meanwhile. Without a record: corrupt.
                        guard let record = try dir.readStoredRecord(file, shownAs: dir.path + "/" + file) else { continue }
                        out.append((record, prepare?(record)))
                    }
                }
                r = .success(out)
            } catch {
                r = .failure(error)
            }
            lock.lock()
            w.results[i] = r
            lock.unlock()
        }
        return w
    }

    package func forEach(_ body: (Record, String?) throws -> Bool) throws {
        let windows = stride(from: 0, to: shards.count, by: ParallelRecordReader.window).map { $0..<min($0 + ParallelRecordReader.window, shards.count) }
        guard !windows.isEmpty else { return }
        let queue = DispatchQueue(label: "ck.records.read")
        final class Pending: @unchecked Sendable { var window: Window? }
        var current = read(windows[0])
        for k in windows.indices {
            let pending = Pending()
            let group = DispatchGroup()
            if k + 1 < windows.count {
                let next = windows[k + 1]
                queue.async(group: group) { pending.window = self.read(next) }
            }
            defer { group.wait() }
            for r in current.results {
                for (rec, prepared) in try r.get() where try !body(rec, prepared) { return }
            }
            group.wait()
            if let w = pending.window { current = w }
        }
    }
}
