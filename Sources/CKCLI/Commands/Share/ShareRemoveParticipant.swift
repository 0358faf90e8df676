import CKCore
import CKModel

extension ShareCommands {
    static let removeParticipant: CommandSpec = CommandSpec(synopsis: "SHARE APPLE-ID [--zone Z]",
        summary: "Remove a participant from a share (owner)",
        details: shareArgument + "\nThe participant becomes REMOVED: the zone leaves their shared database, whose\n'database changes' reports it deleted. Prints {records: [share]}.") { inv in
        let p = try inv.positionals(min: 2, max: 2, what: "share and Apple ID")
        do { try Validation.appleID(p[1]) } catch let e as CloudKitError { throw inv.usageError(e.reason) }
        return try update(inv, p[0], .removeParticipant(appleID: p[1]))
    }
}
