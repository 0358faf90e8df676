import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Set by SIGINT/SIGTERM while a command follows a stream.
nonisolated(unsafe) private var stopRequested: sig_atomic_t = 0

/// `--follow`: polls for new items until the timeout, SIGINT/SIGTERM, or the reader closing the
/// pipe, which every tick checks (SIGPIPE is ignored; the CLI exits 141 without a word).
enum Follow {
    static let pollInterval: useconds_t = 100_000

    static func parseTimeout(_ inv: Invocation) throws -> Double? {
        guard let raw = inv.args.value("--timeout") else { return nil }
        guard let t = Double(raw), t > 0, t.isFinite else { throw inv.usageError("--timeout must be a positive number of seconds, got '\(raw)'") }
        if !inv.args.has("--follow") { throw inv.usageError("--timeout needs --follow") }
        return t
    }

    /// Calls `poll` until stopped; `poll` prints what is new and returns.
    static func run(io: IO, timeout: Double?, _ poll: () throws -> Void) throws {
        stopRequested = 0
        // Without SA_RESTART, so that a write blocked on a reader that does not read returns
        // (EINTR) and the stop is honoured instead of waiting for the reader.
        var action = sigaction()
        #if canImport(Glibc)
        action.__sigaction_handler.sa_handler = { _ in stopRequested = 1 }
        #else
        action.__sigaction_u.__sa_handler = { _ in stopRequested = 1 }
        #endif
        action.sa_flags = 0
        sigemptyset(&action.sa_mask)
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        io.stopRequested = { stopRequested != 0 }
        defer {
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        while stopRequested == 0 {
            try poll()
            let s = io.finish()
            if s != .ok { throw OutputError(status: s) }
            // A reader that went away is noticed at the next tick, not at the next event.
            if io.readerGone() { throw OutputError(status: .closed) }
            if let d = deadline, Date() >= d { return }
            usleep(pollInterval)
        }
    }
}
