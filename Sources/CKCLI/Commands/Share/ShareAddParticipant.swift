import CKCore

extension ShareCommands {
    static let addParticipant: CommandSpec = CommandSpec(synopsis: "SHARE APPLE-ID[:readOnly|readWrite]… [--zone Z]",
        summary: "Invite users to a share (owner)",
        details: shareArgument + "\nInvited users are INVITED until they accept; a removed user is invited again.\nPrints {records: [share]}.") { inv in
        let p = try inv.positionals(min: 2, what: "share and Apple ID")
        return try update(inv, p[0], .addParticipants(try participants(inv, Array(p.dropFirst()))))
    }
}
