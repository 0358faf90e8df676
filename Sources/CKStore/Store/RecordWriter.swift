import CKJSON
import CKModel

/// Applies record operations to a transaction with CloudKit's rules: create/update/replace and
/// their force variants, change tags, creator-only writes in the public database, references
/// (same zone, VALIDATE, DELETE_SELF cascades) and the record limits.
package struct RecordWriter {
    package let zone: ZoneStore
    package let scope: DatabaseScope
    package let user: UserAccount
    package let deviceID: String
    package let now: Int64
    package let assets: AssetStore
    package let schema: SchemaContext
    /// The user's custom roles (public-database GRANTs).
    package let roles: Set<String>
    /// Set when a share participant writes into the owner's zone (Sharing/ShareWriter.swift).
    package var access: ShareAccess? = nil
    /// Set for a web client (`ck serve`): what its asset values must show (WebAssetRule).
    package var webAssets: WebAssetRule? = nil

    /// The database the writer's errors name: a participant writes into the owner's private
    /// zone from their shared database.
    var shownScope: DatabaseScope { access == nil ? scope : .shared }

    package func apply(_ op: RecordOperation, in tx: Transaction) throws -> OperationResult {
        if let e = op.invalid { throw e }
        let name = op.recordName ?? Identifiers.newRecordName()
        let stored = try tx.record(name)
        // To a participant, a record of the owner's zone that is not shared with them does not
        // exist (a share operation is judged by the share's own rules).
        let hidden = try op.share == nil && stored != nil && visibleToWriter(stored, in: tx) == nil
        let existing = hidden ? nil : stored
        // Share records change only through share operations; participants only as their share permits.
        if let shared = try applySharing(op, name: name, existing: existing, hidden: hidden, in: tx) { return shared }

        if scope == .public, let t = op.recordType ?? existing?.recordType {
            let type = schema.schema.types[t]
            if let e = existing, op.type != .create {
                if !SchemaRules.permits(.write, type: type, user: user, roles: roles, creator: e.created.userRecordName) {
                    // A record this user may not read does not exist for them: a conditional
                    // write or a delete of it is NOT_FOUND, as of a missing one. (A force save
                    // would create a missing one, so its refusal cannot look the same.)
                    if readable(e) == nil && (op.type.checksTag || op.type == .forceDelete) {
                        throw CloudKitError.recordNotFound(name, zone: zone.zoneID, scope: shownScope, tagGiven: op.type.checksTag)
                    }
                    let onlyCreator = (type?.grants ?? RecordTypeSchema.defaultGrants)["_creator"]?.contains(.write) == true
                    throw CloudKitError(.accessDenied, onlyCreator
                        ? "record '\(name)' in the public database was created by another user; only its creator may change or delete it"
                        : "this user may not change or delete records of type '\(t)' in the public database (schema GRANTs)", recordName: name)
                }
            } else if existing == nil && !op.type.isDelete && !SchemaRules.permits(.create, type: type, user: user, roles: roles, creator: nil)
                        // A user's own Users record is CloudKit's to make for them (API/Records/UserRecords.swift).
                        && !(t == RecordTypeSchema.users.name && name == user.userRecordName) {
                throw CloudKitError(.accessDenied, "this user may not create records of type '\(t)' in the public database (schema GRANTs)", recordName: name)
            }
        }
        if op.type.checksTag {
            guard let tag = op.recordChangeTag else {
                throw CloudKitError(.badRequest, "\(op.type.rawValue) of record '\(name)' needs its recordChangeTag", recordName: name)
            }
            guard let e = existing else {
                throw CloudKitError.recordNotFound(name, zone: zone.zoneID, scope: shownScope, tagGiven: true)
            }
            if e.recordChangeTag != tag {
                var c = CloudKitError(.conflict, "record '\(Names.describe(name))' changed on the server (tag \(e.recordChangeTag), yours \(tag))",
                                      recordName: name, serverRecord: readable(e))
                // What to do with the current tag, for a caller who may read the record.
                if c.serverRecord != nil { c.nextStep = .retryWithTag(recordName: name, tag: e.recordChangeTag) }
                throw c
            }
        }
        if op.type.isDelete {
            guard existing != nil else { throw CloudKitError.recordNotFound(name, zone: zone.zoneID, scope: shownScope) }
            let before = tx.changes.count
            try delete(name, in: tx, cascadeFrom: nil)
            let cascaded = tx.changes[before...].map(\.recordName).filter { $0 != name }
            return .deleted(recordName: name, zoneID: zone.zoneID, cascaded: cascaded)
        }
        if op.type == .create, let e = existing {
            var x = CloudKitError(.exists, "record to insert already exists: '\(Names.describe(name))'", recordName: name, serverRecord: readable(e))
            if x.serverRecord != nil { x.nextStep = .updateInstead(recordName: name, tag: e.recordChangeTag) }
            throw x
        }
        if let t = op.recordType, let e = existing, t != e.recordType {
            throw CloudKitError(.badRequest, "record '\(name)' is of type '\(e.recordType)', not '\(t)'", recordName: name)
        }
        guard let type = op.recordType ?? existing?.recordType else {
            throw CloudKitError(.badRequest, "\(op.type.rawValue) of new record '\(name)' needs a recordType", recordName: name)
        }

        var fields = (op.type.replacesFields || existing == nil) ? [:] : existing!.fields
        for (k, v) in op.fields {
            guard let given = v else { fields[k] = nil; continue }
            let field = try typed(k, given, op: op, recordType: type, existing: existing, recordName: name)
            try field.checkRange(name: k)
            fields[k] = filledReferences(try resolvedAssets(field, name: k, recordName: name, in: tx))
        }
        if op.skipIfUnchanged, let e = existing, e.recordType == type, e.fields == fields,
           e.parent == op.parent(after: e) {
            return .saved(e)
        }
        let seq = tx.takeSeq()
        let stamp = ChangeStamp(timestamp: now, userRecordName: user.userRecordName, deviceID: deviceID)
        var record = Record(recordName: name, recordType: type, recordChangeTag: ChangeTag.tag(for: seq), fields: fields,
                            created: existing?.created ?? stamp, modified: stamp, zoneID: zone.zoneID,
                            parent: op.parent(after: existing),
                            shortGUID: existing?.shortGUID ?? (op.createShortGUID ? Identifiers.newShortGUID() : nil))
        record.share = existing?.share
        try check(record, in: tx)
        try schema.admit(record)
        try tx.reindex(source: name, old: existing, new: record)
        tx.put(record)
        tx.entries.append(entry(seq: seq, op: .save, name: name, record: record, previous: existing))
        tx.changes.append(RecordChange(kind: existing == nil ? .created : .updated, recordName: name, seq: seq, before: existing, after: record,
                                       userRecordName: user.userRecordName, deviceID: deviceID, timestamp: now))
        return .saved(readable(record) ?? writtenPart(of: record, by: op))
    }

    /// What the response to a write may show of a record its writer may not read (a type
    /// whose GRANTs let the user write but not read another user's records): the record's
    /// identity and only the fields this operation set — never fields someone else stored.
    private func writtenPart(of r: Record, by op: RecordOperation) -> Record {
        var shown = r
        shown.fields = r.fields.filter { op.fields[$0.key] != nil }
        shown.parent = op.parent
        return shown
    }

    /// A value sent without `type` takes the type the schema has for its field, else the type
    /// the field has in the record being changed, as CloudKit does: an integer into a
    /// TIMESTAMP or DOUBLE field, base64 into BYTES or ENCRYPTED_BYTES. A value that does not
    /// fit that type is refused with CloudKit's reason.
    private func typed(_ field: String, _ given: RecordField, op: RecordOperation, recordType: String, existing: Record?,
                       recordName: String) throws -> RecordField {
        guard var raw = op.untyped[field] else { return given }
        let known = schema.schema.types[recordType]?.fields[field]?.type.fieldType ?? existing?.fields[field]?.type
        guard let target = known, target.base != .unknown, target != given.type else {
            if given.type == RecordField.uninferred {
                throw CloudKitError(.badRequest, "field '\(field)': cannot infer the type of \(raw.kindName) value \(Names.describe(JSONWriter.compact(raw))); give a 'type'", recordName: recordName)
            }
            return given
        }
        if op.numbersAsStrings && NumbersAsStrings.applies(to: target) { raw = NumbersAsStrings.taken(raw) }
        do {
            return RecordField(type: target, value: try RecordField.canonical(name: field, type: target, value: raw))
        } catch {
            throw CloudKitError(.badRequest, "Invalid value, expected type \(target.rawValue): field '\(field)' of record type '\(recordType)' is \(target) and the value sent is \(raw.kindName)", recordName: recordName)
        }
    }

    /// Asset values (the rules are `AssetValue`'s): one whose bytes this data directory holds
    /// (brought by this save, or stored before) keeps `{fileChecksum, size}`, and its size must
    /// be theirs; one whose `file://` downloadURL names a file of another data directory's
    /// asset store (what `export` prints) brings those bytes along when they are `size` bytes
    /// hashing to the checksum; one copied from a real server response, behind an `https://`
    /// downloadURL, is kept as sent (a remote asset); any other — another kind of URL, a file
    /// elsewhere — is refused: ck never stores an asset it cannot serve or account for.
    private func resolvedAssets(_ f: RecordField, name: String, recordName: String, in tx: Transaction) throws -> RecordField {
        guard f.type.base == .asset else { return f }
        let field = "field '\(name)' of record '\(Names.describe(recordName))'"
        func resolve(_ v: JSONValue) throws -> JSONValue {
            guard let sum = v["fileChecksum"]?.stringValue else { return v }
            let size = v["size"]?.int64Value ?? -1
            do { try AssetValue.checkChecksum(sum, field: name) } catch let e as CloudKitError {
                throw CloudKitError(e.code, e.reason, recordName: recordName)
            }
            if let rule = webAssets {
                // Before anything about the stored bytes is said: no oracle of what is stored.
                try rule.check(v, checksum: sum, field: name, recordName: recordName, before: try tx.record(recordName))
            }
            let held = try tx.pendingAsset(sum).map { Int64($0.count) } ?? assets.sizeTakingUpload(checksum: sum)
            let missing = held == nil ? "no asset with checksum '\(sum)' is stored and " : ""
            var source: AssetValue.Source?
            if let url = v["downloadURL"]?.stringValue {
                do { source = try AssetValue.source(ofURL: url, checksum: sum) } catch let e as CloudKitError {
                    throw CloudKitError(.badRequest, "\(field): \(missing)its downloadURL '\(AssetValue.describeURL(url))' \(e.reason)", recordName: recordName)
                }
            }
            if source != .remote, size > Limits.assetBytes { throw AssetValue.tooLarge(size, what: field, recordName: recordName) }
            if let held {
                guard held == size else {
                    throw CloudKitError(.badRequest, "\(field): the asset's size is \(size) but the bytes with checksum '\(sum)' are \(held) bytes long", recordName: recordName)
                }
                return AssetValue.local(v)
            }
            switch source {
            case .remote?:
                var kept = v.objectValue ?? [:]
                kept["receipt"] = nil
                return .object(kept)
            case .exported(let file)?:
                do { tx.assets[sum] = try AssetStore.readExported(file, checksum: sum, size: size) } catch let e as CloudKitError {
                    let url = AssetValue.describeURL(v["downloadURL"]?.stringValue ?? "")
                    throw CloudKitError(.badRequest, "\(field): \(missing)its downloadURL '\(url)' could not be read: \(e.reason)", recordName: recordName)
                }
                return AssetValue.local(v)
            case .served?:
                throw CloudKitError(.badRequest, "\(field): no asset with checksum '\(sum)' is stored in this data directory; its downloadURL '\(AssetValue.describeURL(v["downloadURL"]?.stringValue ?? ""))' is another server's (upload the bytes with assets/upload)", recordName: recordName)
            case nil:
                throw CloudKitError(.badRequest, "\(field): \(missing)no downloadURL says where its bytes are (pass the file as \(name):ASSET=@PATH)", recordName: recordName)
            }
        }
        var out = f
        out.value = f.type.isList ? .array(try (f.value.arrayValue ?? []).map(resolve)) : try resolve(f.value)
        return out
    }

    /// References come back with the zoneID the server fills in: the record's own zone (a
    /// reference elsewhere is refused by `check`).
    private func filledReferences(_ f: RecordField) -> RecordField {
        guard f.type.base == .reference else { return f }
        func fill(_ v: JSONValue) -> JSONValue {
            guard var r = try? Reference.parse(name: "", json: v), r.zoneName.map({ $0.sameBytes(zone.zoneID.zoneName) }) ?? true else { return v }
            r.zoneID = zone.zoneID
            r.zoneName = zone.zoneID.zoneName
            return r.json
        }
        var out = f
        out.value = f.type.isList ? .array((f.value.arrayValue ?? []).map(fill)) : fill(f.value)
        return out
    }

    /// The server's copy of a record as an error may show it: only to a caller who may read
    /// it (in the public database, as the type's GRANTs say).
    private func readable(_ r: Record) -> Record? {
        guard scope == .public else { return r }
        return SchemaRules.permits(.read, type: schema.schema.types[r.recordType], user: user, roles: roles,
                                   creator: r.created.userRecordName) ? r : nil
    }

    private func check(_ r: Record, in tx: Transaction) throws {
        if r.fields.count > Limits.fieldsPerRecord {
            throw CloudKitError(.limitExceeded, "record '\(r.recordName)' has \(r.fields.count) fields; the limit is \(Limits.fieldsPerRecord)", recordName: r.recordName)
        }
        let size = r.storedSize
        if size > Limits.recordBytes {
            throw CloudKitError(.limitExceeded, "record too large: '\(r.recordName)' holds \(size) bytes; the limit is \(Limits.recordBytes) (assets excluded)", recordName: r.recordName)
        }
        for (field, ref) in r.references {
            if let z = ref.zoneName, !z.sameBytes(zone.zoneID.zoneName) {
                throw CloudKitError(.badRequest, "field '\(field)' references zone '\(z)'; references must point into the record's own zone '\(zone.zoneID.zoneName)'", recordName: r.recordName)
            }
            if ref.action == .validate, !ref.recordName.sameBytes(r.recordName), try visibleToWriter(try tx.record(ref.recordName), in: tx) == nil {
                throw CloudKitError(.validatingReferenceError, "field '\(field)' has a VALIDATE reference to record '\(Names.describe(ref.recordName))', which does not exist", recordName: r.recordName)
            }
            if ref.action == .deleteSelf {
                let n = try tx.referrers(ref.recordName).filter { $0.value.contains("DELETE_SELF") && $0.key != NameKey(r.recordName) }.count
                if n >= Limits.deleteSelfReferencesPerTarget {
                    throw CloudKitError(.limitExceeded, "record '\(ref.recordName)' already has \(n) DELETE_SELF references; the limit is \(Limits.deleteSelfReferencesPerTarget)", recordName: r.recordName)
                }
            }
        }
    }

    /// Deletes a record, refusing when a VALIDATE reference still points at it, and deletes
    /// records that point at it with DELETE_SELF.
    private func delete(_ name: String, in tx: Transaction, cascadeFrom: String?) throws {
        guard let existing = try tx.record(name) else { return }
        let referrers = try tx.referrers(name).sorted { $0.key < $1.key }
        let key = NameKey(name)
        for (source, actions) in referrers where actions.contains("VALIDATE") && source != key {
            if try tx.record(source.string) != nil {
                throw CloudKitError(.validatingReferenceError, "Record delete would violate validating reference: record '\(Names.describe(source.string))' references '\(Names.describe(name))' with VALIDATE", recordName: cascadeFrom ?? name)
            }
        }
        let seq = tx.takeSeq()
        try tx.reindex(source: name, old: existing, new: nil)
        tx.remove(name)
        tx.entries.append(entry(seq: seq, op: .delete, name: name, record: nil, previous: existing))
        tx.changes.append(RecordChange(kind: .deleted, recordName: name, seq: seq, before: existing, after: nil,
                                       userRecordName: user.userRecordName, deviceID: deviceID, timestamp: now))
        for (source, actions) in referrers where actions.contains("DELETE_SELF") && source != key {
            try delete(source.string, in: tx, cascadeFrom: cascadeFrom ?? name)
        }
    }

    /// A history entry: the change, who made it, the whole record saved, and `prev`, the entry
    /// that wrote the version it replaces — so the state before any change can be read back.
    private func entry(seq: Int64, op: HistoryEntry.Op, name: String, record: Record?, previous: Record?) -> HistoryEntry {
        RecordWriter.historyEntry(seq: seq, op: op, name: name, record: record, previous: previous, now: now, user: user, deviceID: deviceID)
    }

    static func historyEntry(seq: Int64, op: HistoryEntry.Op, name: String, record: Record?, previous: Record?, now: Int64, user: UserAccount,
                             deviceID: String) -> HistoryEntry {
        HistoryEntry(seq: seq, timestamp: now, op: op, recordName: name, userRecordName: user.userRecordName, deviceID: deviceID,
                     record: record, prev: previous.flatMap { ChangeTag.seq(ofTag: $0.recordChangeTag) })
    }
}
