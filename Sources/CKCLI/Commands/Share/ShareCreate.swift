import CKCore
import CKModel

extension ShareCommands {
    static let create: CommandSpec = CommandSpec(synopsis: "(RECORD | --zone-wide) --zone Z [--participant APPLE-ID[:readOnly|readWrite]]… [--public-permission none|readOnly|readWrite] [--title T]",
        summary: "Share a record hierarchy, or a whole zone, of your private database",
        options: [
            OptionSpec("--participant", value: "APPLE-ID[:PERMISSION]", repeatable: true, help: "invite a user who signed in on this device: readOnly (default) or readWrite"),
            OptionSpec("--public-permission", value: "P", help: "none (default), readOnly or readWrite: anyone signed in who has the URL may accept"),
            OptionSpec("--title", value: "T", help: "the share's title (field cloudkit.title)"),
            OptionSpec("--zone-wide", help: "share every record of the zone (record cloudkit.zoneshare) instead of one hierarchy"),
        ],
        details: """
        Prints the records/modify response {records: [share]}: a record of type cloudkit.share
        with shortGUID, share (naming itself), publicPermission, participants (the owner first,
        each invited user INVITED), owner and currentUserParticipant. A hierarchy share sets `share` on RECORD; RECORD and every record
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
        guard let zone = inv.zoneGiven else { throw inv.usageError("a share lives in a custom zone: give --zone") }
        var perm = SharePermission.none
        if let raw = inv.args.value("--public-permission") {
            guard let v = SharePermission(argument: raw) else { throw inv.usageError("--public-permission must be none, readOnly or readWrite, not '\(raw)'") }
            perm = v
        }
        let req = ShareCreateRequest(zoneName: zone, recordName: p.first, participants: try participants(inv, inv.args.values("--participant")),
                                     publicPermission: perm, title: inv.args.value("--title"))
        inv.print(try inv.api.createShare(req, as: try inv.caller()))
        return ExitCode.success
    }
}
