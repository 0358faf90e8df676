import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a command reads and writes: the real process streams, or buffers in tests.
public final class IO {
    public var writeOut: (String) -> Void
    public var writeErr: (String) -> Void
    public var readIn: () -> [UInt8]
    public var writeOutBytes: ([UInt8]) -> Void
    public var environment: [String: String]
    public var currentDirectory: String
    /// Flushes stdout; false once the reader has gone away (EPIPE).
    public var flush: () -> Bool = { true }

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
        let io = IO(writeOut: { s in fputs(s, stdout) },
           writeErr: { s in fputs(s, stderr) },
           readIn: { FileHandle.standardInput.readDataToEndOfFile().map { $0 } },
           writeOutBytes: { b in _ = b.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, b.count, stdout) } },
           environment: ProcessInfo.processInfo.environment,
           currentDirectory: FileManager.default.currentDirectoryPath)
        io.flush = { fflush(stdout) == 0 && ferror(stdout) == 0 }
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
