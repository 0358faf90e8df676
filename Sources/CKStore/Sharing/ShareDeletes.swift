import CKModel

/// What sharing decides about a delete before RecordWriter carries it out: the records it
/// removes are the record and those its DELETE_SELF referrers cascade to (a `parent` never
/// cascades: CloudKit's parent reference has no delete action). A participant may remove only
/// records shared with them read-write, never a hierarchy's root; and a root that goes takes
/// its share with it, as CloudKit deletes the CKShare of a deleted root.
extension RecordWriter {
    /// Checks and prepares a delete of `target` (which exists): refuses a participant's
    /// cascade outside their permission; deletes the share of every root the delete removes.
    func prepareDelete(_ target: Record, in tx: Transaction) throws {
        let doomed = try deletionSet(of: target.recordName, in: tx)
        if let a = access { try checkCascade(a, target: target, doomed: doomed, in: tx) }
        for r in doomed { try deleteShare(ofRoot: r, in: tx) }
    }

    /// The records a delete removes, the target first, in the order RecordWriter deletes them.
    func deletionSet(of name: String, in tx: Transaction) throws -> [Record] {
        var out: [Record] = []
        var seen: Set<NameKey> = []
        var stack = [name]
        while let n = stack.popLast() {
            guard seen.insert(NameKey(n)).inserted, let r = try tx.record(n) else { continue }
            out.append(r)
            let cascading = try tx.referrers(n).filter { $0.value.contains("DELETE_SELF") && $0.key != NameKey(n) }.keys.sorted()
            stack.append(contentsOf: cascading.reversed().map(\.string))
        }
        return out
    }

    /// A participant's delete removes nothing they could not delete themselves. The target is
    /// checked by checkParticipantWrite; a record they may not see is never named.
    private func checkCascade(_ a: ShareAccess, target: Record, doomed: [Record], in tx: Transaction) throws {
        let lookup: (String) throws -> Record? = { try tx.record($0) }
        let name = target.recordName
        let why = "deleting '\(Names.describe(name))' would also delete"
        for r in doomed.dropFirst() {
            guard r.recordType != ShareInfo.recordType, let p = try ShareVisibility.permission(a.participant, on: r, lookup: lookup) else {
                throw denied(name, "\(why) a record that is not shared with this user (a DELETE_SELF reference cascades to it); a participant can delete only shared records")
            }
            if p != .readWrite {
                throw denied(name, "\(why) '\(Names.describe(r.recordName))' (a DELETE_SELF reference cascades), and this user's permission on it is \(p.rawValue); READ_WRITE is needed")
            }
            if r.share != nil {
                throw denied(name, "\(why) '\(Names.describe(r.recordName))' (a DELETE_SELF reference cascades), the root record of a shared hierarchy, which only the owner can delete")
            }
        }
        // A VALIDATE reference from a record the participant cannot see refuses the delete
        // without naming that record.
        let keys = Set(doomed.map { NameKey($0.recordName) })
        for r in doomed {
            for (source, actions) in try tx.referrers(r.recordName) where actions.contains("VALIDATE") && !keys.contains(source) {
                guard let s = try tx.record(source.string), try ShareVisibility.permission(a.participant, on: s, lookup: lookup) == nil else { continue }
                throw CloudKitError(.validatingReferenceError, "Record delete would violate validating reference: a record not shared with this user references '\(Names.describe(r.recordName))' with VALIDATE", recordName: name, zoneID: zone.zoneID)
            }
        }
    }

    /// Deletes the share whose root `r` is, if any (the owner's delete of a root).
    private func deleteShare(ofRoot r: Record, in tx: Transaction) throws {
        guard let sn = r.share, let sr = try tx.record(sn), let s = try ShareState(sr),
              s.rootRecordName.map({ NameKey($0) }) == NameKey(r.recordName) else { return }
        try erase(sr, in: tx)
    }
}
