import CKCore

/// `ck init [DIR]`: a project-local data directory, like `git init`.
enum InitCommand {
    static let command: Command = Command(["init"], synopsis: "[DIR]", summary: "Create a project-local .ck/ data directory",
        details: "Creates DIR/.ck (default: the working directory). Commands run below DIR then use it\nunless --data-dir or $CK_DATA_DIR says otherwise.") { inv in
        let p = try inv.positionals(max: 1, what: "directory")
        var base = p.first ?? inv.io.currentDirectory
        if !base.hasPrefix("/") { base = inv.io.currentDirectory + "/" + base }
        let dir = inv.args.has("--data-dir") ? inv.globals.dataDirectory : (base == "/" ? "/.ck" : base + "/.ck")
        // A .ck already there is checked as a discovered one would be: never a link, never another user's.
        do { try DataDirectoryCheck.verify(dir, discovered: !inv.args.has("--data-dir")) } catch DataDirectoryCheck.Failure.notADirectory(let p) {
            throw inv.usageError("'\(p)' exists and is not a directory")
        }
        let store = CloudKitStore(root: dir)
        let created = try store.initialize()
        inv.emit(["dataDirectory": .string(store.paths.root), "created": .bool(created)])
        return ExitCode.success
    }
}

/// `ck container use ID`, `ck container show`.
enum ContainerCommands {
    static let use: Command = Command(["container", "use"], synopsis: "ID", summary: "Set the default container of this data directory") { inv in
        let id = try inv.positionals(min: 1, max: 1, what: "container identifier")[0]
        try inv.store.setDefaultContainer(id)
        inv.emit(["containerIdentifier": .string(id)])
        return ExitCode.success
    }

    static let show: Command = Command(["container", "show"], synopsis: "", summary: "Show the container, environment and database in use") { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.emit(["containerIdentifier": .string(try inv.container()), "environment": .string(inv.globals.environment.rawValue),
                  "database": .string(inv.globals.scope.rawValue), "dataDirectory": .string(inv.store.paths.root)])
        return ExitCode.success
    }
}
