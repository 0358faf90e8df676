/// `ck container use ID`, `ck container show`.
enum ContainerCommands {
    static var all: [Command] { [use, show] }
}
