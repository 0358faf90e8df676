import CKModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The checks a data directory must pass before ck uses it — git's `safe.directory` problem: a
/// `.ck/` is found by walking up from the working directory, so it may sit in a repository
/// someone else cloned or in a directory someone else controls.
package enum DataDirectoryCheck {
    package typealias Failure = DataDirectoryFailure

    /// Passes, tightens or refuses the data directory at `path` (which may not exist yet):
    /// - a discovered `.ck` that is a symbolic link is refused (a clone must not redirect ck);
    /// - a directory owned by another user is refused (ACCESS_DENIED): they could change it
    ///   under us;
    /// - a directory of ours that others may read or write is made 0700.
    package static func verify(_ path: String, discovered: Bool) throws {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        if st.st_mode & S_IFMT == S_IFLNK {
            if discovered {
                throw CloudKitError(.accessDenied, "'\(path)' is a symbolic link; ck does not use a discovered .ck that points elsewhere").with(.nameDataDirectory)
            }
            guard stat(path, &st) == 0 else { throw Failure.notADirectory(path) }
        }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw Failure.notADirectory(path) }
        if st.st_uid != geteuid() {
            throw CloudKitError(.accessDenied, "data directory '\(path)' is owned by uid \(st.st_uid), not by you (uid \(geteuid())); ck does not use a data directory another user controls")
        }
        if st.st_mode & 0o077 != 0 {
            if chmod(path, FileSystem.directoryPermissions) != 0 { throw FileSystem.failure("cannot make private", path) }
        }
    }
}
