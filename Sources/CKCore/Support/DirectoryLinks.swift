#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Directory {
    /// A second name for a file in this directory (a hard link: no data is copied).
    public func link(_ name: String, as other: String) throws {
        if FaultInjection.fails("link " + path + "/" + other) || linkat(fd, name, fd, other, 0) != 0 {
            throw FileSystem.failure("cannot link", path + "/" + other)
        }
    }

    /// Renames within this directory, replacing `target` (never following a link at either).
    public func rename(_ name: String, to target: String) throws {
        if FaultInjection.fails("rename " + path + "/" + target) || renameat(fd, name, fd, target) != 0 {
            throw FileSystem.failure("cannot rename", path + "/" + name)
        }
    }
}
