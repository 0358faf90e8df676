import CKCore

/// `ck console`: `ck serve` on a free port with the console opened in a browser
/// (Docs/console.md).
enum ConsoleCommand {
    static let command: CommandSpec = CommandSpec(synopsis: "[--port P] [--no-browser] [--host H] [--allow-origin ORIGIN]... [--ephemeral [--seed FILE]]",
        summary: "Serve this store and open its console in a browser: records, history, live requests, schema",
        options: [
            OptionSpec("--port", value: "P", help: "the port [default: 0, any free one]"),
            OptionSpec("--no-browser", help: "print the console's URL (in the JSON line) instead of opening a browser"),
            OptionSpec("--host", value: "H", help: "the loopback address to listen on [default: 127.0.0.1]; the console is served on loopback only"),
            OptionSpec("--allow-origin", value: "ORIGIN", help: "as for 'ck serve': a web page origin whose scripts may call Web Services (CORS); the console itself answers only its own pages"),
            OptionSpec("--ephemeral", help: "as for 'ck serve': a fresh temporary data directory with a signed-in test user, removed on exit"),
            OptionSpec("--seed", value: "FILE", help: "with --ephemeral: load the records of a 'ck export' before serving"),
        ],
        details: """
        Starts 'ck serve' on this data directory and opens the console at /console/ in the
        browser $BROWSER names, else the system's default (xdg-open, open). The JSON line on
        stdout is ck serve's, whose "console" holds the URL with the console's key after
        #key=: a random token made at start, which the browser never sends to a server; the
        page keeps it for this server's origin and sends it with each call. Without it, or
        from a page of another origin or a foreign Host, the console answers 403. Stops as
        ck serve does (SIGINT, SIGTERM, SIGHUP).
        """) { inv in try ServeCommand.run(inv, defaultPort: 0, browser: true) }
}
