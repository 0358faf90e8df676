import CKCore
import CKModel
#if canImport(Glibc)
import Glibc
#endif

/// The command line: finds the command in the table, scans its arguments, runs it, and maps
/// every failure to one stderr line and an exit code.
public enum CLI {
    public static func main(_ argv: [String]) -> Int32 {
        let io = IO.standard()
        armCrashPoints(io.environment)
        return run(Array(argv.dropFirst()), io: io)
    }

    /// Test hooks (Docs/reliability.md): crash, or run out of disk, at the Nth mutating file
    /// operation. Armed only in the real process, never in-process.
    static func armCrashPoints(_ env: [String: String]) {
        CloudKitAPI.armDebugHooks(env) { fputs($0 + "\n", stderr) }
    }

    /// Runs one command line; its output is flushed before this returns. If stdout cannot be
    /// written, that is the outcome: exit 141 without a word when the reader went away (as a
    /// process killed by SIGPIPE, like git), else one line on stderr and exit 1.
    public static func run(_ tokens: [String], io: IO, table: CommandTable = .standard) -> Int32 {
        let errorFormat = GlobalOptions.errorFormat(tokens: tokens, environment: io.environment)
        var code: Int32
        do { code = try execute(tokens, io: io, table: table, errorFormat: errorFormat) } catch let o as OutputError {
            return ErrorReporter.output(o.status, io: io, format: errorFormat)
        } catch {
            code = ErrorReporter.report(CloudKitError.internalError("\(error)"), io: io, format: errorFormat)
        }
        let status = io.finish()
        if status != .ok { return ErrorReporter.output(status, io: io, format: errorFormat) }
        return code
    }

    private static func execute(_ tokens: [String], io: IO, table: CommandTable, errorFormat: ErrorFormat) throws -> Int32 {
        do {
            let (command, rest) = try locate(tokens, table: table)
            let spec = command.made
            let args = try ArgumentScanner.scan(rest, specs: GlobalOptions.specs + spec.options, command: command.path)
            if args.helpRequested {
                io.writeOut(Help.text(for: command, table: table))
                return ExitCode.success
            }
            if !spec.severalZones && Set(args.values("--zone").map(NameKey.init)).count > 1 {
                throw UsageError("option '--zone' given more than once ('ck zone changes' is the command that fetches several zones)", command: command.path)
            }
            let globals = try GlobalOptions.resolve(args, io: io)
            if globals.format == .aps && command.path != ["notifications"] {
                throw UsageError("--format aps (a notification's push payload) applies only to 'ck notifications'", command: command.path)
            }
            let inv = Invocation(command: command, args: args, globals: globals, io: io)
            do {
                return try spec.run(inv)
            } catch let e as CloudKitError {
                return ErrorReporter.report(e, io: io, format: globals.errorFormat, style: inv.api.responseStyle(globals.scope),
                                            hint: NextSteps.hint(for: e, command: command.path, args: args, globals: globals))
            }
        } catch let u as UsageError {
            return ErrorReporter.usage(u, io: io, format: errorFormat, table: table)
        } catch let e as CloudKitError {
            return ErrorReporter.report(e, io: io, format: errorFormat)
        }
    }

    /// Splits the command path from the rest, skipping global options (which may come first).
    static func locate(_ tokens: [String], table: CommandTable) throws -> (Command, [String]) {
        var globalsWithValue = Set<String>()
        var globalFlags = Set<String>()
        for s in GlobalOptions.specs {
            if s.value != nil { globalsWithValue.insert(s.name); s.aliases.forEach { globalsWithValue.insert($0) } } else { globalFlags.insert(s.name); s.aliases.forEach { globalFlags.insert($0) } }
        }
        var words: [(index: Int, word: String)] = []
        var i = 0
        var sawHelp = false
        while i < tokens.count && words.count < 3 {
            let t = tokens[i]
            if t == "--" { break }
            if t == "-h" || t == "--help" { sawHelp = true; i += 1; continue }
            if t.hasPrefix("-") && t != "-" {
                if globalFlags.contains(t) { i += 1 } else if globalsWithValue.contains(t) { i += 2 } else if t.contains("="), globalsWithValue.contains(String(t[..<t.firstIndex(of: "=")!])) { i += 1 } else { break }
                continue
            }
            words.append((i, t))
            i += 1
        }
        if words.isEmpty {
            // `ck --version`, as every tool has it: the `version` command.
            if tokens.contains("--version"), let v = table.command(["version"]) { return (v, tokens.filter { $0 != "--version" }) }
            if let unknown = tokens.first(where: { $0.hasPrefix("-") && $0 != "-h" && $0 != "--help" && !isGlobal($0, globalsWithValue) && !globalFlags.contains($0) }) {
                throw UsageError("unknown option '\(unknown)'" + Suggestions.hint(unknown, among: GlobalOptions.specs.flatMap { [$0.name] + $0.aliases }))
            }
            return (table.command(["help"])!, tokens)
        }
        guard let c = table.match(words.map(\.word)) else {
            let first = words[0].word
            if table.groups.contains(first) {
                if sawHelp || words.count == 1 && sawHelp { return (table.command(["help"])!, [first]) }
                let subs = table.children(of: [first]).map { $0.path.dropFirst().joined(separator: " ") }
                if words.count > 1 {
                    let hint = Suggestions.hint(words[1].word, among: subs) { "'ck \(first) \($0)'" }
                    throw UsageError("unknown command 'ck \(first) \(words[1].word)'\(hint.isEmpty ? "; '\(first)' has: \(subs.joined(separator: ", "))" : hint)")
                }
                throw UsageError("'ck \(first)' needs a subcommand: \(subs.joined(separator: ", "))")
            }
            if let ck = Suggestions.cktool[first] {
                throw UsageError("unknown command '\(first)' (a cktool command)" + (ck.isEmpty ? "; ck runs locally and needs no token or team" : "; did you mean '\(ck)'?"))
            }
            let hint = Suggestions.hint(first, among: table.commands.map { $0.path[0] }) { "'ck \($0)'" }
            throw UsageError("unknown command '\(first)'\(hint.isEmpty ? "; see 'ck help'" : hint)")
        }
        let used = Set(words.prefix(c.path.count).map(\.index))
        let rest = tokens.enumerated().filter { !used.contains($0.offset) }.map(\.element)
        return (c, rest)
    }

    private static func isGlobal(_ t: String, _ withValue: Set<String>) -> Bool {
        let name = t.contains("=") ? String(t[..<t.firstIndex(of: "=")!]) : t
        return withValue.contains(name)
    }
}
