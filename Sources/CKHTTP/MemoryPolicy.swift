import Glibc

/// How the server's process uses malloc. glibc raises its mmap threshold each time a large
/// mapped block is freed (up to 32 MB), so after a burst of 2 MB request bodies the next ones
/// come from the heaps of the threads' arenas, and what they free there stays resident: 250
/// bodies once left tens of megabytes behind for good. A threshold set explicitly stays where it
/// is: every block of 128 KiB or more is mapped on its own and given back when freed.
enum MemoryPolicy {
    /// glibc's M_MMAP_THRESHOLD (malloc.h, which the Glibc module does not export).
    private static let mmapThreshold: Int32 = -3

    static func applyOnce() { _ = applied }

    private static let applied: Bool = glibcMallopt(mmapThreshold, 128 * 1024) == 1
}

@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
