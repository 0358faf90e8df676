import CKModel

/// The write side of sharing, inside a records/modify transaction: share operations (create,
/// invite, remove, accept, leave, delete) and the permission check on a participant's writes
/// into the owner's zone. Everything goes into the owner's zone history like any write, so the
/// owner's feeds and subscriptions see participants' changes.

/// Which share governs a record, and what a user may do with it.
package enum ShareVisibility {
    /// The share a record belongs to: a share record is its own; in a zone with a zone-wide
    /// share, that share; otherwise the share of the first record up its `parent` chain whose
    /// `share` names an existing share record. `lookup` reads a record of the zone.
    package static func share(of r: Record, lookup: (String) throws -> Record?) throws -> ShareState? {
        if r.recordType == ShareInfo.recordType { return try ShareState(r) }
        if let zw = try lookup(ShareInfo.zoneWideName), let s = try ShareState(zw) { return s }
        var current = r
        var seen: Set<NameKey> = [NameKey(r.recordName)]
        while true {
            if let s = current.share, let sr = try lookup(s), let state = try ShareState(sr) { return state }
            guard let p = current.parent, seen.insert(NameKey(p)).inserted, seen.count <= 100_000, let next = try lookup(p) else { return nil }
            current = next
        }
    }

    /// A user's permission on a record: nil when it is not shared with them.
    package static func permission(_ user: String, on r: Record, lookup: (String) throws -> Record?) throws -> SharePermission? {
        try share(of: r, lookup: lookup)?.permission(of: user)
    }
}

extension RecordWriter {
    private var isOwner: Bool { access == nil && scope == .private && zone.zoneID.ownerRecordName == user.userRecordName }

    /// A record as the writer may see it: to a participant, only a record shared with them
    /// (nil for one that is not, as for one that does not exist); to anyone else, the record.
    func visibleToWriter(_ r: Record?, in tx: Transaction) throws -> Record? {
        guard let r = r, let a = access else { return r }
        return try ShareVisibility.permission(a.participant, on: r, lookup: { try tx.record($0) }) == nil ? nil : r
    }

    /// Handles what sharing decides about an operation: a share operation is carried out
    /// here (its result returned); a participant's write is checked, a delete's cascade
    /// checked and a deleted root's share deleted (ShareDeletes), a move under a shared
    /// record checked (ShareHierarchy) — nil: go on as usual. `hidden`: the operation names a
    /// record of the owner's zone the participant may not see (`existing` is then nil).
    func applySharing(_ op: RecordOperation, name: String, existing: Record?, hidden: Bool = false, in tx: Transaction) throws -> OperationResult? {
        if let change = op.share { return try applyShare(change, op: op, name: name, existing: existing, in: tx) }
        if existing?.recordType == ShareInfo.recordType || op.recordType == ShareInfo.recordType {
            if op.type.isDelete, existing != nil {
                return try applyShare(.delete, op: op, name: name, existing: existing, in: tx)
            }
            if !isOwner { throw denied(name, "only the owner of a share can change it") }
            throw CloudKitError(.badRequest, "share record '\(Names.describe(name))' changes only through share operations (inviting and removing participants, deleting the share)", recordName: name)
        }
        if let a = access { try checkParticipantWrite(a, op, name: name, existing: existing, hidden: hidden, in: tx) }
        // Shares live in custom zones of private databases only.
        if scope == .private, !zone.zoneID.isDefault {
            if let e = existing {
                if op.type.isDelete { try prepareDelete(e, in: tx) } else { try refuseNestedShare(op, name: name, existing: e, in: tx) }
            } else if !op.type.isDelete {
                // A new record can have children already (records whose parent it names).
                try refuseNestedShare(op, name: name, existing: nil, in: tx)
            }
        }
        return nil
    }

    package func denied(_ name: String, _ why: String) -> CloudKitError { CloudKitError(.accessDenied, why, recordName: name, zoneID: zone.zoneID) }

