import CKJSON
import CKModel
import CKStore

/// A remote's shares, kept here as shares (Docs/remote.md, "Shares and the shared database").
///
/// A share record is never written as a record: CloudKit changes shares only through share
/// operations, and so does ck (ShareWriter). A pull makes each share the remote has — by its
/// record name, on the same root, with the same public permission — in the zone of its owner's
/// private database, invites its participants and accepts it for those who accepted it there.
/// Users of the remote are users here: the caller's own remote name is the caller; any other
/// (the owner of a zone shared with the caller, another participant) is a user made here with
/// the user record name the remote gave them. So a zone another user shares with the clone's
/// user is, here as in CloudKit, their zone, shown in the caller's shared database.
struct RemoteShareMirror {
    let api: CloudKitAPI
    let zone: RemoteZone
    let state: TrackedZone
    /// Who pulls: the device's user, in the private or the shared database.
    let caller: Caller
    /// The caller the zone's records are written as here: its owner, in their private database.
    let owner: Caller
    /// The caller's user record name here (nil: nobody signed in, as a public database's key
    /// pulls), and on the remote (nil: no share told it).
    let localMe: String?
    let remoteMe: String?

    /// The share records of the zone that moved since the base.
    let pendingShares: [NameKey]

    /// `remoteUser`: asks the remote who the caller is there (`users/caller`), when no share
    /// record says it.
    init(api: CloudKitAPI, zone z: RemoteZone, state: TrackedZone, pending: [NameKey], caller: Caller, device: String,
         remoteUser: (() throws -> String?)?) throws {
        self.api = api
        self.zone = z
        self.state = state
        self.caller = caller
        pendingShares = pending.filter { state.fetched[$0]?.recordType == ShareInfo.recordType || state.base[$0]?.recordType == ShareInfo.recordType }
        let me = try api.principal(caller).user?.userRecordName
        localMe = me
        // Every share record a user may read names them (`currentUserParticipant`) and the owner.
        var remoteMe: String?, ownerEmail: String?
        for (key, r) in state.fetched where r.recordType == ShareInfo.recordType {
            guard let share = try state.fetchedRecord(key) else { continue }
            remoteMe = remoteMe ?? share["currentUserParticipant"]?["userIdentity"]?["userRecordName"]?.stringValue
            ownerEmail = ownerEmail ?? share["owner"]?["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue
            if remoteMe != nil { break }
        }
        if remoteMe == nil, !pendingShares.isEmpty { remoteMe = try remoteUser?() }
        self.remoteMe = remoteMe
        var o = caller
        o.deviceID = device
        if caller.scope == .shared {
            guard let name = z.ownerRecordName else {
                throw CloudKitError(.internalError, "remote '\(z.remote)' zone '\(z.zoneName)' of the shared database has no owner")
            }
            guard let me else {
                throw CloudKitError(.authenticationRequired, "the shared database is this device's user's: sign in (ck account signin)")
            }
            // CloudKit shows a user's own zones in their private database, never in their
            // shared one: a remote that says otherwise must not write the caller's own zones.
            let user = name == remoteMe ? me : try api.localUser(remote: name, email: ownerEmail)
            guard user != me else {
                throw CloudKitError(.badRequest, "remote '\(z.remote)' zone '\(Names.describe(z.zoneName))' of the shared database is owned by the caller; a user's own zones are in their private database")
            }
            o = Caller(container: caller.container, environment: caller.environment, scope: .private, user: .userRecordName(user), deviceID: device)
        }
        owner = o
    }

    /// A remote user as a user here.
    func local(_ remote: String, email: String?) throws -> String {
        if remote == remoteMe, let me = localMe { return me }
        return try api.localUser(remote: remote, email: email)
    }

    /// Makes the zone's shares here as the remote has them; each share settled moves its base.
    /// `changed`: the zone's records written by this merge, as the remote has them (a new
    /// hierarchy share's root is among them: sharing a record changes it).
    func apply(changed: [JSONValue], log: RemoteTrackingLog, into report: inout MergeReport) throws {
        var settled: [JSONValue] = [], gone: [String] = []
        for key in pendingShares {
            do {
                if let share = try state.fetchedRecord(key) {
                    try make(share, name: key.string, changed: changed)
                    settled.append(share)
                } else {
                    try remove(key.string)
                    gone.append(key.string)
                }
                report.saved.append(key.string)
            } catch let e as CloudKitError {
                var e = e
                e.reason = "share '\(key.string)' of remote '\(zone.remote)' zone '\(zone.zoneName)': \(e.reason)"
                report.failures.append(e)
            }
        }
        if !settled.isEmpty || !gone.isEmpty {
            var c = RemoteTrackingLog.Change()
            (c.base, c.baseDeleted) = (settled, gone)
            try log.append(c)
        }
    }

    private func ownerShares() throws -> Shares { Shares(try api.preflight(nil, owner, zones: [zone.zoneName], need: .write).db) }

    private func existing(_ name: String) throws -> ShareLocation? {
        let ctx = try api.preflight(nil, owner, zones: [zone.zoneName], need: .write)
        guard let r = try ctx.db.zone(zone.zoneName).snapshot().record(named: name), let s = try ShareState(r) else { return nil }
        return ShareLocation(owner: r.zoneID.ownerRecordName, zoneName: zone.zoneName, share: r, state: s)
    }

    private func remove(_ name: String) throws {
        // Deleting a shared hierarchy's root deletes its share: it may be gone already.
        guard let loc = try existing(name) else { return }
        if case .failed(let e) = try ownerShares().changeShare(loc, .delete), e.code != .notFound { throw e }
    }

    /// One remote participant, as a user here.
    private struct Wanted {
        var user: String
        var permission: SharePermission
        var accepted: Bool
    }

    private func make(_ share: JSONValue, name: String, changed: [JSONValue]) throws {
        let publicPermission = share["publicPermission"]?.stringValue.flatMap(SharePermission.init(rawValue:)) ?? .none
        var wanted: [Wanted] = []
        let participants = share["participants"]?.arrayValue ?? []
        // Checked before any user is made for them: a share CloudKit could not hold makes nothing.
        guard participants.count <= Limits.participantsPerShare else {
            throw CloudKitError(.limitExceeded, "it names \(participants.count) participants; a share has at most \(Limits.participantsPerShare)")
        }
        for p in participants {
            guard p["type"]?.stringValue != ShareParticipantType.owner.rawValue, p["acceptanceStatus"]?.stringValue != ShareAcceptance.removed.rawValue,
                  let remote = p["userIdentity"]?["userRecordName"]?.stringValue,
                  let perm = p["permission"]?.stringValue.flatMap(SharePermission.init(rawValue:)), perm != .none else { continue }
            let user = try local(remote, email: p["userIdentity"]?["lookupInfo"]?["emailAddress"]?.stringValue)
            if user == ownerUser { continue }
            wanted.append(Wanted(user: user, permission: perm, accepted: p["acceptanceStatus"]?.stringValue == ShareAcceptance.accepted.rawValue))
        }
        var loc: ShareLocation
        if let found = try existing(name) {
            loc = found
            let shares = try ownerShares()
            if loc.state.publicPermission != publicPermission { loc = try shares.updateShare(loc, .setPublicPermission(publicPermission)) }
            let invite = wanted.filter { w in
                guard let p = loc.state.participant(w.user), p.acceptanceStatus != .removed else { return true }
                return p.permission != w.permission
            }
            if !invite.isEmpty { loc = try shares.updateShare(loc, .addParticipants(invite.map { ShareParticipantRequest(user: .userRecordName($0.user), permission: $0.permission) })) }
            for p in loc.state.participants where p.type != .owner && p.acceptanceStatus != .removed && !wanted.contains(where: { $0.user == p.userRecordName }) {
                loc = try shares.updateShare(loc, .removeParticipant(.userRecordName(p.userRecordName)))
            }
        } else {
            var root: String?
            if name != ShareInfo.zoneWideName {
                root = try changed.first { $0["share"]?["recordName"]?.stringValue == name }?["recordName"]?.stringValue ?? sharedRoot(name)
                guard root != nil else {
                    throw CloudKitError(.notFound, "the record it shares is not among the records fetched; pull again")
                }
            }
            let title = share["fields"]?[ShareInfo.titleField]?["value"]?.stringValue
            loc = try ownerShares().createShare(zone: zone.zoneName, record: root,
                                               participants: wanted.map { ShareParticipantRequest(user: .userRecordName($0.user), permission: $0.permission) },
                                               publicPermission: publicPermission, title: title, name: root == nil ? nil : name)
        }
        for w in wanted where w.accepted && loc.state.participant(w.user)?.acceptanceStatus != .accepted {
            try accept(loc, as: w.user)
        }
    }

    /// The record whose `share` names `name`, among everything fetched (a root taken by an
    /// earlier pull whose share could not be made then).
    private func sharedRoot(_ name: String) throws -> String? {
        for key in state.fetched.keys where state.fetched[key]?.recordType != ShareInfo.recordType {
            if let r = try state.fetchedRecord(key), r["share"]?["recordName"]?.stringValue == name { return key.string }
        }
        return nil
    }

    private var ownerUser: String? { if case .userRecordName(let u) = owner.user { return u }; return caller.scope == .private ? localMe : nil }

    /// Accepts a share as a participant who accepted it on the remote.
    private func accept(_ loc: ShareLocation, as user: String) throws {
        let p = Caller(container: caller.container, environment: caller.environment, scope: .shared, user: .userRecordName(user), deviceID: owner.deviceID)
        let ctx = try api.preflight(nil, p, need: .write)
        guard let guid = loc.share.shortGUID else { throw CloudKitError.internalError("share '\(loc.share.recordName)' has no short GUID") }
        let found = try Shares(ctx.db).share(shortGUID: guid)
        try ctx.db.sharedDatabase?.refuseZoneNameClash(found)
        _ = try Shares(ctx.db).updateShare(found, .accept)
    }
}

extension CloudKitAPI {
    /// The user here a remote's user is: made on first use with the remote's user record name
    /// (and its Apple ID, when the remote told it and no user here has it).
    func localUser(remote name: String, email: String?) throws -> String {
        try store.accounts.registerRemoteUser(userRecordName: name, appleID: email).userRecordName
    }
}

extension CloudKitAPI {
    /// A zone gone from the caller's shared database on the remote: its owner stopped sharing
    /// it with them, or deleted it. Neither is a deletion of the owner's records here — another
    /// user of this data directory may still share the zone (it is one zone here, the owner's)
    /// — so the caller leaves its shares here, as they are no longer a participant there, and
    /// their tracking of the zone starts from nothing (no base: nothing of it is theirs to push).
    public func leaveRemoteSharedZone(_ z: RemoteZone, as caller: Caller) throws {
        guard caller.scope == .shared else { throw CloudKitError.internalError("only a zone of the shared database is left") }
        var c = RemoteTrackingLog.Change()
        (c.reset, c.keepBase, c.complete) = (true, false, true)
        let log = try trackingLog(z, caller)
        guard let owner = z.ownerRecordName else { try log.append(c); return }
        var participant = caller
        participant.deviceID = Self.remoteDevice(z.remote)
        let ctx = try preflight(nil, participant, need: .write)
        for loc in try Shares(ctx.db).listShares(zone: z.zoneName) where loc.owner == owner {
            _ = try Shares(ctx.db).updateShare(loc, .leave)
        }
        ctx.db.sharedDatabase?.forgetSharedZones()
        try log.append(c)
    }
}
