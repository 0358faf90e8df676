import CKModel

/// One share per record (CKError.alreadyShared): a record already has a share, or its parent
/// chain reaches a share's root, or one of its descendants is a share's root. These checks
/// find shares below a record, which the `parent` chain (pointing up) does not show: from each
/// share of the zone (few) up its root's chain, never by scanning the zone's records.
extension RecordWriter {
    /// The names of the zone's share records: the registry's, and those made earlier in this
    /// request (the registry learns of them at commit).
    func shareRecordNames(in tx: Transaction) throws -> [String] {
        var names = try ShareRegistry(zone: zone).shareNames()
        var level: Transaction? = tx
        while let t = level {
            for case let (_, r?) in t.records where r.recordType == ShareInfo.recordType && !names.contains(where: { $0.sameBytes(r.recordName) }) {
                names.append(r.recordName)
            }
            level = t.parent
        }
        return names.sorted { NameKey($0) < NameKey($1) }
    }

    /// A hierarchy share whose root lies below record `name` (the root's parent chain passes
    /// through it); nil when there is none.
    func shareBelow(_ name: String, in tx: Transaction) throws -> (share: String, root: String)? {
        let key = NameKey(name)
        for n in try shareRecordNames(in: tx) {
            guard let sr = try tx.record(n), let s = try ShareState(sr), let rootName = s.rootRecordName, NameKey(rootName) != key,
                  let root = try tx.record(rootName), root.share.map({ NameKey($0) }) == NameKey(n) else { continue }
            var seen: Set<NameKey> = [NameKey(rootName)]
            var up = root.parent
            while let p = up, seen.insert(NameKey(p)).inserted, seen.count <= 100_000 {
                if NameKey(p) == key { return (n, rootName) }
                up = try tx.record(p)?.parent
            }
        }
        return nil
    }

    /// ALREADY_SHARED when sharing `root` would put a record in two shares: one of its
    /// descendants is the root of another share (its ancestors are checked by the caller).
    func refuseSharedDescendants(of root: String, in tx: Transaction) throws {
        guard let below = try shareBelow(root, in: tx) else { return }
        throw CloudKitError(.alreadyShared, "record '\(Names.describe(root))' has a descendant '\(Names.describe(below.root))' that is the root of share '\(Names.describe(below.share))'; a record can be in one share only", recordName: root, zoneID: zone.zoneID)
    }

    /// ALREADY_SHARED when a write moves a record (and what lies below it) under a shared
    /// record while it is the root of another share, or has one below it: CloudKit keeps every
    /// record in one share at most.
    /// `e` nil: a record made now, which records naming it as their parent may already lie under.
    func refuseNestedShare(_ op: RecordOperation, name: String, existing e: Record?, in tx: Transaction) throws {
        guard let p = op.parent, e?.parent.map({ NameKey($0) }) != NameKey(p), let parent = try tx.record(p),
              let s = try ShareVisibility.share(of: parent, lookup: { try tx.record($0) }), !s.isZoneWide else { return }
        if let own = e?.share, NameKey(own) != NameKey(s.recordName), let sr = try tx.record(own), try ShareState(sr) != nil {
            throw CloudKitError(.alreadyShared, "record '\(Names.describe(name))' is the root of share '\(Names.describe(own))'; it cannot also join share '\(Names.describe(s.recordName))' under '\(Names.describe(p))'", recordName: name, zoneID: zone.zoneID)
        }
        if let below = try shareBelow(name, in: tx), NameKey(below.share) != NameKey(s.recordName) {
            // A participant is not told the names of records not shared with them.
            if try visibleToWriter(try tx.record(below.root), in: tx) == nil {
                throw CloudKitError(.alreadyShared, "record '\(Names.describe(name))' has a descendant that is the root of another share; it cannot also join share '\(Names.describe(s.recordName))' under '\(Names.describe(p))'", recordName: name, zoneID: zone.zoneID)
            }
            throw CloudKitError(.alreadyShared, "record '\(Names.describe(name))' has a descendant '\(Names.describe(below.root))' that is the root of share '\(Names.describe(below.share))'; it cannot also join share '\(Names.describe(s.recordName))' under '\(Names.describe(p))'", recordName: name, zoneID: zone.zoneID)
        }
    }
}
