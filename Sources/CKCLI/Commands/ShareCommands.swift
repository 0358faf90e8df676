import CKCore

/// `ck share create|accept|list|get|add-participant|remove-participant|leave|delete`:
/// CKShare between the users of this device (Docs/sharing.md).
enum ShareCommands {
    static var all: [Command] { [create, accept, list, get, addParticipant, removeParticipant, leave, delete] }

    static let shareArgument = "SHARE is a share URL (https://www.icloud.com/share/…), its short GUID, or with --zone the\nshare record's name or the name of the record it shares."

    static func participants(_ inv: Invocation, _ raw: [String]) throws -> [ShareParticipantRequest] {
        try raw.map { a in
            do { return try ShareParticipantRequest.parse(argument: a) } catch let e as CloudKitError {
                throw inv.usageError("--participant '\(a)': \(e.reason)")
            }
        }
    }

    /// The zone named with --zone, if any (commands that find shares by URL need none).
    static func zoneGiven(_ inv: Invocation) -> String? { inv.globals.zones.isEmpty ? nil : inv.globals.zone }

    static func emitShares(_ inv: Invocation, _ db: Database, _ shares: [ShareLocation], withZoneID: Bool = true) {
        inv.emit(["records": .array(shares.map { db.shareJSON($0, style: inv.style, withZoneID: withZoneID) })], listKey: "records")
    }

    static let create: Command = Command(["share", "create"],
        synopsis: "(RECORD | --zone-wide) --zone Z [--participant APPLE-ID[:readOnly|readWrite]]… [--public-permission none|readOnly|readWrite] [--title T]",
        summary: "Share a record hierarchy, or a whole zone, of your private database", endpoint: "records/modify",
        options: [
            OptionSpec("--participant", value: "APPLE-ID[:PERMISSION]", repeatable: true, help: "invite a user who signed in on this device: readOnly (default) or readWrite"),
            OptionSpec("--public-permission", value: "P", help: "none (default), readOnly or readWrite: anyone signed in who has the URL may accept"),
            OptionSpec("--title", value: "T", help: "the share's title (field cloudkit.title)"),
            OptionSpec("--zone-wide", help: "share every record of the zone (record cloudkit.zoneshare) instead of one hierarchy"),
        ],
        details: """
        Prints the records/modify response {records: [share]}: a record of type cloudkit.share
        with shortGUID, publicPermission, participants (the owner first, each invited user
        INVITED) and owner. A hierarchy share sets `share` on RECORD; RECORD and every record
        whose parent chain leads to it are shared, including records saved later. A record
        already in a share, or with a shared root below it (or in a zone with a zone-wide
        share), is ALREADY_SHARED (exit 4). Deleting RECORD later deletes the share too.
        Participants accept with 'ck share accept SHORTGUID' (or the URL
        https://www.icloud.com/share/SHORTGUID); the zone then appears in their shared database.
        """) { inv in
        let p = try inv.positionals(max: 1, what: "record name")
        let zoneWide = inv.args.has("--zone-wide")
        if zoneWide && !p.isEmpty { throw inv.usageError("--zone-wide shares the whole zone; it takes no RECORD") }
        if !zoneWide && p.isEmpty { throw inv.usageError("missing record name (or --zone-wide)") }
        guard let zone = zoneGiven(inv) else { throw inv.usageError("a share lives in a custom zone: give --zone") }
        var perm = SharePermission.none
        if let raw = inv.args.value("--public-permission") {
            guard let v = SharePermission(argument: raw) else { throw inv.usageError("--public-permission must be none, readOnly or readWrite, not '\(raw)'") }
            perm = v
        }
        let people = try participants(inv, inv.args.values("--participant"))
        let db = try inv.database()
        let share = try db.createShare(zone: zone, record: p.first, participants: people, publicPermission: perm, title: inv.args.value("--title"))
        let loc = ShareLocation(owner: share.zoneID.ownerRecordName, zoneName: zone, share: share, state: try ShareState(share)!)
        emitShares(inv, db, [loc], withZoneID: false)
        return ExitCode.success
    }

    static let accept: Command = Command(["share", "accept"], synopsis: "SHARE-URL|SHORTGUID",
        summary: "Accept a share you were invited to (or a public one): its zone joins your shared database", endpoint: "records/accept",
        details: """
        Run as the invited user (--as APPLE-ID, $CK_USER, or the device's account). Prints
        {results: [{zoneID, shortGUID, share, ownerIdentity, rootRecordName, participantStatus,
        participantPermission, participantType, databaseScope, …}]} (the ShortGUID result
        dictionary). A user who is not invited to a share whose public permission is none gets
        ACCESS_DENIED (exit 5); an unknown short GUID is NOT_FOUND (exit 3). Accepting twice
        changes nothing.
        """) { inv in
        let ref = try inv.positionals(min: 1, max: 1, what: "share URL or short GUID")[0]
        let db = try inv.database(.shared)
        let loc = try db.acceptShare(ref)
        inv.emit(["results": [db.acceptedShareJSON(loc, style: inv.style)]], listKey: "results")
        return ExitCode.success
    }

