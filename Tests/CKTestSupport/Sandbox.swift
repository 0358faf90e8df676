import Foundation
import XCTest

/// Runs the built `ck` binary, a process per command, against a temporary data directory and
/// captures everything: for what needs a process of its own — pipes, signals, `--follow`,
/// crashes and faults armed by the environment, concurrent processes, install.
public final class Sandbox: TestSandbox {
    /// How many times longer the random loops run: `make stress` sets it (SCALE; 1 when unset).
    public static let stressScale = max(1, Int(ProcessInfo.processInfo.environment["CK_STRESS_SCALE"] ?? "") ?? 1)

    public static var binary: URL {
        // `make stress` runs the release build (CK_TEST_BINARY).
        if let b = ProcessInfo.processInfo.environment["CK_TEST_BINARY"], !b.isEmpty { return URL(fileURLWithPath: b) }
        // The test bundle sits in the products directory, beside the `ck` executable.
        var dir = Bundle(for: Sandbox.self).bundleURL
        while dir.pathExtension == "xctest" || dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        let candidates = [dir.appendingPathComponent("ck"), Bundle.main.bundleURL.appendingPathComponent("ck")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    public init() { super.init(prefix: "ck-e2e-") }

    /// Runs the binary. Off the main thread: waiting there for a child process costs tens of
    /// milliseconds more per command (the run loop's polling), and the suite runs thousands.
    override public func execute(_ args: [String], stdin: Data, environment: [String: String], directory: URL) -> CKResult {
        guard Thread.isMainThread else { return start(args, stdin: .bytes(stdin), environment: environment, directory: directory).collect() }
        final class Box: @unchecked Sendable { var result: CKResult? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            box.result = self.start(args, stdin: .bytes(stdin), environment: environment, directory: directory).collect()
            done.signal()
        }
        done.wait()
        return box.result!
    }

    /// What a launched ck reads on stdin.
    public enum Input { case bytes(Data), file(URL?) }

    /// A ck process started by `launch`: signal it, then `collect` its output and exit status.
    public struct Launched {
        public let process: Process
        fileprivate let out: Pipe, err: Pipe

        /// Reads both pipes (so a large output cannot block the child), then waits for it.
        public func collect() -> CKResult {
            final class Box: @unchecked Sendable { var data = Data() }
            let outBox = Box()
            let group = DispatchGroup()
            group.enter()
            DispatchQueue.global().async { outBox.data = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
            let errData = err.fileHandleForReading.readDataToEndOfFile()
            group.wait()
            process.waitUntilExit()
            return CKResult(stdout: String(decoding: outBox.data, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self),
                            status: process.terminationStatus)
        }
    }

    /// Starts the binary without waiting for it.
    public func launch(_ args: [String], stdin: Input = .bytes(Data()), env: [String: String] = [:], cwd: URL? = nil) -> Launched {
        start(args, stdin: stdin, environment: environment.merging(env) { _, new in new }, directory: cwd ?? root)
    }

    private func start(_ args: [String], stdin: Input, environment: [String: String], directory: URL) -> Launched {
        let p = Process()
        p.executableURL = Sandbox.binary
        p.arguments = args
        p.environment = environment
        p.currentDirectoryURL = directory
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        switch stdin {
        case .bytes(let d):
            let inp = Pipe()
            p.standardInput = inp
            try! p.run()
            if !d.isEmpty { inp.fileHandleForWriting.write(d) }
            try? inp.fileHandleForWriting.close()
        case .file(let url):
            p.standardInput = url.flatMap { FileHandle(forReadingAtPath: $0.path) } ?? FileHandle.nullDevice
            try! p.run()
        }
        return Launched(process: p, out: out, err: err)
    }
}
