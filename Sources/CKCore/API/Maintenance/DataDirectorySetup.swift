import CKModel
import CKStore

/// The data directory itself: the checks it passes before use, making one (`ck init`), and
/// the default container chosen in it (`ck container use|show`). Operations of ck's own: no
/// fault fails them, and they need no account.
extension CloudKitAPI {
    /// Passes, tightens or refuses a data directory before ck uses it (git's safe.directory
    /// problem): one `discovered` by walking up from the working directory must not be a
    /// symbolic link; one owned by another user is refused (ACCESS_DENIED); one of ours others
    /// may read or write is made 0700. A path that exists and is not a directory is
    /// `DataDirectoryFailure.notADirectory`. A path that does not exist passes.
    public static func checkDataDirectory(_ path: String, discovered: Bool) throws {
        try DataDirectoryCheck.verify(path, discovered: discovered)
    }

    /// Makes the data directory at `path` (0700) with its marker file, after checking one
    /// already there as `checkDataDirectory` does — the path as given, before its links are
    /// resolved. Answers `{dataDirectory, created}`: the directory (links resolved), and
    /// false when it was there.
    public static func initialize(dataDirectory path: String, discovered: Bool = false) throws -> DocumentBody {
        try checkDataDirectory(path, discovered: discovered)
        let api = CloudKitAPI(dataDirectory: path)
        let created = try api.store.initialize()
        return DocumentBody(["dataDirectory": .string(api.dataDirectory), "created": .bool(created)])
    }

    /// The container chosen with `setDefaultContainer`, if any.
    public func defaultContainer() throws -> String? { try store.defaultContainer() }

    /// Makes `id` the container of requests that name none; answers `{containerIdentifier}`.
    /// BAD_REQUEST, changing nothing, for an ID that is not `iCloud.…`.
    @discardableResult
    public func setDefaultContainer(_ id: String) throws -> DocumentBody {
        try store.setDefaultContainer(id)
        return DocumentBody(["containerIdentifier": .string(id)])
    }

    /// Where a caller's requests act: `{containerIdentifier, environment, database, dataDirectory}`.
    public func showContainer(as caller: Caller) throws -> DocumentBody {
        try Names.validateContainerID(caller.container)
        return DocumentBody(["containerIdentifier": .string(caller.container), "environment": .string(caller.environment.rawValue),
                             "database": .string(caller.scope.rawValue), "dataDirectory": .string(dataDirectory)])
    }
}
