/// Why a path cannot be a data directory, when it is not a CloudKit error.
public enum DataDirectoryFailure: Error, Equatable {
    /// Not a directory (to the CLI a usage error: the user named a file).
    case notADirectory(String)
}
