import CKJSON
import CKModel

/// Record files decoded straight from their bytes into a `Record`: the file's envelope, the
/// record's keys, its stamps and each field's `{type, value}` go into the record as they are
/// read, with no dictionary made per JSON object (the dictionaries, and hashing their keys, were
/// most of the cost of reading a record). Only field values become JSONValues.
///
/// The fast path may decline, never differ: anything not as ck writes it (a duplicate key, a
/// missing or mistyped member, a share record, trailing bytes, …) gives nil, and the caller
/// takes the general path — `JSONParser.parse` and `Record(stored:)` — which accepts the file
/// or reports exactly what is wrong with it.
enum StoredRecordDecoder {
    static func recordFile(_ bytes: [UInt8]) -> Record? {
        var p = JSONParser(document: bytes)
        return try? p.decodeRecordFile()
    }

    /// Tags as ck stores them, each its FieldType (`FieldType(tag:)` also reads other spellings).
    static let storedTags: [String: FieldType] = {
        var out: [String: FieldType] = [:]
        for b in FieldType.Base.allCases {
            if b != .unknown { out[b.rawValue] = FieldType(b) }
            out[b.rawValue + "_LIST"] = FieldType(b, list: true)
        }
        return out
    }()
}

/// Why a fast path declined; the general path says what, if anything, is wrong.
struct Declined: Error {}

/// The keys of one object read so far, a bit each (not an array of them, made per object): a
/// key seen twice declines.
struct SeenKeys {
    private var bits: UInt16 = 0

    mutating func mark(_ bit: UInt16) throws {
        if bits & bit != 0 { throw Declined() }
        bits |= bit
    }
}

extension JSONParser {
    // A key ck does not write declines, except in the record object itself, where both paths
    // skip it (`Record(stored:)` keeps none there).

    fileprivate mutating func decodeRecordFile() throws -> Record {
        var record: Record?
        var seen = SeenKeys()
        try forEachMemberKey { key, p in
            if p.key(key, is: "record") { try seen.mark(1); record = try p.decodeStoredRecord() }
            else if p.key(key, is: "schemaVersion") { try seen.mark(2); _ = try p.nextValue() }
            else { throw Declined() }
        }
        guard isAtEnd(), let record else { throw Declined() }
        return record
    }

    /// The record dictionary as `Record(stored:)` reads it (a record file's, a history line's).
    mutating func decodeStoredRecord() throws -> Record {
        var name: String?, type: String?, tag: String?, shortGUID: String?
        var parent: String??, share: String??
        var fields: [String: RecordField]?
        var created: ChangeStamp?, modified: ChangeStamp?
        var zoneID: ZoneID?
        var seen = SeenKeys()
        var others: [String] = []
        // Keys compared as bytes, in the order ck writes them (a String made of each key, and
        // a switch over Strings, were a sixth of decoding a record).
        try forEachMemberKey { key, p in
            if p.key(key, is: "created") { try seen.mark(16); created = try p.decodeStamp() }
            // Written in every file, read by neither path.
            else if p.key(key, is: "deleted") { try seen.mark(1024); _ = try p.nextValue() }
            else if p.key(key, is: "fields") { try seen.mark(8); fields = try p.decodeFields() }
            else if p.key(key, is: "modified") { try seen.mark(32); modified = try p.decodeStamp() }
            else if p.key(key, is: "recordChangeTag") { try seen.mark(4); tag = try p.nextString() }
            else if p.key(key, is: "recordName") { try seen.mark(1); name = try p.nextString() }
            else if p.key(key, is: "recordType") { try seen.mark(2); type = try p.nextString() }
            else if p.key(key, is: "zoneID") { try seen.mark(64); zoneID = try p.decodeZoneID() }
            else if p.key(key, is: "parent") { try seen.mark(128); parent = .some(try p.nextValue()["recordName"]?.stringValue) }
            else if p.key(key, is: "share") { try seen.mark(256); share = .some(try p.nextValue()["recordName"]?.stringValue) }
            else if p.key(key, is: "shortGUID") { try seen.mark(512); shortGUID = try p.nextString() }
            else {
                let key = try p.text(of: key)
                // A share record's own keys are kept by the general path.
                if ShareInfo.keys.contains(key) || others.contains(key) { throw Declined() }
                others.append(key)
                _ = try p.nextValue()
            }
        }
        guard let name, let type, let tag, let fields, let created, let modified, let zoneID,
              type != ShareInfo.recordType else { throw Declined() }
        var r = Record(recordName: name, recordType: type, recordChangeTag: tag, fields: fields, created: created, modified: modified,
                       zoneID: zoneID, parent: parent ?? nil, shortGUID: shortGUID)
        r.share = share ?? nil
        return r
    }

