import CKCore
import CKServe
import Foundation

/// `ck serve`: CloudKit Web Services over HTTP on this data directory (Docs/serve.md).
enum ServeCommand {
    static let command: Command = Command(["serve"], synopsis: "[--host H] [--port P] [--allow-origin ORIGIN]...",
        summary: "Answer CloudKit Web Services over HTTP, so CloudKit JS and server scripts run against this store",
        options: [
            OptionSpec("--host", value: "H", help: "the address to listen on [default: 127.0.0.1]; any other than loopback prints a warning"),
            OptionSpec("--port", value: "P", help: "the port [default: 8484]; 0 takes a free one"),
            OptionSpec("--allow-origin", value: "ORIGIN", help: "a web page origin whose scripts may read the answers (CORS), e.g. http://localhost:3000 or http://localhost:*; repeatable [default: http://localhost:* and http://127.0.0.1:*]"),
        ],
        details: """
        Answers the paths of api.apple-cloudkit.com (/database/1/CONTAINER/ENVIRONMENT/DATABASE/
        ENDPOINT, and /device/1/CONTAINER/ENVIRONMENT/tokens/create or register) as it does,
        over the same API as the commands, with the same locks: the CLI and the server
        work on one data directory at once. Every request needs a ckAPIToken ('ck api-token
        create') or a server-to-server signature ('ck server-key add'); user-bound requests a
        ckWebAuthToken ('ck account web-auth-token', or the sign-in page an
        AUTHENTICATION_REQUIRED answer's redirectURL names).
        When listening, prints one JSON line on stdout: {"dataDirectory", "pid", "url"}; then
        one line per request on stderr (method, path without its tokens, status, milliseconds;
        for a refusal its serverErrorCode and reason, for a page CORS refuses the --allow-origin
        that would allow it).
        SIGINT or SIGTERM: stops accepting, finishes the requests in flight, exits 0. A port
        in use is exit 4 (EXISTS), one the system refuses this user exit 5 (ACCESS_DENIED).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let host = inv.args.value("--host") ?? "127.0.0.1"
        guard !host.isEmpty, host.utf8.count <= 255, !host.contains("/") else { throw inv.usageError("--host must be an address, not '\(host)'") }
        var port: UInt16 = 8484
        if let p = inv.args.value("--port") {
            guard let n = UInt16(p) else { throw inv.usageError("--port must be a number from 0 to 65535, not '\(p)'") }
            port = n
        }
        let origins = inv.args.values("--allow-origin")
        for o in origins where !(o == "*" || o.hasPrefix("http://") || o.hasPrefix("https://")) || o.contains("\r") || o.contains("\n") {
            throw inv.usageError("--allow-origin takes an origin such as http://localhost:3000 (or http://localhost:*), not '\(o)'")
        }
        if !WebServicesServer.isLoopback(host) {
            inv.warn("--host \(host) is not loopback: other machines can reach this server, and every API token and session of the data directory with it")
        }
        let io = inv.io
        // From many connection threads at once: one write(2) a line, which a pipe keeps whole.
        let server = WebServicesServer(dataDirectory: inv.api.dataDirectory, host: host, port: port, allowedOrigins: origins) { line in
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
        let url: String
        do { url = try server.start() } catch let e as CloudKitError { throw e } catch let e as HTTPServerError {
            // "cannot listen on 127.0.0.1:8484: Address already in use": exit 4, as for anything
            // that exists already; a port the system keeps from this user: exit 5.
            if e.isAddressInUse {
                throw CloudKitError(.exists, e.message + " (another server listens there: is ck serve running already?); choose another port with --port, or --port 0 for any free one")
            }
            if e.isPermissionDenied { throw CloudKitError(.accessDenied, e.message + " (ports below 1024 need privileges); choose another with --port") }
            throw CloudKitError(.internalError, e.message)
        } catch {
            throw CloudKitError(.internalError, "cannot listen on \(host):\(port): \(error)")
        }
        // Before the line is out: a script may signal as soon as it has read it.
        ServeSignals.stop(on: [SIGINT, SIGTERM]) { server.stop() }
        // One line, whatever --format says: a script reads it with `head -1`.
        io.writeOut(JSONWriter.compact(["url": .string(url), "pid": .int(Int64(getpid())), "dataDirectory": .string(inv.api.dataDirectory)]) + "\n")
        _ = io.flush()
        server.waitUntilStopped()
        return ExitCode.success
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
