import CKCore

/// `ck user discover`: other users' identities.
enum UserCommands {}
