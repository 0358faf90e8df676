import CKCore
import CKModel

/// One row of the command table: the single source of truth for dispatch, help and docs.
public struct Command {
    public let path: [String]
    /// The client operation the command stands for (`records/modify`, …; Docs/wire.md), which
    /// faults match (Docs/faults.md); nil for ck's own commands, which are never faulted.
    /// CommandEndpointTests holds every row to it, and EndpointDocTablesTests those pages.
    public let endpoint: Endpoint?
    /// The command's own file's spec, made when asked for, not with the table: a command runs
    /// one row of the table, and making all of them (their options and help texts) cost every
    /// process 0.15 ms. Each field below makes it again; running a command takes it once
    /// (`made`).
    private let spec: () -> CommandSpec
    /// The spec, made once for the caller to read several fields of.
    var made: CommandSpec { spec() }
    public var synopsis: String { spec().synopsis }
    public var summary: String { spec().summary }
    public var options: [OptionSpec] { spec().options }
    /// Longer help, shown by `ck <command> --help`.
    public var details: String { spec().details }
    /// Whether the command takes several `--zone`s (the others take one).
    public var severalZones: Bool { spec().severalZones }
    public var run: (Invocation) throws -> Int32 { spec().run }

    init(_ path: [String], _ endpoint: Endpoint?, _ spec: @autoclosure @escaping () -> CommandSpec) {
        self.path = path
        self.endpoint = endpoint
        self.spec = spec
    }

    public var name: String { path.joined(separator: " ") }
    public var usage: String { "ck \(name)\(synopsis.isEmpty ? "" : " " + synopsis)" }
}

/// What a command's own file says of it (Commands/…): its usage, help and handler. Its name
/// and endpoint are in its row of the command table.
struct CommandSpec {
    var synopsis: String
    var summary: String
    var options: [OptionSpec]
    var details: String
    var severalZones: Bool
    var run: (Invocation) throws -> Int32

    init(synopsis: String, summary: String, options: [OptionSpec] = [], details: String = "", severalZones: Bool = false,
         run: @escaping (Invocation) throws -> Int32) {
        self.synopsis = synopsis
        self.summary = summary
        self.options = options
        self.details = details
        self.severalZones = severalZones
        self.run = run
    }
}
