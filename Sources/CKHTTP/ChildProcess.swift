#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starting a child process of ck with its standard streams on descriptors ck chose — the HTTPS
/// helper (HelperProcessStream), a tool such as security(1) (CKRemote's ToolProcess). No shell;
/// the child gets the given descriptors as 0, 1 (and 2), stderr inherited when none is given,
/// no other descriptor of ck, and every signal as a fresh process has it (ck ignores SIGPIPE).
public enum ChildProcess {
    /// Spawns `executable` with `arguments` in `environment` (nil: this process's); the pid,
    /// or throws the system's sentence for why it could not start.
    public static func spawn(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                             stdin: Int32, stdout: Int32, stderr: Int32? = nil) throws(ChildProcessFailure) -> pid_t {
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer { posix_spawn_file_actions_destroy(&actions); posix_spawnattr_destroy(&attributes) }
        // dup2 clears close-on-exec on the targets; every pipe end ck makes has it set.
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        if let e = stderr { posix_spawn_file_actions_adddup2(&actions, e, 2) }
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        #if os(Linux)
        // Descriptors opened elsewhere in ck without close-on-exec stay out of the child too
        // (glibc's closefrom action is hidden from Swift; a close of one gone meanwhile is
        // ignored by posix_spawn).
        for fd in openDescriptors() where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        #elseif canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        if stderr == nil { posix_spawn_file_actions_addinherit_np(&actions, 2) }
        #endif
        var defaults = sigset_t(), empty = sigset_t()
        sigemptyset(&empty)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let env = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { free($0) }
            env?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = env.map { posix_spawn(&pid, executable, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard status == 0 else { throw ChildProcessFailure(String(cString: strerror(status))) }
        return pid
    }

    /// A pipe whose ends close on exec, so no other child of ck holds them (which would keep a
    /// child from seeing the end of its stdin). pipe2 is hidden from Swift: a process spawned
    /// by another thread in between could still inherit them.
    public static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// waitpid's status as a shell reports it: the exit status, or 128 + the signal that ended
    /// it (WIFEXITED and friends are macros Swift lacks).
    public static func shellStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    #if os(Linux)
    /// This process's open descriptors, from /proc (none when it is not mounted).
    static func openDescriptors() -> [Int32] {
        guard let dir = opendir("/proc/self/fd") else { return [] }
        defer { closedir(dir) }
        var fds: [Int32] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let fd = Int32(name) { fds.append(fd) }
        }
        return fds
    }
    #endif
}

/// Why a child process could not be started.
public struct ChildProcessFailure: Error {
    public var message: String
    public init(_ message: String) { self.message = message }
}