    /// A participant may change or delete records shared with them read-write, create records
    /// whose parent is such a record (or any record, under a zone-wide read-write share), and
    /// never delete a hierarchy's root (only the owner can, as CloudKit has it). A record not
    /// shared with them does not exist for them (`existing` is nil): an update, replace or
    /// delete of its name is NOT_FOUND in the words a missing record gets (RecordWriter), and a
    /// create of it (or a force save, which would create) is refused as any create outside the
    /// share — the same words whether its parent is missing, or in the share, and whether the
    /// hidden record is there or not (`outsideShare`).
    private func checkParticipantWrite(_ a: ShareAccess, _ op: RecordOperation, name: String, existing: Record?, hidden: Bool, in tx: Transaction) throws {
        let lookup: (String) throws -> Record? = { try tx.record($0) }
        func require(_ r: Record, _ what: String, parent: Bool = false) throws {
            guard let p = try ShareVisibility.permission(a.participant, on: r, lookup: lookup) else {
                throw denied(name, "\(parent ? "parent " : "")record '\(Names.describe(r.recordName))' is not shared with this user")
            }
            if p != .readWrite { throw denied(name, "this user's permission on the share is \(p.rawValue); READ_WRITE is needed \(what)") }
        }
        if let e = existing {
            try require(e, op.type.isDelete ? "to delete '\(Names.describe(name))'" : "to change '\(Names.describe(name))'")
            if op.type.isDelete, e.share != nil {
                throw denied(name, "only the owner can delete the root record of a shared hierarchy ('\(Names.describe(name))')")
            }
        } else if op.type.isDelete || op.type.checksTag {
            // Nothing to delete, update or replace: NOT_FOUND (RecordWriter).
            return
        }
        if let p = op.parent {
            guard let parent = try tx.record(p) else {
                throw denied(name, "parent record '\(Names.describe(p))' is not shared with this user")
            }
            try require(parent, "to add records under '\(Names.describe(p))'", parent: true)
        } else if existing == nil {
            if let zw = try tx.record(ShareInfo.zoneWideName), try ShareState(zw) != nil {
                try require(zw, "to add records to the zone")
            } else {
                throw outsideShare(name)
            }
        }
        // Under a shared parent, but the name is a record the participant may not see: it
        // cannot be created, and saying why would say it exists.
        if hidden { throw outsideShare(name) }
    }

    /// The refusal of a participant's create outside their share: without a parent in a
    /// hierarchy share, or with the name of a record of the owner's zone not shared with them.
    /// One answer for both, whatever the zone holds.
    func outsideShare(_ name: String) -> CloudKitError {
        denied(name, "a participant of a hierarchy share creates new records only under a shared record, with a name no other record of the owner's zone has: give the new record a parent in the share (and a name of its own)")
    }

    // MARK: share operations

    private var accounts: AccountStore { AccountStore(paths: assets.paths, clock: .system) }

    private func resolve(_ l: ShareUserLookup, name: String) throws -> UserAccount {
        let found: UserAccount?
        switch l {
        case .email(let e): found = try accounts.user(appleID: e)
        case .userRecordName(let u): found = try accounts.user(recordName: u)
        }
        guard let u = found else {
            var e = CloudKitError(.notFound, "no iCloud user '\(l.description)' has signed in on this device", recordName: name)
            if case .email(let a) = l { e.nextStep = .signInUser(appleID: a) }
            throw e
        }
        return u
    }

    private func stamp() -> ChangeStamp { ChangeStamp(timestamp: now, userRecordName: user.userRecordName, deviceID: deviceID) }

    /// Writes a record version: a new tag, a history entry, a change for subscriptions.
    @discardableResult
    private func write(_ r: Record, replacing previous: Record?, in tx: Transaction) throws -> Record {
        var record = r
        let seq = tx.takeSeq()
        record.recordChangeTag = ChangeTag.tag(for: seq)
        record.modified = stamp()
        if previous == nil { record.created = record.modified }
        try tx.reindex(source: record.recordName, old: previous, new: record)
        tx.put(record)
        tx.entries.append(historyEntry(seq: seq, op: .save, name: record.recordName, record: record, previous: previous))
        tx.changes.append(RecordChange(kind: previous == nil ? .created : .updated, recordName: record.recordName, seq: seq, before: previous, after: record,
                                       userRecordName: user.userRecordName, deviceID: deviceID, timestamp: now))
        return record
    }

    func erase(_ previous: Record, in tx: Transaction) throws {
        let seq = tx.takeSeq()
        try tx.reindex(source: previous.recordName, old: previous, new: nil)
        tx.remove(previous.recordName)
        tx.entries.append(historyEntry(seq: seq, op: .delete, name: previous.recordName, record: nil, previous: previous))
        tx.changes.append(RecordChange(kind: .deleted, recordName: previous.recordName, seq: seq, before: previous, after: nil,
                                       userRecordName: user.userRecordName, deviceID: deviceID, timestamp: now))
    }

    /// A zone history entry, as RecordWriter writes them.
    private func historyEntry(seq: Int64, op: HistoryEntry.Op, name: String, record: Record?, previous: Record?) -> HistoryEntry {
        RecordWriter.historyEntry(seq: seq, op: op, name: name, record: record, previous: previous, now: now, user: user, deviceID: deviceID)
    }

