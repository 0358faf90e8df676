#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a short run of a command-line tool left: its exit status (128 + the signal that ended
/// it, as a shell says) and what it printed on stdout and stderr.
struct ToolRun {
    var status: Int32
    var output: [UInt8]
    var errorOutput: [UInt8]
}

/// Runs a tool to its end with a few bytes on its stdin, collecting stdout and stderr: how the
/// credential store drives `/usr/bin/security`. Nothing goes through a shell, and the input is
/// never in argv, where `ps` would show it to every user of the machine.
enum ToolProcess {
    /// The most stdin may hold: it is written into the pipe before the tool starts, so it has
    /// to fit in the pipe's buffer (64 KiB on Linux and macOS; far more than a command line).
    static let maxInput = 16 * 1024

    /// Runs `tool` with `arguments`; throws a sentence saying why it could not be started.
    static func run(_ tool: String, _ arguments: [String], input: [UInt8] = []) throws(ToolStartFailure) -> ToolRun {
        guard input.count <= maxInput else { throw ToolStartFailure("its input is \(input.count) bytes, more than \(maxInput)") }
        var stdinPipe: [Int32] = [-1, -1], stdoutPipe: [Int32] = [-1, -1], stderrPipe: [Int32] = [-1, -1]
        func closeAll() { for fd in stdinPipe + stdoutPipe + stderrPipe where fd >= 0 { _ = close(fd) } }
        guard makePipe(&stdinPipe), makePipe(&stdoutPipe), makePipe(&stderrPipe) else {
            let why = lastError()
            closeAll()
            throw ToolStartFailure("pipe: \(why)")
        }
        // The input goes into the pipe before the tool exists: a tool that exits without
        // reading cannot raise SIGPIPE in ck, and a full pipe fails here instead of blocking.
        _ = fcntl(stdinPipe[1], F_SETFL, O_NONBLOCK)
        var sent = 0
        while sent < input.count {
            let n = input.withUnsafeBytes { systemWrite(stdinPipe[1], $0.baseAddress! + sent, $0.count - sent) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { let why = lastError(); closeAll(); throw ToolStartFailure("writing its input: \(why)") }
            sent += n
        }
        _ = close(stdinPipe[1]); stdinPipe[1] = -1

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
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        #if os(Linux)
        // Descriptors ck opened without close-on-exec stay out of the tool.
        for fd in openDescriptors() where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        #elseif canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        // The tool starts with every signal as a fresh process has it (ck may ignore SIGPIPE).
        var defaults = sigset_t(), empty = sigset_t()
        sigemptyset(&empty)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([tool] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, tool, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            closeAll()
            throw ToolStartFailure(String(cString: strerror(spawned)))
        }
        _ = close(stdinPipe[0]); stdinPipe[0] = -1
        _ = close(stdoutPipe[1]); stdoutPipe[1] = -1
        _ = close(stderrPipe[1]); stderrPipe[1] = -1

        // Both streams are drained together, so a tool that fills one while ck waits on the
        // other never stalls.
        var output: [UInt8] = [], errorOutput: [UInt8] = []
        var open = [stdoutPipe[0], stderrPipe[0]]
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open.contains(where: { $0 >= 0 }) {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 { if errno == EINTR { continue }; break }
            for i in fds.indices where fds[i].fd >= 0 && fds[i].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { read(fds[i].fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n > 0 {
                    if i == 0 { output += buffer[0..<n] } else { errorOutput += buffer[0..<n] }
                } else {
                    _ = close(open[i]); open[i] = -1
                }
            }
        }
        for fd in open where fd >= 0 { _ = close(fd) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7F
        return ToolRun(status: signal == 0 ? (status >> 8) & 0xFF : 128 + signal, output: output, errorOutput: errorOutput)
    }

    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    #if os(Linux)
    private static func openDescriptors() -> [Int32] {
        guard let dir = opendir("/proc/self/fd") else { return [] }
        defer { closedir(dir) }
        var fds: [Int32] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if let fd = Int32(name) { fds.append(fd) }
        }
        return fds
    }
    #endif

    private static func lastError() -> String { String(cString: strerror(errno)) }
}

/// Why a tool could not be started (not: what it said when it ran).
struct ToolStartFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
