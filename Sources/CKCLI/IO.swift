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
    public var writeOutBytes: ([UInt8]) -> Void
    public var environment: [String: String]
    public var currentDirectory: String
    /// Pushes buffered output out; false once a write has failed (then nothing more is written).
    public var flush: () -> Bool = { true }
    /// Flushes and says how writing went.
    public var finish: () -> OutputStatus = { .ok }
    /// Flushes, then — when stdout is a pipe — waits until the reader has read everything
    /// written, or has gone without reading it. What a command commits after its output
    /// (bookmarks, read marks) waits for this, so `ck zone changes | jq <typo>` loses nothing.
    public var confirmDelivered: () -> OutputStatus = { .ok }
    /// True once stdout's reader has gone (a closed pipe, a hung-up terminal).
    public var readerGone: () -> Bool = { false }

    public init(writeOut: @escaping (String) -> Void, writeErr: @escaping (String) -> Void, readIn: @escaping () -> [UInt8],
                writeOutBytes: @escaping ([UInt8]) -> Void, environment: [String: String], currentDirectory: String) {
        self.writeOut = writeOut
        self.writeErr = writeErr
        self.readIn = readIn
        self.writeOutBytes = writeOutBytes
        self.environment = environment
        self.currentDirectory = currentDirectory
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
                    environment: ProcessInfo.processInfo.environment,
                    currentDirectory: FileManager.default.currentDirectoryPath)
        io.flush = { out.push() == .ok }
        io.finish = { out.push() }
        io.confirmDelivered = { out.confirmDelivered() }
        io.readerGone = { StandardOutput.readerGone() }
        return io
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

    func append(_ bytes: [UInt8]) {
        guard status == .ok else { return }
        buffer += bytes
        if buffer.count >= 1 << 16 { _ = push() }
    }

    func push() -> OutputStatus {
        guard status == .ok else { return status }
        var off = 0
        while off < buffer.count {
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

    func confirmDelivered() -> OutputStatus {
        let s = push()
        guard s == .ok else { return s }
        var st = stat()
        guard fstat(1, &st) == 0, st.st_mode & S_IFMT == S_IFIFO else { return .ok }
        while true {
            var unread: Int32 = 0
            // FIONREAD on a pipe counts what its reader has not read yet.
            guard ioctl(1, UInt(FIONREAD), &unread) == 0 else { return .ok }
            if unread == 0 { return .ok }
            if StandardOutput.readerGone() { status = .closed; return .closed }
            usleep(2_000)
        }
    }

    static func readerGone() -> Bool {
        var p = pollfd(fd: 1, events: Int16(POLLOUT), revents: 0)
        guard poll(&p, 1, 0) > 0 else { return false }
        return p.revents & Int16(POLLERR | POLLHUP) != 0
    }
}