    private func invite(_ requests: [ShareParticipantRequest], into state: inout ShareState, name: String) throws {
        for req in requests {
            let u = try resolve(req.user, name: name)
            if u.userRecordName == user.userRecordName {
                throw CloudKitError(.badRequest, "the owner of a share is its participant already; invite other users", recordName: name)
            }
            var p = state.participant(u.userRecordName)
                ?? ShareParticipant(userRecordName: u.userRecordName, emailAddress: u.appleID, type: .user, permission: req.permission, acceptanceStatus: .invited)
            p.permission = req.permission
            if p.acceptanceStatus == .removed { p.acceptanceStatus = .invited }
            if p.type == .publicUser { p.type = .user }
            state.set(p)
        }
        let taking = state.participants.filter { $0.acceptanceStatus != .removed }.count
        if taking > Limits.participantsPerShare {
            throw CloudKitError(.limitExceeded, "a share has at most \(Limits.participantsPerShare) participants, its owner included; this one would have \(taking)", recordName: name)
        }
    }

    private func applyShare(_ change: ShareChange, op: RecordOperation, name: String, existing: Record?, in tx: Transaction) throws -> OperationResult {
        if zone.zoneID.isDefault {
            throw CloudKitError(.badRequest, "records in the default zone cannot be shared; CloudKit shares records of custom zones of the private database", recordName: name, zoneID: zone.zoneID)
        }
        if case .create(let forRecord, let tag, let publicPermission, let participants, let title) = change {
            guard isOwner else { throw denied(name, "only the zone's owner can share its records, from their private database") }
            return .saved(try createShare(name: name, forRecord: forRecord, tag: tag, publicPermission: publicPermission,
                                          participants: participants, title: title, in: tx))
        }
        guard let e = existing, var state = try ShareState(e) else {
            throw CloudKitError(.notFound, "share '\(Names.describe(name))' not found", recordName: name, zoneID: zone.zoneID)
        }
        if let t = op.recordChangeTag, t != e.recordChangeTag {
            throw CloudKitError(.conflict, "share '\(Names.describe(name))' changed on the server (tag \(e.recordChangeTag), yours \(t))", recordName: name, serverRecord: e)
        }
        let me = user.userRecordName
        switch change {
        case .create: fatalError("handled above")
        case .addParticipants(let reqs):
            guard isOwner else { throw denied(name, "only the owner of a share can invite participants") }
            try invite(reqs, into: &state, name: name)
        case .removeParticipant(let who):
            guard isOwner else { throw denied(name, "only the owner of a share can remove participants") }
            let u = try resolve(who, name: name)
            guard var p = state.participant(u.userRecordName), p.type != .owner, p.acceptanceStatus != .removed else {
                throw CloudKitError(.notFound, "'\(who.description)' is not a participant of share '\(Names.describe(name))'", recordName: name)
            }
            p.acceptanceStatus = .removed
            state.set(p)
        case .setPublicPermission(let perm):
            guard isOwner else { throw denied(name, "only the owner of a share can change its public permission") }
            state.publicPermission = perm
            // CloudKit drops public participants when a share stops being public.
            if perm == .none { state.participants = state.participants.map { var p = $0; if p.type == .publicUser { p.acceptanceStatus = .removed }; return p } }
        case .accept:
            if let p = state.participant(me) {
                switch p.acceptanceStatus {
                case .accepted: return .saved(e)
                case .invited:
                    var q = p
                    q.acceptanceStatus = .accepted
                    state.set(q)
                case .removed:
                    guard state.publicPermission != .none else { throw denied(name, "this user was removed from the share; only its owner can invite them again") }
                    var q = p
                    q.acceptanceStatus = .accepted
                    q.type = .publicUser
                    q.permission = state.publicPermission
                    state.set(q)
                }
            } else {
                guard state.publicPermission != .none else {
                    throw denied(name, "this user is not invited to the share; its owner must add them as a participant (or make it public)")
                }
                state.set(ShareParticipant(userRecordName: me, emailAddress: try resolve(.userRecordName(me), name: name).appleID, type: .publicUser,
                                           permission: state.publicPermission, acceptanceStatus: .accepted))
            }
        case .leave:
            guard var p = state.participant(me), p.acceptanceStatus != .removed else {
                throw CloudKitError(.notFound, "this user is not a participant of share '\(Names.describe(name))'", recordName: name)
            }
            if p.type == .owner { throw CloudKitError(.badRequest, "the owner cannot leave a share; delete it instead", recordName: name) }
            p.acceptanceStatus = .removed
            state.set(p)
        case .delete:
            guard isOwner else { throw denied(name, "only the owner of a share can delete it") }
            try erase(e, in: tx)
            if let root = state.rootRecordName, var r = try tx.record(root), r.share.map({ NameKey($0) }) == NameKey(name) {
                let before = r
                r.share = nil
                try write(r, replacing: before, in: tx)
            }
            return .deleted(recordName: name, zoneID: zone.zoneID)
        }
        var updated = e
        updated.shareInfo = state.info
        return .saved(try write(updated, replacing: e, in: tx))
    }

