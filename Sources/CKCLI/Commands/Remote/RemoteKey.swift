import CKCore
import CKJSON
import CKModel
import CKRemote
import Foundation

extension RemoteCommands {
    static let keyCreate: CommandSpec = CommandSpec(synopsis: "NAME|URL", summary: "Make a server-to-server key pair for a remote's public database",
        details: """
        Generates a P-256 key pair, writes the private key (mode 0600) under the credentials
        directory's keys/, files it under the remote's URL, and prints {privateKeyPath,
        publicKey, steps}: register the public key in the CloudKit Console (the container, Tokens
        & Keys, Server-to-Server Keys, +, paste it), then give ck the key ID it shows:
        ck remote key set NAME --key-id ID. A server-to-server key reaches the public database
        only, as the developer who registered it; it never expires.
        """) { inv in
        let remote = try keyRemote(inv)
        let store = try CredentialStore.standard(env: inv.io.environment)
        let (path, publicKey) = try store.createKey(for: remote.url)
        inv.print(DocumentBody([
            "privateKeyPath": .string(path), "publicKey": .string(publicKey),
            "steps": .array([
                .string("Open the CloudKit Console, container \(remote.url.container), Tokens & Keys, Server-to-Server Keys, and add a key."),
                .string("Paste publicKey (the whole PEM, BEGIN and END lines included) and save."),
                .string("Give ck the key ID the Console shows: ck remote key set \(remote.name) --key-id KEY_ID"),
            ]),
        ]))
        return ExitCode.success
    }

    static let keySet: CommandSpec = CommandSpec(synopsis: "NAME|URL --key-id ID [--private-key FILE]", summary: "Use a registered server-to-server key with a remote",
        options: [
            OptionSpec("--key-id", value: "ID", help: "the key ID the CloudKit Console shows for the registered public key"),
            OptionSpec("--private-key", value: "FILE", help: "the private key's PEM file (openssl ecparam -name prime256v1 -genkey -noout) [default: the one 'ck remote key create' made]"),
        ],
        details: """
        Files the key under the remote's URL in the credentials file: requests to the public
        database are then signed with it (unless a user is signed in with 'ck remote login').
        The private key is read now, to check it is a P-256 key; ck keeps its path, never a copy.
        $CLOUDKIT_KEY_ID and $CLOUDKIT_PRIVATE_KEY_PATH override what is filed.
        """) { inv in
        let remote = try keyRemote(inv)
        guard let id = inv.args.value("--key-id"), !id.isEmpty else { throw inv.usageError("--key-id ID is needed (the Console shows it for the registered key)") }
        guard id.utf8.count <= 256, id.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else { throw inv.usageError("--key-id '\(id)' is not a key ID (printable ASCII, no spaces)") }
        let store = try CredentialStore.standard(env: inv.io.environment)
        var path = inv.args.value("--private-key")
        if let p = path {
            let absolute = p.hasPrefix("/") ? p : inv.io.currentDirectory + "/" + p
            if let why = CredentialStore.checkKey(at: absolute) { throw inv.usageError(why == "cannot read it" ? "cannot read the private key '\(p)'" : "'\(p)': \(why)") }
            path = absolute
        } else if try store.credentials(for: remote.url).privateKeyPath == nil {
            throw inv.usageError("no private key is filed for \(remote.url): --private-key FILE, or ck remote key create \(remote.name)")
        }
        let c = try store.update(remote.url) { c in
            c.keyID = id
            if let p = path { c.privateKeyPath = p }
        }
        inv.print(DocumentBody(["remote": .string(remote.name), "url": .string(remote.url.description), "credentials": c.shown]))
        return ExitCode.success
    }

    static func keyRemote(_ inv: Invocation) throws -> RemoteEntry {
        let target = try inv.positionals(min: 1, max: 1, what: "remote name or URL")[0]
        if target.contains("://") {
            do { let url = try RemoteURL(target); return RemoteEntry(name: url.container, url: url, added: 0) } catch let e as CloudKitError { throw inv.usageError(e.reason) }
        }
        return try inv.api.remote(named: target)
    }
}
