import XCTest
import Foundation
@testable import CKCLI
@testable import CKCore

/// Runs the CLI in-process against a temporary data directory.
final class CLISandbox {
    let dir: String

    init() {
        dir = NSTemporaryDirectory() + "ck-cli-" + UUID().uuidString
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        var json: JSONValue? { try? JSONParser.parse(stdout) }
    }

    @discardableResult
    func run(_ args: String..., stdin: String = "", env: [String: String] = [:]) -> Result { run(args, stdin: stdin, env: env) }

    @discardableResult
    func run(_ args: [String], stdin: String = "", env: [String: String] = [:]) -> Result {
        let (io, cap) = IO.capture(stdin: stdin, environment: ["CK_DATA_DIR": dir, "HOME": dir].merging(env) { _, n in n }, currentDirectory: "/")
        let status = CLI.run(args, io: io)
        return Result(status: status, stdout: cap.stdout, stderr: cap.stderr)
    }
}
