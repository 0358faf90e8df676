import CKModel
import CKStore

/// ck's share operations (`share create|add-participant|remove-participant|leave|delete`):
/// records/modify operations on the share record, in its owner's zone (Sharing/ShareWriter).
/// Each answers with the records/modify body: `{records: [share]}` (the share as the caller
/// sees it, ShareView) or, for a delete, `{records: [{recordName, deleted: true}]}`.
public struct ShareCreateRequest: Sendable {
    /// A custom zone of the caller's private database.
    public var zoneName: String
    /// The root of a hierarchy share; nil: the whole zone (the record `cloudkit.zoneshare`).
    public var recordName: String?
    public var participants: [ShareParticipantRequest]
    public var publicPermission: SharePermission
    /// The share's title (the field `cloudkit.title`).
    public var title: String?

    public init(zoneName: String, recordName: String?, participants: [ShareParticipantRequest] = [], publicPermission: SharePermission = .none,
                title: String? = nil) {
        self.zoneName = zoneName
        self.recordName = recordName
        self.participants = participants
        self.publicPermission = publicPermission
        self.title = title
    }
}

/// A change to a share found by URL, short GUID or name.
public enum ShareUpdate: Sendable, Equatable {
    /// The owner invites users (a removed one is invited again).
    case addParticipants([ShareParticipantRequest])
    /// The owner removes a participant, named by Apple ID.
    case removeParticipant(appleID: String)
    /// A participant leaves.
    case leave
    /// The owner deletes the share; the shared records stay.
    case delete
}

public struct ShareUpdateRequest: Sendable {
    /// A share URL or short GUID; or, with `zoneName`, the share record's name or the name of
    /// the record it shares; nil with `zoneName`: the zone's share.
    public var reference: String?
    public var zoneName: String?
    public var update: ShareUpdate

    public init(reference: String?, zoneName: String? = nil, update: ShareUpdate) {
        self.reference = reference
        self.zoneName = zoneName
        self.update = update
    }
}

extension CloudKitAPI {
    public func createShare(_ r: ShareCreateRequest, as caller: Caller) throws -> ItemsResponse {
        let ctx = try preflight(.recordsModify, caller, zones: [r.zoneName], need: .none)
        let loc = try Shares(ctx.db).createShare(zone: r.zoneName, record: r.recordName, participants: r.participants,
                                         publicPermission: r.publicPermission, title: r.title, options: ctx.options)
        return ItemsResponse("records", [.value(loc.json(shownTo: ctx.db.me, view: .participant, style: ctx.style, withZoneID: false) ?? .null)], for: ctx.audience)
    }

    public func updateShare(_ r: ShareUpdateRequest, as caller: Caller) throws -> ItemsResponse {
        if case .removeParticipant(let a) = r.update { try Validation.appleID(a) }
        let ctx = try preflight(.recordsModify, caller, zones: [r.zoneName ?? ZoneID.defaultZoneName], need: .none)
        let db = ctx.db
        let loc = try Shares(db).findShare(r.reference, zone: r.zoneName)
        // The caller's view before the change: a participant who leaves sees what they wrote.
        let view = loc.state.view(for: db.me)
        let change: ShareChange
        switch r.update {
        case .addParticipants(let p): change = .addParticipants(p)
        case .removeParticipant(let a): change = .removeParticipant(.email(a))
        case .leave: change = .leave
        case .delete:
            if let e = try Shares(db).changeShare(loc, .delete, options: ctx.options).error { throw e }
            return ItemsResponse("records", [.value(Record.tombstone(recordName: loc.share.recordName, zoneID: nil))], for: ctx.audience)
        }
        let changed = try Shares(db).updateShare(loc, change, options: ctx.options)
        return ItemsResponse("records", [.value(changed.json(shownTo: db.me, view: view, style: ctx.style, withZoneID: false) ?? .null)], for: ctx.audience)
    }
}
