import CKCore
import CKModel

/// `ck init [DIR]`: a project-local data directory, like `git init`.
enum InitCommand {
    static let command: CommandSpec = CommandSpec(synopsis: "[DIR]", summary: "Create a project-local .ck/ data directory",
        details: "Creates DIR/.ck (default: the working directory). Commands run below DIR then use it\nunless --data-dir or $CK_DATA_DIR says otherwise.") { inv in
        let p = try inv.positionals(max: 1, what: "directory")
        var base = p.first ?? inv.io.currentDirectory
        if !base.hasPrefix("/") { base = inv.io.currentDirectory + "/" + base }
        let given = inv.args.has("--data-dir")
        let dir = given ? inv.globals.dataDirectory : (base == "/" ? "/.ck" : base + "/.ck")
        // A .ck already there is checked as a discovered one would be: never a link, never another user's.
        do { inv.print(try CloudKitAPI.initialize(dataDirectory: dir, discovered: !given)) } catch DataDirectoryFailure.notADirectory(let p) {
            throw inv.usageError("'\(p)' exists and is not a directory")
        }
        return ExitCode.success
    }
}
