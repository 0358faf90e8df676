import CKCore
import CKJSON
import CKModel
import CKServe
import Foundation
import Glibc

/// `ck serve`: CloudKit Web Services over HTTP on this data directory (Docs/serve.md).
enum ServeCommand {
    static let command: CommandSpec = CommandSpec(synopsis: "[--host H] [--port P] [--allow-origin ORIGIN]... [--strict-token-rotation] [--snippet] [--ephemeral [--seed FILE]]",
        summary: "Answer CloudKit Web Services over HTTP, so CloudKit JS and server scripts run against this store",
        options: [
            OptionSpec("--host", value: "H", help: "the address to listen on [default: 127.0.0.1]; any other than loopback prints a warning"),
            OptionSpec("--port", value: "P", help: "the port [default: 8484]; 0 takes a free one"),
            OptionSpec("--allow-origin", value: "ORIGIN", help: "a web page origin whose scripts may read the answers (CORS), e.g. http://localhost:3000 or http://localhost:*; repeatable [default: http://localhost:* and http://127.0.0.1:*]"),
            OptionSpec("--strict-token-rotation", help: "refuse a web auth token 2 minutes after a newer one replaced it (Apple's documented single use) [default: a replaced token works until it expires, as live CloudKit does]"),
            OptionSpec("--snippet", help: "print on stderr the HTML that points a page's CloudKit JS at this server, with an API token of the container filled in (made if it has none)"),
            OptionSpec("--ephemeral", help: "serve a fresh temporary data directory with a signed-in test user, an API token and a web auth token (printed in the JSON line), removed on exit"),
            OptionSpec("--seed", value: "FILE", help: "with --ephemeral: load the records of a 'ck export' (into --db) before serving"),
        ],
        details: """
        Answers the paths of api.apple-cloudkit.com (/database/1/CONTAINER/ENVIRONMENT/DATABASE/
        ENDPOINT, and /device/1/CONTAINER/ENVIRONMENT/tokens/create or register) as it does,
        over the same API as the commands, with the same locks: the CLI and the server
        work on one data directory at once. Every request needs a ckAPIToken ('ck api-token
        create') or a server-to-server signature ('ck server-key add'); user-bound requests a
        ckWebAuthToken ('ck account web-auth-token', or the sign-in page an
        AUTHENTICATION_REQUIRED answer's redirectURL names).
        When listening, prints one JSON line on stdout: {"console", "dataDirectory", "pid",
        "url"} ("console": the browser console's URL with its key, new each start: 'ck
        console', Docs/console.md; none when --host is not a loopback address); then
        one line per request on stderr (method, path without its tokens, status, milliseconds;
        for a refusal its serverErrorCode and reason, for a page CORS refuses the --allow-origin
        that would allow it).
        A page loads URL/ck/cloudkit-config.js after cloudkit.js, and CloudKit JS talks to this
        server instead of Apple's; --snippet prints the lines to paste.
        --ephemeral starts on a new temporary data directory: the test user test@example.com
        is signed in, and the JSON line adds "apiToken", "ckWebAuthToken" (two weeks),
        "userRecordName", "containerIdentifier" and "environment" (and "seeded", the records
        --seed loaded); the directory is removed when the server stops.
        SIGINT, SIGTERM or SIGHUP: stops accepting, finishes the requests in flight, exits 0. A
        port in use is exit 4 (EXISTS), one the system refuses this user exit 5 (ACCESS_DENIED).
        """) { inv in try run(inv, defaultPort: 8484, browser: false) }

