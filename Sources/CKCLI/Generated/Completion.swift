import CKCore
import CKModel
import Foundation

/// What the shell completion scripts know of ck, all read from the command table: the words
/// that follow each command path, each command's options, and what their values are.
struct CompletionModel {
    let table: CommandTable

    /// The shells `ck completion` writes scripts for.
    static let shells = ["bash", "zsh", "fish"]

    /// What an option's value or a command's arguments complete to.
    enum Values: Equatable {
        /// Free text (a record name, a field argument): nothing to offer.
        case none
        case words([String])
        /// The zones of the database in use, asked of ck itself (`ck zone list`).
        case zones
        /// The records of the zone in use (`ck record list`).
        case records
        /// The caller's subscriptions in the database in use (`ck subscription list`).
        case subscriptions
        case files
        case directories
        /// Command words (`ck help record save`).
        case commandPath
    }

    /// Values every shell completes by option name (the global options' choices).
    static func values(of option: OptionSpec) -> Values {
        switch option.name {
        // aps is a format of 'notifications' alone: not offered everywhere.
        case "--format": return .words(OutputFormat.allCases.filter { $0 != .aps }.map(\.rawValue))
        case "--op": return .words(Endpoint.allCases.map(\.path))
        case "--error-format": return .words(ErrorFormat.allCases.map(\.rawValue))
        case "--database": return .words(DatabaseScope.allCases.map(\.rawValue))
        case "--environment": return .words(CKModel.Environment.allCases.map(\.rawValue))
        case "--zone": return .zones
        case "--require": return .words(AccountStatus.allCases.map(\.rawValue))
        case "--error": return .words(FaultCode.allCases.map(\.rawValue))
        default: break
        }
        switch option.value {
        case "DIR": return .directories
        case "FILE": return .files
        default: return .none
        }
    }

    /// What a command's arguments (positionals) complete to.
    static func arguments(of c: Command) -> Values {
        switch c.path {
        case ["help"]: return .commandPath
        case ["completion"]: return .words(shells)
        case ["account", "set-status"]: return .words(AccountStatus.allCases.map(\.rawValue))
        case ["permission", "request"], ["permission", "status"]: return .words(["userDiscoverability"])
        case ["zone", "delete"], ["zone", "purge"]: return .zones
        case ["record", "get"], ["record", "delete"], ["blame"]: return .records
        case ["subscription", "get"], ["subscription", "delete"]: return .subscriptions
        default: break
        }
        let words = c.synopsis.split(separator: " ").map { $0.trimmingCharacters(in: ["[", "]", "…"]) }
        if words.contains("FILE") { return .files }
        if words.contains("DIR") { return .directories }
        return .none
    }

    /// The words that can follow `prefix` ([] → the top-level words), in table order.
    func next(after prefix: [String]) -> [String] {
        var seen = Set<String>()
        var out: [String] = []
        for c in table.commands where c.path.count > prefix.count && Array(c.path.prefix(prefix.count)) == prefix {
            if seen.insert(c.path[prefix.count]).inserted { out.append(c.path[prefix.count]) }
        }
        return out
    }

    /// Every path that can be followed by a command word: [] and the groups, in table order.
    var prefixes: [[String]] {
        var out: [[String]] = [[]]
        for c in table.commands {
            for n in stride(from: 1, to: c.path.count, by: 1) where !out.contains(Array(c.path.prefix(n))) {
                out.append(Array(c.path.prefix(n)))
            }
        }
        return out
    }

    /// Every path the scripts know of: the prefixes and the commands.
    var paths: [[String]] {
        var out = prefixes
        for c in table.commands where !out.contains(c.path) { out.append(c.path) }
        return out
    }

    /// A word's description: the command's summary, or for a group its subcommands.
    func summary(_ path: [String]) -> String {
        if let c = table.command(path) { return c.summary }
        return "subcommands: " + next(after: path).joined(separator: ", ")
    }

    /// The options at `path`: the command's own (a group that is no command has none).
    func options(at path: [String]) -> [OptionSpec] { table.command(path)?.options ?? [] }

    static func spellings(_ o: OptionSpec) -> [String] { [o.name] + o.aliases }

    /// Every spelling of the options at `path` that takes a value, global options included.
    func valueSpellings(at path: [String]) -> [String] {
        (GlobalOptions.specs + options(at: path)).filter(\.takesValue).flatMap(Self.spellings)
    }

    /// Every option that completes to something, global and per command, once per name.
    var optionsWithValues: [OptionSpec] {
        var seen = Set<String>()
        var out: [OptionSpec] = []
        for o in GlobalOptions.specs + table.commands.flatMap(\.options) where o.takesValue && Self.values(of: o) != .none {
            if seen.insert(o.name).inserted { out.append(o) }
        }
        return out
    }

    /// A shell-safe word list (command words, option names and choices are plain ASCII words).
    static func plain(_ words: [String]) -> String {
        precondition(words.allSatisfy { $0.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F || c == 0x2E || c == 0x2F
        } }, "not a plain word: \(words)")
        return words.joined(separator: " ")
    }

    /// The sed program that takes zone names out of `ck zone list --format ndjson`.
    static let zoneNameSed = #"s/.*"zoneName":"\([^"]*\)".*/\1/p"#

    /// What is listed by asking ck itself: the shell function's name, the command that lists
    /// them (as NDJSON) and the sed program that takes the names out of its lines (keys come
    /// sorted, so a record's own recordName is the one just before its recordType, a
    /// subscription's ID the one before its subscriptionType).
    static let listings: [(values: Values, name: String, command: String, sed: String)] = [
        (.zones, "zones", "zone list", zoneNameSed),
        (.records, "records", "record list", #"s/.*"recordName":"\([^"]*\)","recordType".*/\1/p"#),
        (.subscriptions, "subscriptions", "subscription list", #"s/.*"subscriptionID":"\([^"]*\)","subscriptionType".*/\1/p"#),
    ]

    static func listing(_ v: Values) -> (values: Values, name: String, command: String, sed: String)? { listings.first { $0.values == v } }

    /// The global options worth passing on to the listing commands (where the zones, records and
    /// subscriptions are), by spelling.
    static var zoneListContext: [String] {
        GlobalOptions.specs.filter { ["--data-dir", "--container", "--environment", "--database", "--zone", "--as", "--device"].contains($0.name) }
            .flatMap(spellings)
    }

    /// A function name for a path: `record save` → `record_save`.
    static func identifier(_ path: [String]) -> String {
        path.joined(separator: "_").replacingOccurrences(of: "-", with: "_")
    }

    /// A string in single quotes for a POSIX shell, zsh or fish ('it'\''s').
    static func singleQuoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
}
