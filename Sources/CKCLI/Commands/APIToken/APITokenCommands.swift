import CKCore

/// `ck api-token create|list|delete`: the API tokens of the container and environment (`--container`,
/// `--env`), as the CloudKit Console makes them; every request to `ck serve` carries one
/// (Docs/serve.md "Tokens, keys and sign-in").
enum APITokenCommands {}
