import CKCore

/// The command table: every command ck has, in the order help lists them, as git's
/// `commands[]` lists its own. A row is the command's path, the endpoint it stands for (nil:
/// one of ck's own, never faulted) and its spec — usage, help and handler — from the command's
/// own file (Commands/<Group>/<Group><Sub>.swift, or Commands/<Name>.swift at the top level).
/// Help, the man page and the completions are made from these rows.
public struct CommandTable {
    public let commands: [Command]

    public static let standard = CommandTable(commands: [
        Command(["init"],                        nil,                  InitCommand.command),
        Command(["help"],                        nil,                  HelpCommand.command),
        Command(["status"],                      nil,                  StatusCommand.command),
        Command(["container", "use"],            nil,                  ContainerCommands.use),
        Command(["container", "show"],           nil,                  ContainerCommands.show),
        Command(["account"],                     .accountStatus,       AccountCommands.status),
        Command(["account", "signin"],           nil,                  AccountCommands.signin),
        Command(["account", "signout"],          nil,                  AccountCommands.signout),
        Command(["account", "set-status"],       nil,                  AccountCommands.setStatus),
        Command(["account", "events"],           nil,                  AccountCommands.events),
        Command(["account", "web-auth-token"],   nil,                  AccountCommands.webAuthToken),
        Command(["account", "sessions"],         nil,                  AccountCommands.sessions),
        Command(["account", "sessions", "end"],  nil,                  AccountCommands.sessionsEnd),
        Command(["whoami"],                      .usersCaller,         AccountCommands.whoami),
        Command(["permission", "request"],       nil,                  PermissionCommands.request),
        Command(["permission", "status"],        nil,                  PermissionCommands.status),
        Command(["user", "discover"],            .usersDiscover,       UserCommands.discover),
        Command(["zone", "create"],              .zonesModify,         ZoneCommands.create),
        Command(["zone", "delete"],              .zonesModify,         ZoneCommands.delete),
        Command(["zone", "purge"],               nil,                  ZoneCommands.purge),
        Command(["zone", "list"],                .zonesList,           ZoneCommands.list),
        Command(["record", "save"],              .recordsModify,       RecordCommands.save),
        Command(["record", "get"],               .recordsLookup,       RecordCommands.get),
        Command(["record", "delete"],            .recordsModify,       RecordCommands.delete),
        Command(["record", "list"],              .recordsQuery,        RecordCommands.list),
        Command(["record", "modify"],            .recordsModify,       RecordCommands.modify),
        Command(["record", "query"],             .recordsQuery,        RecordCommands.query),
        Command(["zone", "changes"],             .changesZone,         ZoneCommands.changes),
        Command(["database", "changes"],         .changesDatabase,     DatabaseCommands.changes),
        Command(["token", "expire"],             nil,                  TokenCommands.expire),
        Command(["subscribe"],                   .subscriptionsModify, SubscriptionCommands.subscribe),
        Command(["subscription", "list"],        .subscriptionsList,   SubscriptionCommands.list),
        Command(["subscription", "get"],         .subscriptionsLookup, SubscriptionCommands.get),
        Command(["subscription", "delete"],      .subscriptionsModify, SubscriptionCommands.delete),
        Command(["notifications"],               .notificationsList,   NotificationCommands.notifications),
        Command(["notifications", "drop"],       nil,                  NotificationCommands.drop),
        Command(["share", "create"],             .recordsModify,       ShareCommands.create),
        Command(["share", "accept"],             .recordsAccept,       ShareCommands.accept),
        Command(["share", "list"],               .recordsQuery,        ShareCommands.list),
        Command(["share", "get"],                .recordsLookup,       ShareCommands.get),
        Command(["share", "add-participant"],    .recordsModify,       ShareCommands.addParticipant),
        Command(["share", "remove-participant"], .recordsModify,       ShareCommands.removeParticipant),
        Command(["share", "leave"],              .recordsModify,       ShareCommands.leave),
        Command(["share", "delete"],             .recordsModify,       ShareCommands.delete),
        Command(["export"],                      nil,                  ExportCommand.command),
        Command(["import"],                      .recordsModify,       ImportCommand.command),
        Command(["serve"],                       nil,                  ServeCommand.command),
        Command(["console"],                     nil,                  ConsoleCommand.command),
        Command(["remote", "add"],               nil,                  RemoteCommands.add),
        Command(["remote", "list"],              nil,                  RemoteCommands.list),
        Command(["remote", "show"],              nil,                  RemoteCommands.show),
        Command(["remote", "remove"],            nil,                  RemoteCommands.remove),
        Command(["remote", "rename"],            nil,                  RemoteCommands.rename),
        Command(["remote", "login"],             nil,                  RemoteCommands.login),
        Command(["remote", "key", "create"],     nil,                  RemoteCommands.keyCreate),
        Command(["remote", "key", "set"],        nil,                  RemoteCommands.keySet),
        Command(["clone"],                       nil,                  RemoteCommands.clone),
        Command(["fetch"],                       nil,                  RemoteCommands.fetch),
        Command(["pull"],                        nil,                  RemoteCommands.pull),
        Command(["push"],                        nil,                  RemoteCommands.push),
        Command(["api-token", "create"],         nil,                  APITokenCommands.create),
        Command(["api-token", "list"],           nil,                  APITokenCommands.list),
        Command(["api-token", "delete"],         nil,                  APITokenCommands.delete),
        Command(["server-key", "add"],           nil,                  ServerKeyCommands.add),
        Command(["server-key", "list"],          nil,                  ServerKeyCommands.list),
        Command(["server-key", "delete"],        nil,                  ServerKeyCommands.delete),
        Command(["fault", "add"],                nil,                  FaultCommands.add),
        Command(["fault", "list"],               nil,                  FaultCommands.list),
        Command(["fault", "clear"],              nil,                  FaultCommands.clear),
        Command(["fsck"],                        nil,                  FsckCommand.command),
        Command(["schema", "export"],            nil,                  SchemaCommands.export),
        Command(["schema", "import"],            nil,                  SchemaCommands.importSchema),
        Command(["schema", "index", "add"],      nil,                  SchemaCommands.indexAdd),
        Command(["schema", "deploy"],            nil,                  SchemaCommands.deploy),
        Command(["schema", "reset"],             nil,                  SchemaCommands.reset),
        Command(["role", "assign"],              nil,                  RoleCommands.assign),
        Command(["role", "remove"],              nil,                  RoleCommands.remove),
        Command(["role", "list"],                nil,                  RoleCommands.list),
        Command(["log"],                         nil,                  HistoryCommands.log),
        Command(["show"],                        nil,                  HistoryCommands.show),
        Command(["diff"],                        nil,                  HistoryCommands.diff),
        Command(["blame"],                       nil,                  HistoryCommands.blame),
        Command(["tag", "create"],               nil,                  TagCommands.create),
        Command(["tag", "list"],                 nil,                  TagCommands.list),
        Command(["tag", "delete"],               nil,                  TagCommands.delete),
        Command(["restore"],                     .recordsModify,       HistoryCommands.restore),
        Command(["revert"],                      .recordsModify,       HistoryCommands.revert),
        Command(["gc"],                          nil,                  HistoryCommands.gc),
        Command(["version"],                     nil,                  VersionCommand.command),
        Command(["completion"],                  nil,                  CompletionCommand.command),
        Command(["man"],                         nil,                  ManCommand.command),
    ])

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
