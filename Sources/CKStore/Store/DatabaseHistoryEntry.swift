import CKJSON
import CKModel

/// One entry of a database's history (`history.log` beside `zones/`): a custom zone created,
/// written by a commit (up to `zoneSeq` of its own history), deleted or purged. Appended by
/// `appendDatabaseEntry`, read back by `changes/database`, intents and fsck.
struct DatabaseHistoryEntry: HistoryLine, Equatable {
    package var seq: Int64
    package var timestamp: Int64
    package var op: DatabaseIntent.Op
    package var zoneName: String
    /// Which zone of that name (a zone deleted and made again is another).
    package var incarnation: String
    /// For a change: the zone history's last entry the commit wrote.
    var zoneSeq: Int64?

    package init(seq: Int64, timestamp: Int64, op: DatabaseIntent.Op, zoneName: String, incarnation: String, zoneSeq: Int64?) {
        self.seq = seq
        self.timestamp = timestamp
        self.op = op
        self.zoneName = zoneName
        self.incarnation = incarnation
        self.zoneSeq = zoneSeq
    }

    /// Reads a log line back. A line without seq, zoneName, incarnation or a known op is malformed.
    package init(line e: JSONValue) throws {
        guard let seq = e["seq"]?.int64Value, let name = e["zoneName"]?.stringValue, let inc = e["incarnation"]?.stringValue,
              let op = e["op"]?.stringValue.flatMap(DatabaseIntent.Op.init(rawValue:)) else {
            throw CloudKitError.internalError("database history entry \(e["seq"].map(JSONWriter.compact) ?? "?") is malformed (seq, op, zoneName, incarnation)")
        }
        self.init(seq: seq, timestamp: e["timestamp"]?.int64Value ?? 0, op: op, zoneName: name, incarnation: inc, zoneSeq: e["zoneSeq"]?.int64Value)
    }

    package var key: NameKey { NameKey(zoneName) }

    /// A database's lines are few and short: read by the general path.
    package static func decoded(_ bytes: ArraySlice<UInt8>) -> DatabaseHistoryEntry? { nil }

    /// The log line's object.
    package var json: JSONValue {
        var o: [String: JSONValue] = ["seq": .int(seq), "timestamp": .int(timestamp), "op": .string(op.rawValue),
                                      "zoneName": .string(zoneName), "incarnation": .string(incarnation)]
        if let s = zoneSeq { o["zoneSeq"] = .int(s) }
        return .object(o)
    }
}
