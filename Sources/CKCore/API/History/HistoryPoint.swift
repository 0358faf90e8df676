/// `--at REF` and the other points requests name in a zone's history (HistoryReference).
extension RequestContext {
    /// The zone a request reads: the one it names, else the one its point of history names
    /// (`ZONE@SEQ`, a change token), else the default zone.
    func zoneName(_ named: String?, at ref: HistoryReference?) throws -> String {
        if let n = named { return n }
        if let r = ref, let z = try db.zoneName(of: r) { return z }
        return ZoneID.defaultZoneName
    }

    /// The sequence number `ref` names in zone `z` (nil without a reference).
    /// `emptyBeforeHistory`: a tag or time before the zone existed is its empty start, rather
    /// than an error (a point in every zone of a database).
    func point(_ ref: HistoryReference?, in z: ZoneStore, emptyBeforeHistory: Bool = false) throws -> Int64? {
        try ref.map { try db.resolve($0, in: z, emptyBeforeHistory: emptyBeforeHistory) }
    }
}
