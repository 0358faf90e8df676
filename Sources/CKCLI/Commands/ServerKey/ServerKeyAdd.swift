import CKCore
import CKModel

extension ServerKeyCommands {
    static let add: CommandSpec = CommandSpec(synopsis: "KEY-ID --public-key FILE.pem",
        summary: "Register a P-256 public key whose private half signs requests to ck serve",
        options: [OptionSpec("--public-key", value: "FILE", help: "the public key in PEM, as 'openssl ec -in KEY.pem -pubout' writes it ('-' for stdin)")],
        details: """
        Prints {"keyID", "containerIdentifier", "environment", "created", "publicKey",
        "userRecordName", "appleID"}. Make a key pair with 'openssl ecparam -name prime256v1
        -genkey -noout -out key.pem' and register its public half; a script then signs each
        request with the private half and sends KEY-ID in X-Apple-CloudKit-Request-KeyID.
        The key acts as the user who registers it (the device's account, or --as APPLE-ID), as
        Apple's keys act as the developer who made them: in the public database, users/caller
        answers that user, and saves are theirs. AUTHENTICATION_REQUIRED (exit 5) with no
        available account; EXISTS (exit 4) when KEY-ID is taken; BAD_REQUEST for a file that is
        not a P-256 public key (a private key, another curve, RSA).
        """) { inv in
        let keyID = try inv.positionals(min: 1, max: 1, what: "key ID")[0]
        guard let file = inv.args.value("--public-key") else { throw inv.usageError("missing --public-key FILE.pem") }
        let bytes: [UInt8]
        if file == "-" { bytes = try inv.readStdin(what: "a PEM public key") } else {
            bytes = try CloudKitAPI.readUserFile(file.hasPrefix("/") ? file : inv.io.currentDirectory + "/" + file, shownAs: file)
        }
        guard let pem = String(validating: bytes, as: UTF8.self) else { throw CloudKitError.badRequest("'\(Names.describe(file))' is not text: a PEM public key is") }
        inv.print(try inv.api.addServerKey(keyID: keyID, publicKeyPEM: pem, container: try inv.container(), environment: inv.globals.environment, as: try inv.caller(.public)))
        return ExitCode.success
    }
}
