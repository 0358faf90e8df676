/// The command table: every command ck has, in the order help lists them.
public struct CommandTable {
    public let commands: [Command]

    public static let standard: CommandTable = CommandTable(commands:
        [InitCommand.command, HelpCommand.command, StatusCommand.command] + ContainerCommands.all
        + AccountCommands.all + [AccountCommands.whoami] + PermissionCommands.all + UserCommands.all + ZoneCommands.all + RecordCommands.all
        + [ZoneCommands.changes, DatabaseCommands.changes] + TokenCommands.all + SubscriptionCommands.all + NotificationCommands.all + ShareCommands.all + [ExportCommand.command, ImportCommand.command] + [ServeCommand.command] + APITokenCommands.all + ServerKeyCommands.all + FaultCommands.all + [FsckCommand.command]
        + SchemaCommands.all + [RoleCommands.assign, RoleCommands.remove, RoleCommands.list]
        + HistoryCommands.reads + TagCommands.all + HistoryCommands.writes
        + [VersionCommand.command, CompletionCommand.command, ManCommand.command])

    public func command(_ path: [String]) -> Command? { commands.first { $0.path == path } }

    /// Commands under a group (`record` → `record save`, …).
    public func children(of prefix: [String]) -> [Command] {
        commands.filter { $0.path.count > prefix.count && Array($0.path.prefix(prefix.count)) == prefix }
    }

    public var groups: Set<String> { Set(commands.filter { $0.path.count > 1 }.map { $0.path[0] }) }

    /// The longest command path made of `words`.
    func match(_ words: [String]) -> Command? {
        for n in stride(from: min(words.count, 3), through: 1, by: -1) {
            if let c = command(Array(words.prefix(n))) { return c }
        }
        return nil
    }
}
