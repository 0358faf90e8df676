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
        guard ChildProcess.makePipe(&input) else { throw HTTPClientError(.connect, "cannot start \(executable): pipe: \(Self.lastError())") }
        guard ChildProcess.makePipe(&output) else {
            _ = Self.closeDescriptor(input[0]); _ = Self.closeDescriptor(input[1])
            throw HTTPClientError(.connect, "cannot start \(executable): pipe: \(Self.lastError())")
        }
        do {
            processIdentifier = try ChildProcess.spawn(executable, arguments, environment: environment, stdin: input[0], stdout: output[1])
        } catch {
            for fd in input + output { _ = Self.closeDescriptor(fd) }
            throw HTTPClientError(.connect, "cannot start \(executable): \(error.message)")
        }
        _ = Self.closeDescriptor(input[0])
        _ = Self.closeDescriptor(output[1])
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
            if r == processIdentifier { exitStatus = ChildProcess.shellStatus(status); return }
            if r < 0 && errno != EINTR { return }
            if now() >= deadline { break }
            usleep(2_000)
        }
        kill(processIdentifier, SIGKILL)
        while true {
            let r = waitpid(processIdentifier, &status, 0)
            if r == processIdentifier { exitStatus = ChildProcess.shellStatus(status); return }
            if r < 0 && errno != EINTR { return }
        }
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

    private static func closeDescriptor(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(fd)
        #else
        Darwin.close(fd)
        #endif
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}
