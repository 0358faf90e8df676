import CKCore

/// `ck server-key add|list|delete`: the server-to-server keys of the container and environment,
/// as the CloudKit Console registers them (Docs/serve.md "Tokens, keys and sign-in").
enum ServerKeyCommands {}
