import CKModel

/// The participant's shared database as the store's core consults it, at the few points where
/// it differs from a database of one's own: its zones are other users' zones shared with the
/// caller, what the caller reads in them is what the shares let them see, and a write goes into
/// the owner's zone. SharedDatabase (Sharing/) is the view, wrapping the participant's
/// Database; it is declared here so that the core does not depend on sharing.
package protocol SharedDatabaseView: AnyObject {
    /// A zone of the shared database: present when it is shared with the caller.
    func zonePresence(_ name: String) throws -> ZoneStore.Presence
    /// The user who shared the zone of that name, if one did.
    func zoneOwner(_ name: String) -> String?
    /// The zones shared with the caller.
    func zones() throws -> [ZoneStore]
    /// Whether the caller may see a record of a shared zone.
    func canRead(_ r: Record) throws -> Bool
    /// The owner's database a write to a shared zone goes into, opened for the participant.
    func ownerDatabase(forZone name: String) throws -> Database
    /// A page of a shared zone's latest changes as the caller may see them.
    func zoneChanges(_ entries: [HistoryEntry], zone z: ZoneStore, snapshot snap: ZoneSnapshot, start: Int64, origin: Int64?,
                     limit: Int) throws -> (changes: [ZoneChangesResult.RecordChange], end: Int64?)
    /// `changes/database` of the shared database.
    func databaseChanges(since: String?, limit: Int) throws -> DatabaseChangesResult
    /// How far the device's database bookmark is behind (`ck status`).
    func databaseBookmarkLag() throws -> BookmarkLag
    /// Where the participant's bookmarks of a shared zone live.
    func bookmarkDirectory(_ zone: String) -> String
    /// Whether the zone is shared with the caller (so its bookmark may be saved).
    func bookmarkable(_ zone: String) throws -> Bool
}