    static let list: Command = Command(["share", "list"], synopsis: "[--zone Z]",
        summary: "List your shares (private database) or the shares you take part in (--db shared)", endpoint: "records/query",
        details: """
        In the private database: the shares you own (in zone Z, if given). In the shared
        database: the shares you are invited to (INVITED) or accepted, across owners — which is
        how an invited user finds the short GUID to accept. Prints {records: [share]}.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let db = try inv.database()
        emitShares(inv, db, try db.listShares(zone: zoneGiven(inv)))
        return ExitCode.success
    }

    static let get: Command = Command(["share", "get"], synopsis: "[SHARE] [--zone Z]", summary: "Show a share record", endpoint: "records/lookup",
        details: shareArgument + "\nWith only --zone: the zone's share, when it has one.\nPrints {records: [share]}.") { inv in
        let p = try inv.positionals(max: 1, what: "share")
        let db = try inv.database()
        emitShares(inv, db, [try db.findShare(p.first, zone: zoneGiven(inv))])
        return ExitCode.success
    }

    static let addParticipant: Command = Command(["share", "add-participant"], synopsis: "SHARE APPLE-ID[:readOnly|readWrite]… [--zone Z]",
        summary: "Invite users to a share (owner)", endpoint: "records/modify",
        details: shareArgument + "\nInvited users are INVITED until they accept; a removed user is invited again.\nPrints {records: [share]}.") { inv in
        let p = try inv.positionals(min: 2, what: "share and Apple ID")
        let people = try participants(inv, Array(p.dropFirst()))
        let db = try inv.database()
        let loc = try db.updateShare(try db.findShare(p[0], zone: zoneGiven(inv)), .addParticipants(people))
        emitShares(inv, db, [loc], withZoneID: false)
        return ExitCode.success
    }

    static let removeParticipant: Command = Command(["share", "remove-participant"], synopsis: "SHARE APPLE-ID [--zone Z]",
        summary: "Remove a participant from a share (owner)", endpoint: "records/modify",
        details: shareArgument + "\nThe participant becomes REMOVED: the zone leaves their shared database, whose\n'database changes' reports it deleted. Prints {records: [share]}.") { inv in
        let p = try inv.positionals(min: 2, max: 2, what: "share and Apple ID")
        do { try Validation.appleID(p[1]) } catch let e as CloudKitError { throw inv.usageError(e.reason) }
        let db = try inv.database()
        let loc = try db.updateShare(try db.findShare(p[0], zone: zoneGiven(inv)), .removeParticipant(.email(p[1])))
        emitShares(inv, db, [loc], withZoneID: false)
        return ExitCode.success
    }

    static let leave: Command = Command(["share", "leave"], synopsis: "SHARE [--zone Z]", summary: "Leave a share you take part in", endpoint: "records/modify",
        details: shareArgument + "\nRun as the participant (with --db shared, --zone names the shared zone). You become\nREMOVED; the zone leaves your shared database. Prints {records: [share]}.") { inv in
        let p = try inv.positionals(min: 1, max: 1, what: "share")
        let db = try inv.database()
        let loc = try db.updateShare(try db.findShare(p[0], zone: zoneGiven(inv)), .leave)
        emitShares(inv, db, [loc], withZoneID: false)
        return ExitCode.success
    }

    static let delete: Command = Command(["share", "delete"], synopsis: "SHARE [--zone Z]", summary: "Delete a share (owner); the shared records stay", endpoint: "records/modify",
        details: shareArgument + "\nThe share record goes and the root's `share` with it; the records stay in your zone,\nand the zone leaves every participant's shared database. Prints {records: [{recordName, deleted: true}]}.") { inv in
        let p = try inv.positionals(min: 1, max: 1, what: "share")
        let db = try inv.database()
        let loc = try db.findShare(p[0], zone: zoneGiven(inv))
        let r = try db.changeShare(loc, .delete)
        if let e = r.error { throw e }
        inv.emit(["records": [Record.tombstone(recordName: loc.share.recordName, zoneID: nil)]], listKey: "records")
        return ExitCode.success
    }
}
