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

/// Why the fast path declined; the general path says what, if anything, is wrong.
private struct Declined: Error {}

extension JSONParser {
    // Each object's members are told apart by a bit each (no array of the keys seen, made per
    // object); a key ck does not write declines.

    fileprivate mutating func decodeRecordFile() throws -> Record {
        var record: Record?
        var seen: UInt8 = 0
        try forEachMember { key, p in
            let bit: UInt8
            switch key {
            case "record": bit = 1; record = try p.decodeStoredRecord()
            case "schemaVersion": bit = 2; _ = try p.nextValue()
            default: throw Declined()
            }
            if seen & bit != 0 { throw Declined() }
            seen |= bit
        }
        guard isAtEnd(), let record else { throw Declined() }
        return record
    }

    /// The record dictionary as `Record(stored:)` reads it.
    private mutating func decodeStoredRecord() throws -> Record {
        var name: String?, type: String?, tag: String?, shortGUID: String?
        var parent: String??, share: String??
        var fields: [String: RecordField]?
        var created: ChangeStamp?, modified: ChangeStamp?
        var zoneID: ZoneID?
        var seen: UInt16 = 0
        var others: [String] = []
        try forEachMember { key, p in
            let bit: UInt16
            switch key {
            case "recordName": bit = 1; name = try p.nextString()
            case "recordType": bit = 2; type = try p.nextString()
            case "recordChangeTag": bit = 4; tag = try p.nextString()
            case "fields": bit = 8; fields = try p.decodeFields()
            case "created": bit = 16; created = try p.decodeStamp()
            case "modified": bit = 32; modified = try p.decodeStamp()
            case "zoneID": bit = 64; zoneID = try p.decodeZoneID()
            case "parent": bit = 128; parent = .some(try p.nextValue()["recordName"]?.stringValue)
            case "share": bit = 256; share = .some(try p.nextValue()["recordName"]?.stringValue)
            case "shortGUID": bit = 512; shortGUID = try p.nextString()
            default:
                // A share record's own keys are kept by the general path.
                if ShareInfo.keys.contains(key) || others.contains(key) { throw Declined() }
                others.append(key)
                bit = 0
                _ = try p.nextValue()
            }
            if seen & bit != 0 { throw Declined() }
            seen |= bit
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
        var seen: UInt8 = 0
        try forEachMember { key, p in
            let bit: UInt8
            switch key {
            case "timestamp": bit = 1; t = try p.nextValue().int64Value
            case "userRecordName": bit = 2; user = try p.nextString()
            case "deviceID": bit = 4; device = try p.nextString()
            default: throw Declined()
            }
            if seen & bit != 0 { throw Declined() }
            seen |= bit
        }
        guard let t, let user, let device else { throw Declined() }
        return ChangeStamp(timestamp: t, userRecordName: user, deviceID: device)
    }

    /// `{zoneName, ownerRecordName, zoneType}`, as `ZoneID(json:)` reads it (`zoneType` is the
    /// server's to fill in, and ignored).
    private mutating func decodeZoneID() throws -> ZoneID {
        var name: String?, owner: String?
        var seen: UInt8 = 0
        try forEachMember { key, p in
            let bit: UInt8
            switch key {
            case "zoneName": bit = 1; name = try p.nextString()
            case "ownerRecordName": bit = 2; owner = try p.nextString()
            case "zoneType": bit = 4; _ = try p.nextString()
            default: throw Declined()
            }
            if seen & bit != 0 { throw Declined() }
            seen |= bit
        }
        guard let name else { throw Declined() }
        return ZoneID(zoneName: name, ownerRecordName: owner ?? ZoneID.defaultOwner)
    }

    /// `{name: {type, value}}`, as `Record(stored:)` reads it.
    private mutating func decodeFields() throws -> [String: RecordField] {
        var fields: [String: RecordField] = [:]
        try forEachMember { name, p in
            var type: FieldType?, value: JSONValue?
            var seen: UInt8 = 0
            try p.forEachMember { key, p in
                let bit: UInt8
                switch key {
                case "type":
                    bit = 1
                    let t = try p.nextString()
                    type = StoredRecordDecoder.storedTags[t] ?? FieldType(tag: t)
                case "value": bit = 2; value = try p.nextValue()
                default: throw Declined()
                }
                if seen & bit != 0 { throw Declined() }
                seen |= bit
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