    private func createShare(name requested: String, forRecord: String?, tag: String?, publicPermission: SharePermission,
                             participants: [ShareParticipantRequest], title: String?, in tx: Transaction) throws -> Record {
        let zoneWide = try tx.record(ShareInfo.zoneWideName)
        var root: Record?
        if let rootName = forRecord {
            guard let r = try tx.record(rootName) else {
                throw CloudKitError(.notFound, "record '\(Names.describe(rootName))' to share not found", recordName: requested, zoneID: zone.zoneID)
            }
            if r.recordType == ShareInfo.recordType { throw CloudKitError(.badRequest, "a share record cannot itself be shared", recordName: requested) }
            if let t = tag, t != r.recordChangeTag {
                throw CloudKitError(.conflict, "record '\(Names.describe(rootName))' changed on the server (tag \(r.recordChangeTag), yours \(t))", recordName: rootName, serverRecord: r)
            }
            if zoneWide != nil {
                throw CloudKitError(.alreadyShared, "zone '\(Names.describe(zone.zoneID.zoneName))' has a zone-wide share; its records cannot be shared again by hierarchy", recordName: rootName, zoneID: zone.zoneID)
            }
            if let s = try ShareVisibility.share(of: r, lookup: { try tx.record($0) }) {
                throw CloudKitError(.alreadyShared, "record '\(Names.describe(rootName))' is already in share '\(Names.describe(s.recordName))'\(s.rootRecordName.map { $0 == rootName ? "" : " (of its ancestor '\(Names.describe($0))')" } ?? "")", recordName: rootName, zoneID: zone.zoneID)
            }
            try refuseSharedDescendants(of: rootName, in: tx)
            root = r
        } else {
            if zoneWide != nil {
                throw CloudKitError(.alreadyShared, "zone '\(Names.describe(zone.zoneID.zoneName))' already has a zone-wide share", recordName: ShareInfo.zoneWideName, zoneID: zone.zoneID)
            }
            for other in try ShareRegistry(zone: zone).shareNames() where try tx.record(other).map({ try ShareState($0) != nil }) == true {
                throw CloudKitError(.alreadyShared, "zone '\(Names.describe(zone.zoneID.zoneName))' has hierarchy shares (such as '\(Names.describe(other))'); delete them before sharing the whole zone", recordName: ShareInfo.zoneWideName, zoneID: zone.zoneID)
            }
        }
        let name = root == nil ? ShareInfo.zoneWideName : requested
        if root != nil && name == ShareInfo.zoneWideName {
            throw CloudKitError(.badRequest, "'\(ShareInfo.zoneWideName)' names the zone-wide share; a hierarchy share takes another name", recordName: name)
        }
        if try tx.record(name) != nil {
            throw CloudKitError(.exists, "record to insert already exists: '\(Names.describe(name))'", recordName: name)
        }
        let owner = ShareParticipant(userRecordName: user.userRecordName, emailAddress: user.appleID, type: .owner, permission: .readWrite, acceptanceStatus: .accepted)
        var state = ShareState(recordName: name, publicPermission: publicPermission, participants: [owner], rootRecordName: root?.recordName)
        try invite(participants, into: &state, name: name)
        let guid = root?.shortGUID ?? Identifiers.newShortGUID()
        var fields: [String: RecordField] = [:]
        if let t = title { fields[ShareInfo.titleField] = RecordField(type: FieldType(tag: "STRING")!, value: .string(t)) }
        var share = Record(recordName: name, recordType: ShareInfo.recordType, recordChangeTag: "", fields: fields, created: stamp(), modified: stamp(),
                           zoneID: zone.zoneID, shortGUID: guid)
        share.shareInfo = state.info
        let written = try write(share, replacing: nil, in: tx)
        if var r = root {
            let before = r
            r.share = name
            r.shortGUID = guid
            try write(r, replacing: before, in: tx)
        }
        return written
    }
}
