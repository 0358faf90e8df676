import CKCore
import CKModel

extension RemoteCommands {
    static let add: CommandSpec = CommandSpec(synopsis: "NAME URL", summary: "Name a CloudKit Web Services container and environment as a remote",
        details: """
        URL is a Web Services prefix with its container and environment,
        https://api.apple-cloudkit.com/database/1/CONTAINER/ENV (ENV: development or
        production), or http://127.0.0.1:8484/database/1/CONTAINER/ENV for a 'ck serve'. The
        database is chosen per command (--db), never by the remote. Prints the remote as
        'ck remote show' does; a production remote is marked "production": true, and every
        write to it needs --yes. Credentials: 'ck remote login NAME' or 'ck remote key set NAME'.
        EXISTS (exit 4) when the name is taken.
        """) { inv in
        let p = try inv.positionals(min: 2, max: 2, what: "remote name and URL")
        let url: RemoteURL
        do { url = try RemoteURL(p[1]) } catch let e as CloudKitError { throw inv.usageError(e.reason) }
        do { try inv.api.addRemote(p[0], url: url) } catch let e as CloudKitError where e.code == .badRequest { throw inv.usageError(e.reason) }
        inv.print(DocumentBody(try inv.api.remote(named: p[0]).json.objectValue ?? [:]))
        return ExitCode.success
    }
}
