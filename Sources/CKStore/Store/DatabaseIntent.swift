import CKJSON
import CKModel

/// What a zone-level change means to its database: a zone created, written, deleted or purged is an
/// entry of the database's history (`changes/database` reads it). A zone's creation, deletion or
/// purge is first written down as an intent, `intents/<zone>.json` beside the database's
/// history, and the intent is removed once the change and its history entry are both done. A
/// crash in between leaves the intent; whoever next locks that zone (its next writer, creator or
/// deleter), any writer of the database that can lock it, or `ck fsck` finishes it. A write
/// needs none: its entry is synced before the zone's commit (`Database.commitDurably`); intents
/// of writes that a `ck` before that left are still finished.
struct DatabaseIntent: Equatable {
    /// `purge` is a deletion too (CloudKit's purge): `changes/database` reports it as such.
    package enum Op: String { case create, change, delete, purge }
    package var op: Op
    package var zoneName: String
    package var incarnation: String
    /// For a change: the zone history's last entry written by the commit.
    var zoneSeq: Int64?
    /// The database history's head when the intent was written: an entry recording it can
    /// only come after.
    package var after: Int64

    package var json: JSONValue {
        var o: [String: JSONValue] = ["schemaVersion": .int(FileFormat.schemaVersion), "op": .string(op.rawValue),
                                      "zoneName": .string(zoneName), "incarnation": .string(incarnation), "after": .int(after)]
        if let s = zoneSeq { o["zoneSeq"] = .int(s) }
        return .object(o)
    }

    package init(op: Op, zoneName: String, incarnation: String, zoneSeq: Int64? = nil, after: Int64 = 0) {
        self.op = op
        self.zoneName = zoneName
        self.incarnation = incarnation
        self.zoneSeq = zoneSeq
        self.after = after
    }

    package init?(json j: JSONValue) {
        guard let o = j["op"]?.stringValue.flatMap(Op.init(rawValue:)), let z = j["zoneName"]?.stringValue,
              let i = j["incarnation"]?.stringValue, let a = j["after"]?.int64Value else { return nil }
        self.init(op: o, zoneName: z, incarnation: i, zoneSeq: j["zoneSeq"]?.int64Value, after: a)
        if o == .change && zoneSeq == nil { return nil }
    }

    /// The name a deleted zone's directory takes in `trash/`: its incarnation, and for a purge
    /// `<incarnation>.purge`, so that fsck, finding trash whose intent a power loss took, still
    /// records the right operation.
    var trashName: String { op == .purge ? incarnation + DatabaseIntent.purgeSuffix : incarnation }
    static let purgeSuffix = ".purge"

    /// Whether a database history entry records this intent.
    func isRecorded(by e: DatabaseHistoryEntry) -> Bool {
        e.op == op && e.zoneName.sameBytes(zoneName) && e.incarnation == incarnation && e.zoneSeq == zoneSeq
    }
}
