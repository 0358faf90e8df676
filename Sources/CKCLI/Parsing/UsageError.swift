/// A problem with the command line itself (exit 2).
public struct UsageError: Error, Equatable {
    public var message: String
    /// The command whose usage to show, if known.
    public var command: [String]?

    public init(_ message: String, command: [String]? = nil) {
        self.message = message
        self.command = command
    }
}
