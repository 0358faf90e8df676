import CKCore

/// `ck tag create|list|delete`: named points across every zone of the caller's database, as
/// git tags name commits (Docs/history.md). Tags live in their database: the public one, or
/// the user's own private one.
enum TagCommands {}
