import CKCore

/// `ck zone changes`, `ck database changes`, `ck token expire`: CloudKit's change feeds, with
/// the device's bookmarks standing in for the tokens an app keeps.
enum ChangeCommands {
    static var all: [Command] { [tokenExpire] }

    static let tokenExpire: Command = Command(["token", "expire"], synopsis: "--zone Z",
        summary: "Expire every change token of a zone issued so far (fault injection)",
        details: """
        Drops the zone's retained history up to now, as CloudKit's server does on its own
        schedule: every earlier token of the zone (and every bookmark) then fails with
        CHANGE_TOKEN_EXPIRED, while fetching from the current head keeps working.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let db = try inv.database()
        let token = try db.expireTokens(zone: inv.globals.zone)
        inv.emit(["zoneID": db.zoneID(inv.globals.zone).json, "syncToken": .string(token)])
        return ExitCode.success
    }
}
