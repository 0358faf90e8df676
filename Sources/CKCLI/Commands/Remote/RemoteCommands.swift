import CKCore
import CKJSON
import CKModel
import CKRemote
import Foundation

/// `ck remote …`, `ck clone`, `ck fetch`, `ck pull`, `ck push`: ck as a client of CloudKit Web
/// Services with git's verbs (Docs/remote.md). The remotes are the data directory's; their
/// credentials live outside it (`$XDG_CONFIG_HOME/ck/credentials.json`).
enum RemoteCommands {
    /// The pacing options the commands that talk to a remote share.
    static let pacingOptions = [
        OptionSpec("--rate", value: "N", help: "at most N requests a second [default: \(Int(PacingPolicy.defaultRate)) on Apple's host, unpaced elsewhere]"),
        OptionSpec("--max-wait", value: "SECONDS", help: "give up after waiting this long in all for throttles and retries, with what was fetched saved (exit 10) [default: \(Int(PacingPolicy.defaultMaxWait))]"),
        OptionSpec("--progress", help: "report pages, records and bytes on stderr even when it is not a terminal"),
    ]

    /// A remote named by NAME, or the only remote when none is named.
    static func remote(_ inv: Invocation, _ name: String?) throws -> RemoteEntry {
        if let n = name { return try inv.api.remote(named: n) }
        let all = try inv.api.remotes()
        if all.count == 1 { return all[0] }
        if let origin = all.first(where: { $0.name == "origin" }) { return origin }
        throw inv.usageError(all.isEmpty ? "this data directory has no remote: ck remote add NAME URL, or ck clone URL" : "name the remote: one of \(all.map(\.name).joined(separator: ", "))")
    }

    static func pacing(_ inv: Invocation, _ url: RemoteURL) throws -> PacingPolicy {
        var p = PacingPolicy.standard(for: url)
        if let r = inv.args.value("--rate") {
            guard let n = Double(r), n > 0, n <= 10_000 else { throw inv.usageError("--rate must be a number of requests a second above 0, got '\(r)'") }
            p.rate = n
        }
        if let w = inv.args.value("--max-wait") {
            guard let n = Double(w), n >= 0, n <= 86_400 * 7 else { throw inv.usageError("--max-wait must be a number of seconds from 0 to 604800, got '\(w)'") }
            p.maxWait = n
        }
        return p
    }

    /// The local caller a remote's data is read and written as: the remote's container and
    /// environment, the database `--db` names, the device's account.
    static func caller(_ inv: Invocation, _ remote: RemoteEntry) throws -> Caller {
        var c = try inv.caller()
        c.container = remote.url.container
        c.environment = remote.url.environment
        return c
    }

    static func open(_ inv: Invocation, _ remote: RemoteEntry) throws -> WebServicesClient {
        try RemoteConnection.open(remote, env: inv.io.environment, pacing: try pacing(inv, remote.url), notice: { inv.io.writeErr("ck: \($0)\n") })
    }

    /// Progress on stderr — pages, records, bytes and rate — on a terminal, or with --progress;
    /// a line rewritten in place on a terminal, a line a page otherwise.
    static func progress(_ inv: Invocation, _ client: WebServicesClient) -> (FetchReport) -> Void {
        let live = inv.io.stderrIsTerminal()
        guard live || inv.args.has("--progress"), !inv.globals.quiet else { return { _ in } }
        let started = Date()
        return { r in
            let seconds = max(Date().timeIntervalSince(started), 0.001)
            let line = "fetched \(r.pages) page\(r.pages == 1 ? "" : "s"), \(r.records) records, \(client.bytesReceived / 1024) KiB, \(Int(Double(r.records) / seconds)) records/s"
            inv.io.writeErr(live ? "\r\u{1B}[K" + line : line + "\n")
        }
    }

    /// Ends a live progress line.
    static func endProgress(_ inv: Invocation) {
        if inv.io.stderrIsTerminal(), !inv.globals.quiet { inv.io.writeErr("\r\u{1B}[K") }
    }

    /// Runs a remote operation: a session that gave up waiting exits 10, its state saved.
    static func running(_ inv: Invocation, _ body: () throws -> Int32) throws -> Int32 {
        do { return try body() } catch let g as RemoteGaveUp {
            inv.io.writeErr("ck: \(g.error.code.rawValue): \(g.error.reason)\n")
            return ExitCode.gaveUp
        }
    }

    /// Writes to a production remote need --yes.
    static func confirmProduction(_ inv: Invocation, _ remote: RemoteEntry, _ what: String) throws {
        if remote.url.isProduction, !inv.args.has("--yes") {
            throw inv.usageError("remote '\(remote.name)' is a production environment: \(what) changes what the app's users see; add --yes to do it")
        }
    }
}