    /// `{timestamp, userRecordName, deviceID}`, as `ChangeStamp(json:)` reads it.
    private mutating func decodeStamp() throws -> ChangeStamp {
        var t: Int64?, user: String?, device: String?
        var seen = SeenKeys()
        try forEachMemberKey { key, p in
            if p.key(key, is: "deviceID") { try seen.mark(4); device = try p.nextString() }
            else if p.key(key, is: "timestamp") { try seen.mark(1); t = try p.nextValue().int64Value }
            else if p.key(key, is: "userRecordName") { try seen.mark(2); user = try p.nextString() }
            else { throw Declined() }
        }
        guard let t, let user, let device else { throw Declined() }
        return ChangeStamp(timestamp: t, userRecordName: user, deviceID: device)
    }

    /// `{zoneName, ownerRecordName, zoneType}`, as `ZoneID(json:)` reads it (`zoneType` is the
    /// server's to fill in, and ignored).
    private mutating func decodeZoneID() throws -> ZoneID {
        var name: String?, owner: String?
        var seen = SeenKeys()
        try forEachMemberKey { key, p in
            if p.key(key, is: "ownerRecordName") { try seen.mark(2); owner = try p.nextString() }
            else if p.key(key, is: "zoneName") { try seen.mark(1); name = try p.nextString() }
            else if p.key(key, is: "zoneType") { try seen.mark(4); _ = try p.nextString() }
            else { throw Declined() }
        }
        guard let name else { throw Declined() }
        return ZoneID(zoneName: name, ownerRecordName: owner ?? ZoneID.defaultOwner)
    }

    /// `{name: {type, value}}`, as `Record(stored:)` reads it.
    private mutating func decodeFields() throws -> [String: RecordField] {
        // Room for a record's usual fields at once: grown from one, the table was allocated
        // and every name hashed again at each doubling.
        var fields = [String: RecordField](minimumCapacity: 8)
        try forEachMember { name, p in
            var type: FieldType?, value: JSONValue?
            var seen = SeenKeys()
            try p.forEachMemberKey { key, p in
                if p.key(key, is: "type") {
                    try seen.mark(1)
                    let t = try p.nextString()
                    type = StoredRecordDecoder.storedTags[t] ?? FieldType(tag: t)
                } else if p.key(key, is: "value") { try seen.mark(2); value = try p.nextValue() }
                else { throw Declined() }
            }
            guard let type, let value, fields.updateValue(RecordField(type: type, value: value), forKey: name) == nil else { throw Declined() }
        }
        return fields
    }
}

extension Directory {
    /// The record in a record file; nil when there is no such file. A file that is not JSON, or
    /// holds no record, is corrupt (`shownAs` names it in the error).
    func readStoredRecord(_ name: String, shownAs path: @autoclosure () -> String) throws -> Record? {
        guard let bytes = try read(name) else { return nil }
        return try StoredRecordDecoder.record(inFile: bytes, shownAs: path())
    }
}

extension StoredRecordDecoder {
    /// The record in a record file's bytes; a file that is not JSON, or holds no record, is
    /// corrupt (`path` names it in the error).
    package static func record(inFile bytes: [UInt8], shownAs path: @autoclosure () -> String) throws -> Record {
        if let r = recordFile(bytes) { return r }
        let j: JSONValue
        do { j = try JSONParser.parse(bytes) } catch {
            throw CloudKitError.internalError("corrupt file '\(path())': \(error)").with(.repairDataDirectory)
        }
        guard let rj = j["record"] else { throw CloudKitError.internalError("corrupt record file '\(path())'").with(.repairDataDirectory) }
        return try Record(stored: rj)
    }
}
