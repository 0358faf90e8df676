/// `ck container use ID`, `ck container show`.
enum ContainerCommands {}
