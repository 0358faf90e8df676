import CKModel

/// One fetch, pull or push of a remote into a database at a time: held for the whole command
/// (`<database>/remotes/<remote>/operation.lock`), so that two never interleave their pages
/// and merges, nor a push send what a pull is about to change. A second command waits for the
/// first, and says so.
package enum RemoteOperationLock {
    static func path(database: String, remote: String) -> String {
        database + "/remotes/" + PathEncoding.component(remote) + "/operation.lock"
    }

    package static func hold(database: String, remote: String, waiting: () -> Void) throws -> FileLock {
        let path = path(database: database, remote: remote)
        if let held = try FileLock.attempt(path) { return held }
        waiting()
        return try FileLock(path: path)
    }
}
