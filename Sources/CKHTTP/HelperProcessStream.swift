#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The pipes of a helper process (`ck-remote-https`) that carries HTTP/1.1 requests over TLS:
/// ck writes a request on its stdin and reads the answer on its stdout. The helper inherits
/// stderr and no other descriptor; `close()` ends its stdin, then reaps it.
/// One user at a time, as an HTTP/1.1 connection is.
public final class HelperProcessStream: HTTPByteStream {
    /// The helper's name, looked for beside the running executable.
    public static let helperName = "ck-remote-https"
    /// The variable that names the helper's path instead.
    public static let pathVariable = "CK_REMOTE_HTTPS"
    /// How long `close()` waits for the helper to exit by itself before SIGKILL.
    public static let closeGrace = 2.0

    public let processIdentifier: pid_t
    /// Once `close()` has reaped the helper: its exit status, or 128 + the signal that ended
    /// it, as a shell says.
    public private(set) var exitStatus: Int32?
    private var toHelper: Int32
    private var fromHelper: Int32
    private var reaped = false

    /// Starts `executable` with `arguments`, its stdin and stdout the ends of two pipes, in
    /// `environment` (nil: this process's). Throws `HTTPClientError` `.connect` naming the path
    /// when it cannot be started.
    public init(executable: String, arguments: [String] = [], environment: [String: String]? = nil) throws {
        // A helper that exits mid-request must fail the write, not kill ck.
        signal(SIGPIPE, SIG_IGN)
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1]
        guard Self.makePipe(&input) else { throw HTTPClientError(.connect, "cannot start \(executable): pipe: \(Self.lastError())") }
        guard Self.makePipe(&output) else {
            _ = Self.closeDescriptor(input[0]); _ = Self.closeDescriptor(input[1])
            throw HTTPClientError(.connect, "cannot start \(executable): pipe: \(Self.lastError())")
        }
        func closeAll() { for fd in input + output { _ = Self.closeDescriptor(fd) } }

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
        // dup2 clears close-on-exec on 0 and 1; every pipe end has it set.
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        #if os(Linux)
        // Descriptors opened elsewhere in ck without close-on-exec stay out of the helper too
        // (glibc's closefrom action is hidden from Swift; a close of one gone meanwhile is
        // ignored by posix_spawn).
        for fd in Self.openDescriptors() where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        #elseif canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        posix_spawn_file_actions_addinherit_np(&actions, 2)
        #endif
        // ck ignores SIGPIPE; the helper starts with every signal as a fresh process has it.
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
        let status: Int32
        if let env {
            status = posix_spawn(&pid, executable, &actions, &attributes, argv, env)
        } else {
            status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        }
        guard status == 0 else {
            closeAll()
            throw HTTPClientError(.connect, "cannot start \(executable): \(String(cString: strerror(status)))")
        }
        _ = Self.closeDescriptor(input[0])
        _ = Self.closeDescriptor(output[1])
        processIdentifier = pid
        toHelper = input[1]
        fromHelper = output[0]
    }

    deinit { close() }

    public func write(_ bytes: [UInt8]) throws {
        guard toHelper >= 0 else { throw HTTPClientError(.closed, "the stream to \(Self.helperName) is closed") }
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                #if canImport(Glibc)
                Glibc.write(toHelper, raw.baseAddress! + sent, raw.count - sent)
                #else
                Darwin.write(toHelper, raw.baseAddress! + sent, raw.count - sent)
                #endif
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                throw HTTPClientError(.closed, "\(Self.helperName) exited before taking the whole request: \(Self.lastError())")
            }
            sent += n
        }
    }

    public func read(maxCount: Int, timeout: Double) throws -> [UInt8] {
        guard fromHelper >= 0 else { throw HTTPClientError(.closed, "the stream from \(Self.helperName) is closed") }
        guard maxCount > 0 else { return [] }
        let deadline = instant(after: timeout)
        while true {
            let current = now()
            if current >= deadline {
                throw HTTPClientError(.timedOut, "\(Self.helperName) sent nothing for \(timeout) s")
            }
            let ms = Int32(min((deadline - current + 999_999) / 1_000_000, UInt64(Int32.max)))
            var fd = pollfd(fd: fromHelper, events: Int16(POLLIN), revents: 0)
            let ready = poll(&fd, 1, ms)
            if ready < 0 {
                if errno == EINTR { continue }
                throw HTTPClientError(.closed, "waiting for \(Self.helperName) failed: \(Self.lastError())")
            }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: min(maxCount, 256 * 1024))
            let n = chunk.withUnsafeMutableBytes { raw in
                #if canImport(Glibc)
                Glibc.read(fromHelper, raw.baseAddress, raw.count)
                #else
                Darwin.read(fromHelper, raw.baseAddress, raw.count)
                #endif
            }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw HTTPClientError(.closed, "reading from \(Self.helperName) failed: \(Self.lastError())")
            }
            return Array(chunk[..<n])
        }
    }

    /// Ends the helper's stdin (it exits at that end), and its stdout, so a helper blocked
    /// writing an answer nobody reads gets EPIPE; then waits for it, SIGKILL after `closeGrace`.
    public func close() {
        if toHelper >= 0 { _ = Self.closeDescriptor(toHelper); toHelper = -1 }
        if fromHelper >= 0 { _ = Self.closeDescriptor(fromHelper); fromHelper = -1 }
        guard !reaped else { return }
        reaped = true
        let deadline = instant(after: Self.closeGrace)
        var status: Int32 = 0
        while true {
            let r = waitpid(processIdentifier, &status, WNOHANG)
            if r == processIdentifier { exitStatus = Self.shellStatus(status); return }
            if r < 0 && errno != EINTR { return }
            if now() >= deadline { break }
            usleep(2_000)
        }
        kill(processIdentifier, SIGKILL)
        while true {
            let r = waitpid(processIdentifier, &status, 0)
            if r == processIdentifier { exitStatus = Self.shellStatus(status); return }
            if r < 0 && errno != EINTR { return }
        }
    }

    /// waitpid's status as a shell reports it (WIFEXITED and friends are macros Swift lacks).
    private static func shellStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// The helper's path: `CK_REMOTE_HTTPS` when set, else `ck-remote-https` beside the running
    /// executable when it is there; nil when there is none.
    public static func locate() -> String? {
        let variable = getenv(pathVariable).map { String(cString: $0) }
        return locate(variable: variable, executable: runningExecutable())
    }

    /// `locate()` with what it reads given: the variable's value and the executable's path.
    public static func locate(variable: String?, executable: String?) -> String? {
        // A path named on purpose is returned as it is: starting it then says what is wrong.
        if let variable, !variable.isEmpty { return variable }
        guard let executable, let slash = executable.lastIndex(of: "/") else { return nil }
        let candidate = String(executable[...slash]) + helperName
        return access(candidate, X_OK) == 0 ? candidate : nil
    }

    /// The running executable's path, symbolic links resolved.
    static func runningExecutable() -> String? {
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #elseif canImport(Darwin)
        var size: UInt32 = 0
        _ = _NSGetExecutablePath(nil, &size)
        var buffer = [CChar](repeating: 0, count: Int(size) + 1)
        guard _NSGetExecutablePath(&buffer, &size) == 0 else { return nil }
        guard let resolved = realpath(buffer, nil) else { return String(cString: buffer) }
        defer { free(resolved) }
        return String(cString: resolved)
        #else
        return nil
        #endif
    }

    /// A pipe whose ends close on exec, so no other child of ck holds them (which would keep
    /// the helper from seeing the end of its stdin). pipe2 is hidden from Swift: a process
    /// spawned by another thread in between could still inherit them.
    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
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

    private static func closeDescriptor(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(fd)
        #else
        Darwin.close(fd)
        #endif
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}
