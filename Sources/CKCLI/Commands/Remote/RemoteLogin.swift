import CKCore
import CKJSON
import CKModel
import CKRemote
import Foundation

extension RemoteCommands {
    static let login: CommandSpec = CommandSpec(synopsis: "NAME|URL [--api-token TOKEN] [--with-token | --paste] [--no-browser] [--port P]",
        summary: "Sign a user in to a remote: an API token and a web auth token",
        options: [
            OptionSpec("--api-token", value: "TOKEN", help: "the container environment's API token (CloudKit Console, Tokens & Keys) [$CLOUDKIT_API_TOKEN; default: the one stored]"),
            OptionSpec("--with-token", help: "read the web auth token from stdin (CI)"),
            OptionSpec("--paste", help: "read the web auth token from the terminal, not echoed (SSH sessions)"),
            OptionSpec("--no-browser", help: "print the sign-in URL on stderr instead of opening a browser"),
            OptionSpec("--port", value: "P", help: "the loopback port the API token's URL Redirect callback names [default: 53821]"),
            OptionSpec("--timeout", value: "SECONDS", help: "how long to wait for the sign-in [default: 300]"),
        ],
        details: """
        A user's web auth token reaches the private, shared and public databases as that user
        (a server-to-server key reaches the public one only). By default ck asks the remote for
        its sign-in URL (users/caller answers 421 with a redirectURL), listens on
        127.0.0.1:PORT for the API token's URL Redirect callback, and opens the browser there;
        the callback brings ?ckWebAuthToken= (or ckSession=), and the browser gets a page that
        holds no token. Set the API token's Sign In Callback to URL Redirect with
        http://127.0.0.1:53821/ in the CloudKit Console (Docs/remote.md). --paste and
        --with-token take a token obtained elsewhere. The token is checked with users/caller and
        stored (mode 0600) in the credentials file under the remote's URL; every answer's
        rotated token replaces it. Prints {remote, url, userRecordName, credentialsFile, secretsIn}.
        """) { inv in
        let target = try inv.positionals(min: 1, max: 1, what: "remote name or URL")[0]
        let remote: RemoteEntry
        if target.contains("://") {
            let url: RemoteURL
            do { url = try RemoteURL(target) } catch let e as CloudKitError { throw inv.usageError(e.reason) }
            remote = RemoteEntry(name: url.container, url: url, added: 0)
        } else { remote = try inv.api.remote(named: target) }
        let env = inv.io.environment
        let store = try CredentialStore.standard(env: env)
        let stored = try store.credentials(for: remote.url)
        guard let apiToken = inv.args.value("--api-token") ?? env["CLOUDKIT_API_TOKEN"].flatMap({ $0.isEmpty ? nil : $0 }) ?? stored.apiToken else {
            throw inv.usageError("an API token is needed: --api-token TOKEN (CloudKit Console, Tokens & Keys), or $CLOUDKIT_API_TOKEN")
        }
        let modes = ["--with-token", "--paste"].filter { inv.args.has($0) }
        if modes.count > 1 { throw inv.usageError("--with-token and --paste are two ways to give the token: choose one") }
        let http = try RemoteConnection.httpClient(remote.url, env: env)
        defer { http.close() }
        let signedOut = WebServicesClient(remote: remote, credentials: Credentials(apiToken: apiToken), store: nil, http: http,
                                          pacing: PacingPolicy(rate: nil, maxWait: 30), notice: { inv.io.writeErr("ck: \($0)\n") })
        var token: String
        if inv.args.has("--with-token") {
            token = String(decoding: try inv.readStdin(what: "web auth token"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } else if inv.args.has("--paste") {
            guard let t = Terminal.readSecret(prompt: "Web auth token for \(remote.url): ") else {
                throw inv.usageError("--paste needs a terminal (/dev/tty); use --with-token to read stdin")
            }
            token = t.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            token = try loopbackSignIn(inv, signedOut)
        }
        if token.isEmpty { throw inv.usageError("the web auth token is empty") }
        // Checked before it is stored: users/caller answers who it signs in.
        let check = WebServicesClient(remote: remote, credentials: Credentials(apiToken: apiToken, webAuthToken: token), store: nil, http: http,
                                      pacing: PacingPolicy(rate: nil, maxWait: 30), notice: { inv.io.writeErr("ck: \($0)\n") })
        let me = try check.call(.public, "users/caller")
        let user = me["userRecordName"]?.stringValue ?? me["users"]?.arrayValue?.first?["userRecordName"]?.stringValue
        // A callback on loopback is open to any local page or process while ck waits: a session
        // that is not the user's own would send their pushes elsewhere. Said, never silent.
        if let before = stored.userRecordName, let now = user, before != now {
            inv.io.writeErr("ck: warning: this sign-in is user \(now), not \(before) as before; if you did not mean to switch users, sign in again\n")
        }
        try store.update(remote.url) { c in
            c.apiToken = apiToken
            c.webAuthToken = check.credentials.webAuthToken
            c.userRecordName = user
        }
        var doc: [String: JSONValue] = ["remote": .string(remote.name), "url": .string(remote.url.description), "credentialsFile": .string(store.directory + "/credentials.json")]
        if let u = user { doc["userRecordName"] = .string(u) }
        // Where the tokens went: the macOS Keychain, or the file beside the rest.
        doc["secretsIn"] = .string(store.keepsSecretsInKeychain ? "keychain" : "file")
        inv.print(DocumentBody(doc))
        return ExitCode.success
    }

    /// Asks for the sign-in URL, listens for the callback, opens the browser, waits.
    static func loopbackSignIn(_ inv: Invocation, _ client: WebServicesClient) throws -> String {
        var redirect: String?
        do {
            _ = try client.call(.public, "users/caller")
            throw CloudKitError(.badRequest, "remote '\(client.remote.name)' answered users/caller without a sign-in: the API token needs no user here")
        } catch let e as CloudKitError where e.code == .authenticationRequired {
            redirect = client.redirectURL
        }
        guard let url = redirect else {
            throw CloudKitError(.authenticationRequired, "remote '\(client.remote.name)' asked for a sign-in but gave no redirectURL to sign in at")
        }
        let port = try inv.positiveInt("--port", max: 65535) ?? 53821
        let timeout = Double(try inv.positiveInt("--timeout", max: 3600) ?? 300)
        let callback = SignInCallback()
        let bound = try callback.start(port: UInt16(port))
        defer { callback.stop() }
        if inv.args.has("--no-browser") || !Browser.open(url) {
            inv.io.writeErr("ck: open this address to sign in (waiting on http://127.0.0.1:\(bound)/ for the callback):\n\(url)\n")
        } else {
            inv.io.writeErr("ck: signing in in the browser (waiting on http://127.0.0.1:\(bound)/ for the callback)\n")
        }
        guard let token = callback.wait(timeout: timeout) else {
            throw CloudKitError(.authenticationRequired, "no sign-in arrived at http://127.0.0.1:\(bound)/ within \(Int(timeout)) s; check that the API token's Sign In Callback is URL Redirect to that address, or use --paste")
        }
        return token
    }
}
