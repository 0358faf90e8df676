/// What the user of a failed request can do next, carried by the error as data. The core
/// never words it as a command: each front end does (the CLI as a `ck …` line with the failing
/// command's own `--zone`, `--db` and `--as`), so a hint always addresses what failed.
public enum NextStep: Equatable, Sendable {
    /// CONFLICT: fetch the record again and retry with its current tag (or overwrite).
    case retryWithTag(recordName: String, tag: String)
    /// EXISTS on a create: update it with its current tag (or overwrite).
    case updateInstead(recordName: String, tag: String)
    /// ZONE_NOT_FOUND in the private database: create the zone.
    case createZone(String)
    /// CHANGE_TOKEN_EXPIRED on a change feed: fetch again from the start and keep the new token.
    case refetchFromStart
    /// A point older than the retained history: see what the history retains.
    case readRetainedHistory
    /// AUTHENTICATION_REQUIRED: check the account status; sign in.
    case signIn
    /// BAD_REQUEST in production about a type or field it does not know: deploy the schema.
    case deploySchema
    /// A query the schema has no index for: add the index to the record type (in development;
    /// production gets it by a deploy). `ckdbLine` is the field's line with it.
    case addIndex(recordType: String, field: String, index: String, ckdbLine: String)
    /// A query of a record type the schema does not have: define it (development), deploy it
    /// (production).
    case defineRecordType(String)
    /// LIMIT_EXCEEDED for too many operations: split the request.
    case splitRequest(maxOperations: Int)
    /// Damage in the data directory that `fsck` repairs.
    case repairDataDirectory
    /// A participant's way out of a shared zone (which only its owner deletes): leave its share.
    case leaveShare
    /// A user who never signed in on this device: sign them in once (then they can be named).
    case signInUser(appleID: String)
    /// A change feed asked of the default zone, which has none: keep the records in a custom zone.
    case createCustomZone
    /// ZONE_NOT_FOUND in the public database, which has only the default zone.
    case onlyDefaultZone
    /// ZONE_NOT_FOUND in the shared database: its zones appear when a share is accepted.
    case acceptShare
    /// A revert that a later change conflicts with: write a whole version back instead.
    case restoreWholeVersion(recordName: String)
    /// A share record in a restore: shares are made again with a share operation.
    case shareAgain(recordName: String)
    /// An unknown tag: list the tags there are.
    case listTags
    /// A tag name that is taken: delete that tag first.
    case deleteTagFirst(String)
    /// A damaged file of armed faults: clearing them is the repair.
    case clearFaults
    /// An unknown fault ID: list the armed faults.
    case listFaults
    /// A data directory ck will not take on its own (found, not given): name it explicitly.
    case nameDataDirectory
}
