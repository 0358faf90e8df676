import CKJSON

/// A page of `changes/zone`: what changed in a custom zone since a token, read from the zone's
/// history, so the cost follows the number of changes, not the size of the zone.
public struct ZoneChangesResult: Sendable {
    public var zoneID: ZoneID
    /// Latest state of each changed record, or a tombstone.
    public var changes: [RecordChange]
    public var syncToken: String
    public var moreComing: Bool

    public enum RecordChange: Sendable {
        case record(Record)
        case deleted(String)
    }

    public init(zoneID: ZoneID, changes: [RecordChange], syncToken: String, moreComing: Bool) {
        self.zoneID = zoneID
        self.changes = changes
        self.syncToken = syncToken
        self.moreComing = moreComing
    }
}

/// A page of `records/query`: the matches in order (the sorts, then recordName), and the
/// continuation marker naming the last key returned when more follow.
public struct QueryResult: Sendable {
    public var records: [Record]
    public var continuationMarker: String?
    /// For pages read one after another in one process: the last key returned, where the next
    /// page starts, when more follow (no marker is made).
    package var nextKey: [JSONValue]?

    public init(records: [Record], continuationMarker: String?, nextKey: [JSONValue]? = nil) {
        self.records = records
        self.continuationMarker = continuationMarker
        self.nextKey = nextKey
    }
}
