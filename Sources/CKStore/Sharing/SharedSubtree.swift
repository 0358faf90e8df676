import CKModel

/// The subtree a record carries when it enters or leaves what is shared with a participant
/// (moved under a shared record or away from it, deleted, or its share gaining or losing the
/// participant): its descendants through `parent`, which must reach the participant's feed and
/// notifications with it although they did not change themselves.
///
/// Cost: a zone keeps no index of children (a parent reference points up), so the first
/// question reads every record of the snapshot once to build one — O(records of the zone),
/// paid only by a feed page (or a commit's notifications) in which something moved between
/// shares; a page in which nothing moved costs what it did, O(its changes).
struct SharedSubtree {
    package let snapshot: ZoneSnapshot
    /// Descendants changed after this seq come with their own change instead (nil: every one).
    package let start: Int64?
    private var children: [NameKey: [Record]]?
    private var all: [Record] = []
    /// Names already given (a record comes once): by their own change (`given`), or carried.
    private var taken: Set<NameKey> = []
    private var ownChanges: Set<NameKey> = []

    package init(snapshot: ZoneSnapshot, start: Int64?) {
        self.snapshot = snapshot
        self.start = start
    }

    /// Whether the index is built (the zone was read).
    package var indexed: Bool { children != nil }

    /// The same index, with no name carried yet (for the next participant).
    package var unused: SharedSubtree {
        var s = self
        s.taken = s.ownChanges
        return s
    }

    /// A name given by other means (its own change), not to be carried again.
    package mutating func given(_ name: String) {
        taken.insert(NameKey(name))
        ownChanges.insert(NameKey(name))
    }

    /// The records below `roots` now (and the roots themselves with `includingRoots`; every
    /// record of the zone with `everything`) not changed since `start` nor given yet.
    package mutating func carried(_ roots: [String], includingRoots: Bool, everything: Bool) throws -> [Record] {
        if children == nil { try index() }
        var out: [Record] = []
        func take(_ r: Record) {
            if let s = start, (ChangeTag.seq(ofTag: r.recordChangeTag) ?? Int64.max) > s { return }
            if taken.insert(NameKey(r.recordName)).inserted { out.append(r) }
        }
        if everything {
            all.forEach(take)
            return out
        }
        if includingRoots { for n in roots { if let r = try snapshot.record(named: n) { take(r) } } }
        var seen = Set<NameKey>()
        var queue = roots.map { NameKey($0) }
        while let k = queue.popLast() {
            guard seen.insert(k).inserted else { continue }
            // Through every child, changed or not: an unchanged grandchild follows its moved grandparent.
            for c in children?[k] ?? [] {
                take(c)
                queue.append(NameKey(c.recordName))
            }
        }
        return out
    }

    private mutating func index() throws {
        var map: [NameKey: [Record]] = [:]
        var every: [Record] = []
        try snapshot.forEachRecord { r in
            every.append(r)
            if let p = r.parent { map[NameKey(p), default: []].append(r) }
            return true
        }
        // Storage order is no order: give children by name.
        for k in map.keys { map[k]!.sort { NameKey($0.recordName) < NameKey($1.recordName) } }
        children = map
        all = every.sorted { NameKey($0.recordName) < NameKey($1.recordName) }
    }
}
