import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How writing stdout went.
public enum OutputStatus: Equatable {
    case ok
    /// The reader went away (EPIPE, or it exited without reading what was written).
    case closed
    /// Any other write error (a full disk behind `>`, an I/O error).
    case failed(String)
    /// A `--follow` was asked to stop (SIGINT, SIGTERM) while its output was blocked on a
    /// reader that does not read: the rest is dropped, nothing is committed, and ck exits 0 as
    /// on any stop request.
    case interrupted
}

/// stdout could not be written: nothing the command would have committed after its output
/// (a bookmark, a read mark) was committed.
struct OutputError: Error {
    var status: OutputStatus
}

/// Where a command reads and writes: the real process streams, or buffers in tests.
public final class IO {
    public var writeOut: (String) -> Void
    public var writeErr: (String) -> Void
    public var readIn: () -> [UInt8]
    /// Reads stdin up to `limit` bytes and no further (what is left stays unread), so a
    /// command's memory stays bounded whatever is piped in. Unset: a prefix of `readIn`.
    public var readInAtMost: ((Int) -> [UInt8])?
    public var writeOutBytes: ([UInt8]) -> Void
    public var environment: [String: String]
    public var currentDirectory: String
    /// Pushes buffered output out; false once a write has failed (then nothing more is written).
    public var flush: () -> Bool = { true }
    /// False once a write has failed: a long stream checks this to stop early, without
    /// pushing out what it buffers.
    public var writable: () -> Bool = { true }
    /// Flushes and says how writing went.
    public var finish: () -> OutputStatus = { .ok }
    /// Flushes, then — when stdout is a pipe — waits until the reader has read everything
    /// written, or has gone without reading it. What a command commits after its output
    /// (bookmarks, read marks) waits for this, so `ck zone changes | jq <typo>` loses nothing.
    public var confirmDelivered: () -> OutputStatus = { .ok }
    /// True once stdout's reader has gone (a closed pipe, a hung-up terminal).
    public var readerGone: () -> Bool = { false }
    /// Drops output not yet written: a command that fails prints nothing on stdout (what a
    /// streaming command already pushed out, past its buffer, cannot be taken back).
    public var discardPending: () -> Void = {}
    /// True once the command has been asked to stop (SIGINT or SIGTERM during `--follow`):
    /// a write, or a wait for the reader, that a stalled reader holds up then gives up.
    public var stopRequested: () -> Bool = { false }
    /// True when stdin is a terminal: a command about to read it says so instead of waiting
    /// in silence.
    public var stdinIsTerminal: () -> Bool = { false }
    /// True when stderr is a terminal: where progress is shown.
    public var stderrIsTerminal: () -> Bool = { false }

    public init(writeOut: @escaping (String) -> Void, writeErr: @escaping (String) -> Void, readIn: @escaping () -> [UInt8],
                writeOutBytes: @escaping ([UInt8]) -> Void, environment: [String: String], currentDirectory: String) {
        self.writeOut = writeOut
        self.writeErr = writeErr
        self.readIn = readIn
        self.writeOutBytes = writeOutBytes
        self.environment = environment
        self.currentDirectory = currentDirectory
    }

    /// At most `limit` bytes of stdin (all of it when shorter).
    public func readIn(atMost limit: Int) -> [UInt8] { readInAtMost?(limit) ?? Array(readIn().prefix(limit)) }

