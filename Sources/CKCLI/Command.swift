import CKCore

/// One row of the command table: the single source of truth for dispatch, help and docs.
public struct Command {
    public var path: [String]
    public var synopsis: String
    public var summary: String
    /// The client operation the command stands for (`records/modify`, …; Docs/wire.md), which
    /// faults match (Docs/faults.md); nil for ck's own commands, which are never faulted.
    /// CommandEndpointTests holds every row to it, and EndpointDocTablesTests those pages.
    public var endpoint: Endpoint?
    public var options: [OptionSpec]
    /// Longer help, shown by `ck <command> --help`.
    public var details: String
    /// Whether the command takes several `--zone`s (the others take one).
    public var severalZones: Bool
    public var run: (Invocation) throws -> Int32

    public init(_ path: [String], synopsis: String, summary: String, endpoint: Endpoint? = nil, options: [OptionSpec] = [], details: String = "",
                severalZones: Bool = false, run: @escaping (Invocation) throws -> Int32) {
        self.path = path
        self.synopsis = synopsis
        self.summary = summary
        self.endpoint = endpoint
        self.options = options
        self.details = details
        self.severalZones = severalZones
        self.run = run
    }

    public var name: String { path.joined(separator: " ") }
    public var usage: String { "ck \(name)\(synopsis.isEmpty ? "" : " " + synopsis)" }
}
