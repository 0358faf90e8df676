import Foundation

/// `ck import`'s progress on stderr: a line redrawn after each batch when stderr is a terminal
/// (done/total, records/s, ETA), then a one-line summary; nothing with `--quiet`.
final class ImportProgress {
    private let io: IO
    private let total: Int
    private let quiet: Bool
    private let live: Bool
    private let start = Date()
    private var lastDraw = Date.distantPast

    init(io: IO, total: Int, quiet: Bool) {
        self.io = io
        self.total = total
        self.quiet = quiet
        live = !quiet && io.stderrIsTerminal()
    }

    private func rate(_ done: Int) -> Double {
        let t = Date().timeIntervalSince(start)
        return t > 0 ? Double(done) / t : 0
    }

    func update(done: Int) {
        guard live, Date().timeIntervalSince(lastDraw) >= 0.2 || done == total else { return }
        lastDraw = Date()
        let r = rate(done)
        let eta = r > 0 ? Int((Double(total - done) / r).rounded(.up)) : 0
        io.writeErr("\rck: import: \(done)/\(total) records, \(Int(r)) records/s, ETA \(eta) s\u{1B}[K")
    }

    /// The summary, for an import where nothing failed (a failure's one line says the rest).
    func finish(done: Int, unchanged: Int, failed: Int) {
        if live { io.writeErr("\r\u{1B}[K") }
        guard !quiet, failed == 0 else { return }
        let secs = Date().timeIntervalSince(start)
        let line = "ck: import: \(done) records (\(done - unchanged - failed) written, \(unchanged) unchanged, \(failed) failed) in "
            + String(format: "%.1f", secs) + " s, \(Int(rate(done))) records/s"
        io.writeErr(line + "\n")
    }
}
