import CKCore

extension ShareCommands {
    static let delete: CommandSpec = CommandSpec(synopsis: "SHARE [--zone Z]", summary: "Delete a share (owner); the shared records stay",
        details: shareArgument + "\nThe share record goes and the root's `share` with it; the records stay in your zone,\nand the zone leaves every participant's shared database. Prints {records: [{recordName, deleted: true}]}.") { inv in
        let p = try inv.positionals(min: 1, max: 1, what: "share")
        return try update(inv, p[0], .delete)
    }
}
