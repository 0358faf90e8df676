/// An option a command accepts.
public struct OptionSpec {
    public var name: String
    public var aliases: [String]
    /// Placeholder for the value (e.g. "TAG"); nil for a flag.
    public var value: String?
    public var help: String
    public var repeatable: Bool

    public init(_ name: String, aliases: [String] = [], value: String? = nil, repeatable: Bool = false, help: String) {
        self.name = name
        self.aliases = aliases
        self.value = value
        self.help = help
        self.repeatable = repeatable
    }

    var takesValue: Bool { value != nil }
}

/// What the scanner found: options by canonical name, and positionals in order.
public struct ParsedArguments {
    public var options: [String: [String]] = [:]
    public var flags: Set<String> = []
    public var positionals: [String] = []
    public var helpRequested = false

    public func value(_ name: String) -> String? { options[name]?.last }
    public func values(_ name: String) -> [String] { options[name] ?? [] }
    public func has(_ name: String) -> Bool { flags.contains(name) || options[name] != nil }
}

/// A small strict scanner: `--opt value`, `--opt=value`, flags, positionals, `--`; anything
/// unknown is a usage error, never ignored. An option's value is taken as it is, even when it
/// starts with '-'; a negative number (`-5`, `-1.5`) is a positional, as no option looks so.
public enum ArgumentScanner {
    static func isNegativeNumber(_ t: String) -> Bool {
        let rest = t.utf8.dropFirst()
        guard let first = rest.first, first >= 0x30 && first <= 0x39 else { return false }
        return rest.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ".") }
    }

    public static func scan(_ tokens: [String], specs: [OptionSpec], command: [String]) throws -> ParsedArguments {
        var byName: [String: OptionSpec] = [:]
        for s in specs {
            byName[s.name] = s
            for a in s.aliases { byName[a] = s }
        }
        var out = ParsedArguments()
        var i = 0
        var onlyPositionals = false
        while i < tokens.count {
            let t = tokens[i]
            i += 1
            if onlyPositionals || t == "-" || !t.hasPrefix("-") || isNegativeNumber(t) { out.positionals.append(t); continue }
            if t == "--" { onlyPositionals = true; continue }
            if t == "-h" || t == "--help" { out.helpRequested = true; continue }
            var name = t
            var inline: String?
            if let eq = t.firstIndex(of: "=") {
                name = String(t[..<eq])
                inline = String(t[t.index(after: eq)...])
            }
            guard let spec = byName[name] else {
                // Record names may start with '-' (Photos has `----Root-Folder----`).
                var hint = Suggestions.hint(name, among: Array(byName.keys.filter { $0.hasPrefix("--") }))
                if hint.isEmpty && byName["--name"] != nil { hint = "; a name that starts with '-' goes in --name (--name '\(t)') or after '--'" }
                throw UsageError("unknown option '\(name)'\(hint)", command: command)
            }
            if spec.takesValue {
                var v: String
                if let iv = inline { v = iv } else {
                    guard i < tokens.count else { throw UsageError("option '\(name)' needs a value (\(spec.value!))", command: command) }
                    v = tokens[i]
                    i += 1
                }
                if !spec.repeatable && out.options[spec.name] != nil && out.options[spec.name] != [v] {
                    throw UsageError("option '\(spec.name)' given more than once", command: command)
                }
                if v.contains("\u{0}") { throw UsageError("option '\(spec.name)' value contains a NUL character", command: command) }
                out.options[spec.name, default: []].append(v)
            } else {
                if inline != nil { throw UsageError("option '\(name)' takes no value", command: command) }
                out.flags.insert(spec.name)
            }
        }
        return out
    }
}
