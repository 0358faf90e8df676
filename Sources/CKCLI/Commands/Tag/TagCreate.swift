import CKCore

extension TagCommands {
    static let create: CommandSpec = CommandSpec(synopsis: "NAME [--message M]",
        summary: "Name the current point of every zone's history (a tag)",
        options: [OptionSpec("--message", value: "M", help: "a note kept with the tag")],
        details: """
        Records the head of every zone of the database (--db, --as) under NAME, kept beside the
        database. The tag is then a reference in that database wherever one is taken (ck diff
        NAME, ck record get --at NAME, ck restore NAME): in each zone, the state when the tag
        was made; a zone made later counts from empty. A name taken is EXISTS (exit 4); a name
        that would read as a number, ZONE@SEQ, a token or a time is refused. The shared
        database has no tags: its zones' histories are their owners' (ACCESS_DENIED).
        Prints {name, message, created, zones: [{zone, incarnation, seq}]}.
        """) { inv in
        let name = try inv.positionals(min: 1, max: 1, what: "tag name")[0]
        inv.print(try inv.api.createTag(CreateTagRequest(name: name, message: inv.args.value("--message")), as: try inv.caller()))
        return ExitCode.success
    }
}
