import CKCLI
import Foundation

/// Runs the CLI in this process — `CLI.run(args, io:)` with stdin, stdout and stderr captured —
/// against a temporary data directory, with the environment and working directory a
/// `Sandbox` gives the binary: the same command, the same bytes, no process.
///
/// What only a process has is not here, so tests that need it stay end to end: the
/// `CK_DEBUG_*` hooks (armed by `CLI.main` only), pipes and SIGPIPE, signals and `--follow`
/// (it installs signal handlers), a terminal, and several commands at once (a command expects
/// a process of its own and keeps a little process-wide state, such as whether the kernel has
/// `openat2`: run one command at a time).
public final class CLISandbox: TestSandbox {
    public init() { super.init(prefix: "ck-cli-") }

    public typealias Result = CKResult

    /// The data directory's path.
    public var dir: String { dataDir.path }

    override public func execute(_ args: [String], stdin: Data, environment: [String: String], directory: URL) -> CKResult {
        let (io, captured) = IO.capture(environment: environment, currentDirectory: directory.path)
        let bytes = [UInt8](stdin)
        io.readIn = { bytes }
        let status = CLI.run(args, io: io)
        // Decoded whole, as the binary harness decodes what it read from the pipe.
        return CKResult(stdout: String(decoding: captured.stdoutBytes, as: UTF8.self), stderr: captured.stderr, status: status)
    }

    @discardableResult
    public func run(_ args: String..., stdin: String? = nil, env: [String: String] = [:]) -> CKResult { run(args, stdin: stdin, env: env) }
}
