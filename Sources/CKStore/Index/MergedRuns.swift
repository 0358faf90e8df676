import CKModel

/// The lines of one index as a reader sees them: its base run, its delta run, and the lines of
/// records changed since (from the history, in memory), merged in byte order with repeats
/// dropped. Lines may be stale (a record changed since a run was made): readers check each
/// candidate against the record.
struct MergedRuns {
    package let runs: [IndexRun]
    /// Sorted lines of records changed after the runs.
    let overlay: [[UInt8]]
    let fieldRun: Bool

    /// Lines from the first ≥ `lower` up to (not including) the first ≥ `upper`, ascending;
    /// `body` returns false to stop. Tombstones are skipped.
    package func forEach(from lower: [UInt8], to upper: [UInt8]?, _ body: (ArraySlice<UInt8>) throws -> Bool) throws {
        var last: [UInt8]?
        try forEachSourced(from: lower) { line, _ in
            if let u = upper, !line.precedes(u) { return false }
            if let l = last, l[...] == line { return true }
            last = Array(line)
            if IndexKey.isTombstone(line) { return true }
            return try body(line)
        }
    }

    /// Every line from the first ≥ `lower`, ascending, repeats and tombstones included, with
    /// where it comes from: the index of its run, or `runs.count` for the overlay. What a merge
    /// of runs into a new one reads (IndexMaintenance); `body` returns false to stop.
    func forEachSourced(from lower: [UInt8] = [], _ body: (ArraySlice<UInt8>, Int) throws -> Bool) rethrows {
        var pos = runs.map { $0.lowerBound(lower) }
        var ov = lowerBound(overlay, lower)
        while true {
            var best: ArraySlice<UInt8>?
            var from = -1
            for (i, r) in runs.enumerated() where pos[i] < r.end {
                let (l, _) = r.line(at: pos[i])
                if best == nil || l.precedes(best!) { best = l; from = i }
            }
            if ov < overlay.count, best == nil || overlay[ov].precedes(best!) { best = overlay[ov][...]; from = runs.count }
            guard let line = best else { return }
            if from == runs.count { ov += 1 } else { pos[from] = runs[from].nextLine(after: pos[from]) }
            if try !body(line, from) { return }
        }
    }

    /// The greatest line below `bound` (nil: none), tombstones aside.
    func lastLine(below bound: [UInt8]) -> ArraySlice<UInt8>? {
        var best: ArraySlice<UInt8>?
        for r in runs {
            var at = r.lowerBound(bound)
            while let p = r.previousLine(before: at) {
                let (l, _) = r.line(at: p)
                if !IndexKey.isTombstone(l) {
                    if best == nil || best!.precedes(l) { best = l }
                    break
                }
                at = p
            }
        }
        var i = lowerBound(overlay, bound)
        while i > 0 {
            i -= 1
            if !IndexKey.isTombstone(overlay[i][...]) {
                if best == nil || best!.precedes(overlay[i]) { best = overlay[i][...] }
                break
            }
        }
        return best
    }

    /// An estimate of the lines in [lower, upper).
    func estimate(from lower: [UInt8], to upper: [UInt8]) -> Double {
        var n = 0.0
        for r in runs { n += r.estimatedLines(from: r.lowerBound(lower), to: r.lowerBound(upper)) }
        return n + Double(lowerBound(overlay, upper) - lowerBound(overlay, lower))
    }

    private func lowerBound(_ a: [[UInt8]], _ key: [UInt8]) -> Int {
        var lo = 0, hi = a.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if a[mid].precedes(key) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
