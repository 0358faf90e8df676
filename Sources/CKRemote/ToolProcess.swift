import CKHTTP
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
        guard ChildProcess.makePipe(&stdinPipe), ChildProcess.makePipe(&stdoutPipe), ChildProcess.makePipe(&stderrPipe) else {
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

        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(tool, arguments, stdin: stdinPipe[0], stdout: stdoutPipe[1], stderr: stderrPipe[1])
        } catch {
            closeAll()
            throw ToolStartFailure(error.message)
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
        return ToolRun(status: ChildProcess.shellStatus(status), output: output, errorOutput: errorOutput)
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}

/// Why a tool could not be started (not: what it said when it ran).
struct ToolStartFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
