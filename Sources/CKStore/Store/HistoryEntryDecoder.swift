import CKJSON
import CKModel

/// A zone history's log line decoded straight from its bytes into a `HistoryEntry`, its record
/// by the record files' decoder (StoredRecordDecoder): parsing a line into dictionaries first,
/// then reading them, cost about 90,000 instructions an entry, and every change feed, index
/// upkeep and recovery reads entries.
///
/// Like the record files' decoder it may decline, never differ: anything not as ck writes it (a
/// key it does not write, one written twice or with an escape, a value of another type, a
/// share record, trailing bytes, …) gives nil, and the reader takes the general path —
/// `JSONParser.parse` and `HistoryEntry(line:)` — which reads the line or says what is wrong.
extension HistoryEntry {
    package static func decoded(_ bytes: ArraySlice<UInt8>) -> HistoryEntry? {
        var p = JSONParser(document: Array(bytes))
        return try? p.decodeHistoryEntry()
    }
}

extension JSONParser {
    fileprivate mutating func decodeHistoryEntry() throws -> HistoryEntry {
        var seq: Int64?, timestamp: Int64?, prev: Int64?
        var op: HistoryEntry.Op?
        var name: String?, user: String?, device: String?, tag: String?
        var record: Record?
        var seen = SeenKeys()
        func integer(_ p: inout JSONParser) throws -> Int64 {
            guard case .int(let v) = try p.nextValue() else { throw Declined() }
            return v
        }
        // In the order ck writes them (JSONWriter's byte order), after the log's own framing
        // (AppendLogFraming: `check`, `commit`), which readers of entries ignore.
        try forEachMemberKey { key, p in
            if p.key(key, is: "check") { try seen.mark(512); _ = try p.nextValue() }
            else if p.key(key, is: "commit") { try seen.mark(1024); _ = try p.nextValue() }
            else if p.key(key, is: "deviceID") { try seen.mark(1); device = try p.nextString() }
            else if p.key(key, is: "op") {
                try seen.mark(2)
                guard let o = HistoryEntry.Op(rawValue: try p.nextString()) else { throw Declined() }
                op = o
            }
            else if p.key(key, is: "prev") { try seen.mark(4); prev = try integer(&p) }
            else if p.key(key, is: "record") { try seen.mark(8); record = try p.decodeStoredRecord() }
            else if p.key(key, is: "recordChangeTag") { try seen.mark(16); tag = try p.nextString() }
            else if p.key(key, is: "recordName") { try seen.mark(32); name = try p.nextString() }
            else if p.key(key, is: "seq") { try seen.mark(64); seq = try integer(&p) }
            else if p.key(key, is: "timestamp") { try seen.mark(128); timestamp = try integer(&p) }
            else if p.key(key, is: "userRecordName") { try seen.mark(256); user = try p.nextString() }
            else { throw Declined() }
        }
        guard isAtEnd(), let seq, let name, let op, let timestamp, let user, let device else { throw Declined() }
        var entry = HistoryEntry(seq: seq, timestamp: timestamp, op: op, recordName: name, userRecordName: user, deviceID: device,
                                 record: record, prev: prev)
        entry.recordChangeTag = tag ?? record?.recordChangeTag
        return entry
    }
}