    /// A server holds a descriptor per connection (256 at most) and the shard directories of
    /// the commits it has yet to publish (UnpublishedCommits): its soft limit on open files goes
    /// up to the hard limit (at most 65,536), as servers' do — the common soft limit, 1,024, is
    /// a shell's.
    static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = min(limit.rlim_max, 65_536)
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = wanted
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// `ck serve`, and `ck console` (another default port, and the console opened in a
    /// browser unless `--no-browser`).
    static func run(_ inv: Invocation, defaultPort: UInt16, browser: Bool) throws -> Int32 {
        _ = try inv.positionals(max: 0, what: "")
        raiseOpenFileLimit()
        let host = inv.args.value("--host") ?? "127.0.0.1"
        guard !host.isEmpty, host.utf8.count <= 255, !host.contains("/") else { throw inv.usageError("--host must be an address, not '\(host)'") }
        var port = defaultPort
        if let p = inv.args.value("--port") {
            guard let n = UInt16(p) else { throw inv.usageError("--port must be a number from 0 to 65535, not '\(p)'") }
            port = n
        }
        let origins = inv.args.values("--allow-origin")
        for o in origins where !(o == "*" || o.hasPrefix("http://") || o.hasPrefix("https://")) || o.contains("\r") || o.contains("\n") {
            throw inv.usageError("--allow-origin takes an origin such as http://localhost:3000 (or http://localhost:*), not '\(o)'")
        }
        let ephemeral = inv.args.has("--ephemeral")
        let seedFile = inv.args.value("--seed")
        if seedFile != nil && !ephemeral { throw inv.usageError("--seed loads records into an --ephemeral server's new data directory; give --ephemeral too (or 'ck import FILE' into this one)") }
        if !WebServicesServer.isLoopback(host) {
            // ck console is the console: it has none off loopback.
            if browser { throw inv.usageError("ck console serves on a loopback address only (127.0.0.1, ::1, localhost), not --host \(host): over a network its key would travel in clear") }
            inv.warn("--host \(host) is not loopback: other machines can reach this server, and every API token and session of the data directory with it; the console is off")
        }
        let container = try inv.container()
        let environment = inv.globals.environment
        // The seed is read before anything is made: a missing file leaves nothing behind.
        let seed = try seedFile.map { f in try CloudKitAPI.readUserFile(f.hasPrefix("/") ? f : inv.io.currentDirectory + "/" + f, shownAs: f) }
        var announcement: [String: JSONValue] = [:]
        let dataDirectory: String
        var temporary: EphemeralDirectory?
        if ephemeral {
            let made = try EphemeralDirectory(in: inv.io.environment["TMPDIR"])
            temporary = made
            dataDirectory = made.path
            do {
                let setup = try CloudKitAPI(dataDirectory: made.path).prepareEphemeral(
                    EphemeralSetupRequest(container: container, environment: environment, scope: inv.globals.scope, seed: seed))
                announcement = setup.document
            } catch {
                made.remove()
                throw error
            }
        } else {
            dataDirectory = inv.api.dataDirectory
        }
        defer { temporary?.remove() }
        let io = inv.io
        // From many connection threads at once: gathered, and written in whole lines (ServeLog).
        let rotation: WebTokenRotation = inv.args.has("--strict-token-rotation") ? .strict : .live
        let log = ServeLog()
        let server = WebServicesServer(dataDirectory: dataDirectory, host: host, port: port, allowedOrigins: origins, webTokenRotation: rotation) { line in
            log.line(line)
        }
        defer { log.flush() }
        let url: String
        do { url = try server.start() } catch let e as CloudKitError { throw e } catch {
            throw CloudKitError(.internalError, "cannot listen on \(host):\(port): \(error)")
        }
        // Before the line is out: a script may signal as soon as it has read it.
        ServeSignals.stop(on: [SIGINT, SIGTERM, SIGHUP]) { server.stop() }
        if inv.args.has("--snippet") {
            let token = try announcement["apiToken"]?.stringValue
                ?? CloudKitAPI(dataDirectory: dataDirectory).pageAPIToken(container: container, environment: environment)
            inv.io.writeErr(CloudKitConfigScript.snippet(serverURL: url, container: container, environment: environment, apiToken: token))
        }
        announcement["url"] = .string(url)
        announcement["pid"] = .int(Int64(getpid()))
        announcement["dataDirectory"] = .string(dataDirectory)
        if let console = server.consoleURL { announcement["console"] = .string(console) }
        // One line, whatever --format says: a script reads it with `head -1`.
        io.writeOut(JSONWriter.compact(.object(announcement)) + "\n")
        _ = io.flush()
        var launcher: EphemeralDirectory?
        if browser, let console = server.consoleURL, !inv.args.has("--no-browser") {
            do {
                // The browser is given a file that leads on to the URL, not the URL: a program's
                // arguments are public on the machine, the file is the user's alone.
                let dir = try EphemeralDirectory(in: io.environment["TMPDIR"], prefix: "ck-console-")
                launcher = dir
                let page = dir.path + "/console.html"
                guard FileManager.default.createFile(atPath: page, contents: Data(ConsolePage.launcher(console).utf8), attributes: [.posixPermissions: 0o600]) else {
                    throw CloudKitError.internalError("cannot write \(page)")
                }
                if let failure = BrowserOpener.open(page, environment: io.environment) {
                    inv.warn(failure + "; open the \"console\" URL of the line above in a browser")
                } else {
                    // A sandboxed browser (a snap's) has a /tmp of its own and finds no file.
                    if !inv.globals.quiet {
                        io.writeErr("ck: opened the console in a browser through \(page); if it shows no console, open the \"console\" URL of the line above\n")
                    }
                }
            } catch {
                inv.warn("cannot open a browser (\(error)); open the \"console\" URL of the line above in a browser")
            }
        }
        server.waitUntilStopped()
        launcher?.remove()
        return ExitCode.success
    }
}

/// A directory made new (mode 0700) under $TMPDIR, removed with everything in it when the
/// server stops: an `--ephemeral` server's data directory, `ck console`'s launch page.
final class EphemeralDirectory {
    let path: String

    init(in temporaryDirectory: String?, prefix: String = "ck-ephemeral-") throws {
        let base = temporaryDirectory.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast()) + Array((prefix + "XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CloudKitError.internalError("cannot make a temporary data directory in \(base): \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Signals that stop the server. The handler is installed at once, with `sigaction` (a
/// Dispatch signal source registers later, on another thread: a signal sent as soon as the
/// server announced itself could fall in between and be lost); it only writes a byte to a
/// pipe, and a thread of its own reads it and stops the server.
enum ServeSignals {
    /// The pipe's write end, for the handler (set before any handler is installed).
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    static func stop(on signals: [Int32], _ action: @escaping @Sendable () -> Void) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }
        writeEnd = fds[1]
        for s in signals {
            var sa = sigaction()
            sa.__sigaction_handler.sa_handler = { _ in
                var b: UInt8 = 1
                _ = write(ServeSignals.writeEnd, &b, 1)
            }
            sigemptyset(&sa.sa_mask)
            sa.sa_flags = SA_RESTART
            sigaction(s, &sa, nil)
        }
        let reader = fds[0]
        Thread.detachNewThread {
            var b: UInt8 = 0
            while read(reader, &b, 1) < 0, errno == EINTR {}
            action()
        }
    }
}
