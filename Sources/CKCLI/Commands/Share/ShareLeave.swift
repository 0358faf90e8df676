import CKCore

extension ShareCommands {
    static let leave: CommandSpec = CommandSpec(synopsis: "SHARE [--zone Z]", summary: "Leave a share you take part in",
        details: shareArgument + "\nRun as the participant (with --db shared, --zone names the shared zone). You become\nREMOVED; the zone leaves your shared database. Prints {records: [share]}.") { inv in
        let p = try inv.positionals(min: 1, max: 1, what: "share")
        return try update(inv, p[0], .leave)
    }
}