    /// Reads file descriptor 0 until end of file or `limit` bytes, in chunks.
    static func readStandardInput(atMost limit: Int) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while out.count < limit {
            let want = min(chunk.count, limit - out.count)
            let n = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, want) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            out.append(contentsOf: chunk[0..<n])
        }
        return out
    }

    /// The process's own stdin, stdout, stderr, environment and working directory.
    public static func standard() -> IO {
        // A closed pipe makes write fail with EPIPE, which ck reports, instead of killing it.
        signal(SIGPIPE, SIG_IGN)
        let out = StandardOutput()
        let io = IO(writeOut: { out.append(Array($0.utf8)) },
                    writeErr: { s in fputs(s, stderr) },
                    readIn: { FileHandle.standardInput.readDataToEndOfFile().map { $0 } },
                    writeOutBytes: { out.append($0) },
                    environment: IO.processEnvironment(),
                    currentDirectory: IO.processDirectory())
        io.readInAtMost = { IO.readStandardInput(atMost: $0) }
        io.flush = { out.push() == .ok }
        io.finish = { out.push() }
        io.confirmDelivered = { out.confirmDelivered() }
        io.readerGone = { StandardOutput.readerGone() }
        io.discardPending = { out.discard() }
        io.writable = { out.isWritable }
        io.stdinIsTerminal = { isatty(0) == 1 }
        io.stderrIsTerminal = { isatty(2) == 1 }
        out.stopRequested = { [unowned io] in io.stopRequested() }
        return io
    }

    /// The process's environment, read from `environ` (Foundation's ProcessInfo costs a
    /// start-up more); a name set twice keeps its first value, as `getenv` finds it.
    static func processEnvironment() -> [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(s[..<eq])
                if out[name] == nil { out[name] = String(s[s.utf8.index(after: eq)...]) }
            }
            p += 1
        }
        return out
    }

    /// The working directory (`getcwd`; Foundation's answer when that fails).
    static func processDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return FileManager.default.currentDirectoryPath }
        return String(cString: buffer)
    }

    /// Captured streams for in-process tests.
    public final class Capture {
        public var stdout = ""
        public var stderr = ""
        public var stdoutBytes: [UInt8] = []
    }

    public static func capture(stdin: String = "", environment: [String: String] = [:], currentDirectory: String = "/") -> (IO, Capture) {
        let c = Capture()
        let io = IO(writeOut: { c.stdout += $0; c.stdoutBytes += Array($0.utf8) },
                    writeErr: { c.stderr += $0 },
                    readIn: { Array(stdin.utf8) },
                    writeOutBytes: { c.stdoutBytes += $0; c.stdout += String(decoding: $0, as: UTF8.self) },
                    environment: environment, currentDirectory: currentDirectory)
        return (io, c)
    }
}

/// File descriptor 1 with a buffer of its own (no stdio), so every write error is seen.
final class StandardOutput {
    private var buffer: [UInt8] = []
    private var status: OutputStatus = .ok
    /// Checked before each write and while waiting for the reader (see `IO.stopRequested`).
    var stopRequested: () -> Bool = { false }

    func append(_ bytes: [UInt8]) {
        guard status == .ok else { return }
        buffer += bytes
        if buffer.count >= 1 << 16 { _ = push() }
    }

    func push() -> OutputStatus {
        guard status == .ok else { return status }
        var off = 0
        while off < buffer.count {
            // A stop request interrupts a write blocked on a full pipe (EINTR, or a short count).
            if stopRequested() { status = .interrupted; break }
            let n = buffer.withUnsafeBytes { write(1, $0.baseAddress! + off, buffer.count - off) }
            if n < 0 {
                if errno == EINTR { continue }
                status = errno == EPIPE ? .closed : .failed(String(cString: strerror(errno)))
                break
            }
            off += n
        }
        buffer.removeAll(keepingCapacity: true)
        return status
    }

    func discard() { buffer.removeAll() }

    var isWritable: Bool { status == .ok }

    /// How long a reader that is there but does not read is waited for. A reader that fails
    /// (`jq` with a typo, `head`) leaves at once and is seen leaving; one still there after
    /// this (a parent that waits for ck to exit before it reads) is taken to read later.
    static let patience: Double = 2

    func confirmDelivered() -> OutputStatus {
        let s = push()
        guard s == .ok else { return s }
        var st = stat()
        guard fstat(1, &st) == 0, st.st_mode & S_IFMT == S_IFIFO else { return .ok }
        let deadline = Date().addingTimeInterval(StandardOutput.patience)
        while Date() < deadline {
            var unread: Int32 = 0
            // FIONREAD on a pipe counts what its reader has not read yet.
            guard ioctl(1, UInt(FIONREAD), &unread) == 0 else { return .ok }
            if unread == 0 { return .ok }
            if stopRequested() { status = .interrupted; return .interrupted }
            if StandardOutput.readerGone() { status = .closed; return .closed }
            usleep(2_000)
        }
        return StandardOutput.readerGone() ? .closed : .ok
    }

    static func readerGone() -> Bool {
        var p = pollfd(fd: 1, events: Int16(POLLOUT), revents: 0)
        guard poll(&p, 1, 0) > 0 else { return false }
        return p.revents & Int16(POLLERR | POLLHUP) != 0
    }
}
