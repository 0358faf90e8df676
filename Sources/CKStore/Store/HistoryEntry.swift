import CKJSON
import CKModel

/// One entry of a zone's change history: a save (with the record as stored) or a delete, by
/// whom and when, and the entry it replaces (`prev`). A commit encodes it straight to its log
/// line — the bytes `JSONWriter.line` writes for `jsonValue` — without building the record's
/// dictionaries; every reader reads a line back into it (`init(line:)`), so no reader spells a
/// key of the log itself.
package struct HistoryEntry: JSONEncodable, HistoryLine, Sendable {
    package enum Op: String, Sendable { case save, delete }

    package var seq: Int64
    package var timestamp: Int64
    package var op: Op
    package var recordName: String
    package var userRecordName: String
    package var deviceID: String
    /// The record as saved; nil for a delete.
    package var record: Record?
    /// The saved version's change tag (nil for a delete).
    package var recordChangeTag: String?
    /// The entry that wrote the version this change replaced, when there was one.
    package var prev: Int64?

    package init(seq: Int64, timestamp: Int64, op: Op, recordName: String, userRecordName: String, deviceID: String, record: Record?, prev: Int64?) {
        self.seq = seq
        self.timestamp = timestamp
        self.op = op
        self.recordName = recordName
        self.userRecordName = userRecordName
        self.deviceID = deviceID
        self.record = record
        self.recordChangeTag = record?.recordChangeTag
        self.prev = prev
    }

    /// Reads a log line back. A line without seq, recordName or a known op is malformed.
    package init(line e: JSONValue) throws {
        guard let seq = e["seq"]?.int64Value, let name = e["recordName"]?.stringValue,
              let op = e["op"]?.stringValue.flatMap(Op.init(rawValue:)) else {
            throw CloudKitError.internalError("history entry \(e["seq"].map(JSONWriter.compact) ?? "?") is malformed (seq, recordName, op)")
        }
        self.seq = seq
        self.op = op
        recordName = name
        timestamp = e["timestamp"]?.int64Value ?? 0
        userRecordName = e["userRecordName"]?.stringValue ?? ""
        deviceID = e["deviceID"]?.stringValue ?? ""
        record = try e["record"].map(Record.init(stored:))
        recordChangeTag = e["recordChangeTag"]?.stringValue ?? record?.recordChangeTag
        prev = e["prev"]?.int64Value
    }

    package var key: NameKey { NameKey(recordName) }

    package var jsonValue: JSONValue {
        var o: [String: JSONValue] = [
            "seq": .int(seq), "timestamp": .int(timestamp), "op": .string(op.rawValue), "recordName": .string(recordName),
            "userRecordName": .string(userRecordName), "deviceID": .string(deviceID),
        ]
        if let r = record { o["record"] = r.json(); o["recordChangeTag"] = .string(r.recordChangeTag) }
        if let p = prev { o["prev"] = .int(p) }
        return .object(o)
    }

    package func encodeJSON(into out: inout [UInt8], indent: Int, pretty: Bool) {
        // Keys in the order of their bytes, as JSONWriter sorts them.
        var o = JSONObjectEmitter(indent: indent, pretty: pretty)
        o.string(literal: "deviceID", deviceID, into: &out)
        o.string(literal: "op", op.rawValue, into: &out)
        if let p = prev {
            o.key(literal: "prev", into: &out)
            JSONWriter.emitInt(p, into: &out)
        }
        if let r = record {
            o.key(literal: "record", into: &out)
            r.encodeStored(into: &out, indent: o.valueIndent, pretty: pretty)
            o.string(literal: "recordChangeTag", r.recordChangeTag, into: &out)
        }
        o.string(literal: "recordName", recordName, into: &out)
        o.key(literal: "seq", into: &out)
        JSONWriter.emitInt(seq, into: &out)
        o.key(literal: "timestamp", into: &out)
        JSONWriter.emitInt(timestamp, into: &out)
        o.string(literal: "userRecordName", userRecordName, into: &out)
        o.close(into: &out)
    }
}

/// A line of a history read back typed: a zone's (HistoryEntry) or a database's
/// (DatabaseHistoryEntry).
package protocol HistoryLine {
    init(line: JSONValue) throws
    /// The line read straight from its bytes, or nil: the reader then parses it and takes
    /// `init(line:)`, which reads anything this reads, the same.
    static func decoded(_ bytes: ArraySlice<UInt8>) -> Self?
    var seq: Int64 { get }
    /// What "the latest change per key" (LatestChanges) groups entries by: the name of the
    /// record, or of the zone, the entry changed.
    var key: NameKey { get }
}

extension ChangeHistory {
    /// Committed entries with seq > `after` (up to `through`), read as `E`, oldest first;
    /// `body` returns false to stop (see `forEachLine`).
    package func forEach<E: HistoryLine>(_: E.Type, after: Int64, through: Int64? = nil, skipCompacted: Bool = false, _ body: (E) throws -> Bool) throws {
        try forEachCommitted(after: after, through: through, skipCompacted: skipCompacted, read: { try ChangeHistory.read(E.self, seq: $0, $1) }, body)
    }

    /// A committed line read as `E`: straight from its bytes when it carries the seq its index
    /// word gives, else by the general path, which reads it or reports the damage.
    static func read<E: HistoryLine>(_: E.Type, seq: Int64, _ bytes: ArraySlice<UInt8>) throws -> E {
        if let e = E.decoded(bytes), e.seq == seq { return e }
        return try E(line: parsedLine(seq, bytes))
    }

    /// A zone history's entries (see `forEachLine`).
    func forEachEntry(after: Int64, through: Int64? = nil, skipCompacted: Bool = false, _ body: (HistoryEntry) throws -> Bool) throws {
        try forEach(HistoryEntry.self, after: after, through: through, skipCompacted: skipCompacted, body)
    }

    /// One entry of a zone history by its sequence number (nil: past the head, or dropped by `ck gc`).
    package func entry(_ seq: Int64) throws -> HistoryEntry? {
        guard seq >= 1 else { return nil }
        var out: HistoryEntry?
        try forEach(HistoryEntry.self, after: seq - 1, through: seq, skipCompacted: true) { e in
            if e.seq == seq { out = e }
            return false
        }
        return out
    }

    /// A database history's entries (see `forEachLine`).
    func forEachDatabaseEntry(after: Int64, through: Int64? = nil, _ body: (DatabaseHistoryEntry) throws -> Bool) throws {
        try forEach(DatabaseHistoryEntry.self, after: after, through: through, body)
    }
}
