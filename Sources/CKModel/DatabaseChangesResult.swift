/// A page of `changes/database`: the zones created, written, deleted or purged since a token,
/// each once, in the order of its latest change.
public struct DatabaseChangesResult: Sendable {
    public struct Zone: Sendable {
        public var zoneID: ZoneID
        /// Deleted (or purged) as of the returned token.
        public var deleted: Bool
        /// Purged as of the returned token (then `deleted` too): the client drops its cache
        /// of the zone.
        public var purged: Bool

        public init(zoneID: ZoneID, deleted: Bool, purged: Bool) {
            self.zoneID = zoneID
            self.deleted = deleted
            self.purged = purged
        }
    }
    /// Each zone changed, in the order of its latest change.
    public var zones: [Zone]
    public var syncToken: String
    public var moreComing: Bool

    public init(zones: [Zone], syncToken: String, moreComing: Bool) {
        self.zones = zones
        self.syncToken = syncToken
        self.moreComing = moreComing
    }
}
