import CKCore

/// `ck tag create|list|delete`: named points across every zone of the data directory, as git
/// tags name commits (Docs/history.md).
enum TagCommands {
    static var all: [Command] { [create, list, delete] }

    static func tagJSON(_ t: Tag) -> JSONValue { t.json }

    static let create: Command = Command(["tag", "create"], synopsis: "NAME [--message M]",
        summary: "Name the current point of every zone's history (a tag)",
        options: [OptionSpec("--message", value: "M", help: "a note kept with the tag")],
        details: """
        Records the head of every zone of the data directory (every container, environment and
        database) under NAME, in tags/NAME.json. The tag is then a reference everywhere one is
        taken (ck diff NAME, ck record get --at NAME, ck restore NAME): in each zone, the state
        when the tag was made; a zone made later counts from empty. A name taken is EXISTS
        (exit 4); a name that would read as a number, ZONE@SEQ, a token or a time is refused.
        Prints {name, message, created, zones: [{zone, incarnation, seq}]}.
        """) { inv in
        let name = try inv.positionals(min: 1, max: 1, what: "tag name")[0]
        let message = inv.args.value("--message")
        let tag = try TagStore(paths: inv.store.paths).create(name, message: message, now: Clock.system.now())
        inv.emit(tag.json)
        return ExitCode.success
    }

    static let list: Command = Command(["tag", "list"], synopsis: "",
        summary: "List the tags",
        details: "Prints {\"tags\": [{name, message, created, zones}]}, by name.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.emit(["tags": .array(try TagStore(paths: inv.store.paths).list().map(\.json))], listKey: "tags")
        return ExitCode.success
    }

    static let delete: Command = Command(["tag", "delete"], synopsis: "NAME…",
        summary: "Delete tags (the history they name stays)",
        details: "Every name is checked first: an unknown one (NOT_FOUND, exit 3) deletes nothing.\nPrints {\"tags\": [...]} of the tags deleted.") { inv in
        let names = try inv.positionals(min: 1, what: "tag name")
        let store = TagStore(paths: inv.store.paths)
        let tags = try names.map { try store.load($0) }
        for t in tags { _ = try store.delete(t.name) }
        inv.emit(["tags": .array(tags.map(\.json))], listKey: "tags")
        return ExitCode.success
    }
}
