import CKModel
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells a waiting long-poll that its web client's notifications may have changed, whoever
/// changed them — this process or another (the CLI). Its `descriptor` turns readable when a
/// file of the directory watched changes (the client's inbox; before the client is bound to a
/// user, the web clients' directory, where `tokens/register` binds it) or when `signal()` is
/// called; the poll then reads the inbox again. Waiting on it costs nothing: one inotify
/// descriptor and one thread serve every watch of the process (Linux); where there is no
/// inotify, `isWatching` is false and the waiter must look again from time to time.
public final class WebPushWatch: @unchecked Sendable {
    /// Readable once something changed; `drain()` makes it quiet again.
    public let descriptor: Int32
    private let writeEnd: Int32
    package let directory: String
    /// Whether it watches the client's inbox (false: the registrations of a client not yet
    /// bound to a user).
    public let watchesInbox: Bool
    /// Its inotify watch (guarded by the watcher's lock); -1 while it has none.
    fileprivate var watchDescriptor: Int32 = -1

    package init(directory: String, inbox: Bool) throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw FileSystem.failure("cannot make a pipe for", directory) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        descriptor = fds[0]
        writeEnd = fds[1]
        self.directory = directory
        watchesInbox = inbox
        _ = InboxWatcher.shared.add(self)
    }

    /// Whether changes to the directory wake it (false: only `signal()` does).
    public var isWatching: Bool { InboxWatcher.shared.watches(self) }

    deinit {
        InboxWatcher.shared.remove(self)
        close(descriptor)
        close(writeEnd)
    }

    /// Wakes the waiter (a full pipe is already a wake).
    public func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Reads the wakes so far, before the waiter looks at the inbox again.
    public func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(descriptor, &bytes, bytes.count) > 0 {}
    }

    /// Watches again after the directory went away or was replaced (an environment reset, an
    /// inbox made since): the watcher dropped it and woke the waiter.
    public func renew() {
        if !isWatching { _ = InboxWatcher.shared.add(self) }
    }
}

/// The process's one inotify descriptor: directories watched, each with the watches waiting on
/// it, and a thread that turns every event into a wake of those watches.
final class InboxWatcher: @unchecked Sendable {
    package static let shared = InboxWatcher()

    private let lock = NSLock()
    private var descriptor: Int32 = -1
    /// inotify's watch descriptor (one per directory watched) → the watches woken by it.
    private var byDescriptor: [Int32: [ObjectIdentifier: Weak]] = [:]

    private struct Weak { weak var watch: WebPushWatch? }

    /// Starts waking `w` on changes to its directory; false when that cannot be (no inotify,
    /// the directory missing, the system's watches used up).
    package func add(_ w: WebPushWatch) -> Bool {
        #if os(Linux)
        lock.lock()
        defer { lock.unlock() }
        if descriptor < 0 {
            descriptor = inotify_init1(Int32(IN_CLOEXEC))
            guard descriptor >= 0 else { return false }
            let fd = descriptor
            let thread = Thread { [unowned self] in run(fd) }
            thread.stackSize = 256 * 1024
            thread.name = "ck-inbox-watch"
            thread.start()
        }
        // Every write of an inbox ends in a rename (state.json) or an append (log.ndjson). Not
        // IN_CLOSE_WRITE: reading an inbox opens its lock file for writing, and the poll that
        // reads would wake itself for ever.
        let events = UInt32(IN_MOVED_TO | IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF)
        let wd = inotify_add_watch(descriptor, w.directory, events | UInt32(IN_ONLYDIR) | UInt32(IN_DONT_FOLLOW))
        guard wd >= 0 else { return false }
        w.watchDescriptor = wd
        byDescriptor[wd, default: [:]][ObjectIdentifier(w)] = Weak(watch: w)
        return true
        #else
        return false
        #endif
    }

    package func watches(_ w: WebPushWatch) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return w.watchDescriptor >= 0
    }

    package func remove(_ w: WebPushWatch) {
        #if os(Linux)
        lock.lock()
        defer { lock.unlock() }
        let wd = w.watchDescriptor
        w.watchDescriptor = -1
        guard wd >= 0, var watches = byDescriptor[wd] else { return }
        watches[ObjectIdentifier(w)] = nil
        // A watch being deinitialized is already nil in its Weak: it counts as gone.
        watches = watches.filter { $0.value.watch != nil }
        if watches.isEmpty {
            byDescriptor[wd] = nil
            inotify_rm_watch(descriptor, wd)
        } else {
            byDescriptor[wd] = watches
        }
        #endif
    }

    #if os(Linux)
    /// Reads events for good, blocked in read(2) between them.
    private func run(_ fd: Int32) {
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, size)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            var offset = 0
            var woken: [WebPushWatch] = []
            lock.lock()
            while offset + MemoryLayout<inotify_event>.size <= n {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // Events were lost: every waiter looks again.
                    woken += byDescriptor.values.flatMap { $0.values.compactMap(\.watch) }
                    continue
                }
                guard let watches = byDescriptor[event.wd] else { continue }
                let live = watches.values.compactMap(\.watch)
                woken += live
                if event.mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                    // The directory is gone (or moved): its watches must be made again.
                    byDescriptor[event.wd] = nil
                    if event.mask & UInt32(IN_IGNORED) == 0 { inotify_rm_watch(fd, event.wd) }
                    live.forEach { $0.watchDescriptor = -1 }
                }
            }
            lock.unlock()
            for w in woken { w.signal() }
        }
    }
    #endif
}
