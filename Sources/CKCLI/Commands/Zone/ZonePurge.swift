import CKCore

extension ZoneCommands {
    static let purge: CommandSpec = CommandSpec(synopsis: "NAME… [--if-exists]", summary: "Purge custom zones: records, history and tokens gone (CloudKit's purge)",
        options: [ifExistsOption("purged")],
        details: """
        CloudKit's purge, as when the user clears an app's data in Settings: like 'zone delete',
        the zone, every record in it and its change history are gone, and every change token of
        the zone is CHANGE_TOKEN_EXPIRED (exit 7) once a zone of that name exists again ('zone
        changes' on the missing zone is ZONE_NOT_FOUND). 'database changes' then reports the zone
        as {zoneID, deleted: true, purged: true}: an app drops what it cached of the zone rather
        than uploading it again. Prints {"zones": [{zoneID, deleted: true, purged: true}]}. Every
        name is checked first: one that is missing (ZONE_NOT_FOUND, unless --if-exists) purges
        nothing. Only custom zones of the private database can be purged, by their owner (a
        participant's purge of a shared zone is ACCESS_DENIED).
        """) { inv in
        let req = ZonesPurgeRequest(zoneNames: try names(inv), ifExists: inv.args.has("--if-exists"))
        inv.print(try inv.api.purgeZones(req, as: try inv.caller()))
        return ExitCode.success
    }
}
