import CKCore

/// `ck token expire`: a zone's change tokens expired on demand (Docs/faults.md).
enum TokenCommands {}
