import Foundation
import XCTest

/// A `ck serve --port 0` process of a sandbox: started, its first stdout line read (the JSON
/// `{dataDirectory, pid, url}`), then signalled and collected.
public final class ServeProcess {
    public let process: Process
    public let url: String
    public let port: UInt16
    public let announcement: [String: Any]
    private let out: Pipe, err: Pipe
    private final class Box: @unchecked Sendable { var data = Data() }
    private let errBox = Box()
    private let errDone = DispatchSemaphore(value: 0)

    /// Starts the server and waits (up to 10 s) for the line saying where it listens.
    /// `command`: `ck serve --port 0` unless another (`ck console`, which takes a free port
    /// itself); `environment` over the sandbox's.
    public init(_ sandbox: Sandbox, _ extra: [String] = [], command: [String] = ["serve", "--port", "0"], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = Sandbox.binary
        process.arguments = command + extra
        process.environment = sandbox.environment.merging(environment) { _, new in new }
        process.currentDirectoryURL = sandbox.root
        out = Pipe()
        err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errHandle = err.fileHandleForReading, box = errBox, done = errDone
        DispatchQueue.global().async { box.data = errHandle.readDataToEndOfFile(); done.signal() }
        var line = Data()
        let handle = out.fileHandleForReading
        let deadline = Date().addingTimeInterval(10)
        while !line.contains(0x0A), Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        guard let first = line.split(separator: 0x0A).first,
              let o = (try? JSONSerialization.jsonObject(with: Data(first))) as? [String: Any], let u = o["url"] as? String,
              let p = u.split(separator: ":").last.flatMap({ UInt16($0) }) else {
            process.terminate()
            throw NSError(domain: "ServeProcess", code: 1, userInfo: [NSLocalizedDescriptionKey: "ck serve did not announce itself: \(String(decoding: line, as: UTF8.self))"])
        }
        announcement = o
        url = u
        port = p
    }

    public func client() throws -> HTTPTestClient { try HTTPTestClient(port: port) }

    /// Sends a signal, then waits for the exit: its status, the seconds it took, stderr.
    public func stop(_ signal: Int32 = SIGTERM) -> (status: Int32, seconds: Double, stderr: String) {
        let start = Date()
        kill(process.processIdentifier, signal)
        // A server that does not stop must fail its test, not hang the suite.
        while process.isRunning, Date().timeIntervalSince(start) < 10 { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return (-1, Date().timeIntervalSince(start), "ck serve did not stop within 10 s of signal \(signal)")
        }
        process.waitUntilExit()
        let took = Date().timeIntervalSince(start)
        _ = errDone.wait(timeout: .now() + 5)
        return (process.terminationStatus, took, String(decoding: errBox.data, as: UTF8.self))
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
}

/// A signed-in sandbox of one container, with an API token and the device account's web auth
/// token, and its `ck serve` process: what the tests of the server as a process start from.
public struct ServedSandbox {
    public let sandbox: Sandbox
    public let serve: ServeProcess
    public let container: String
    public let apiToken: String
    public let session: String

    /// `serveEnvironment`: variables the server alone gets (a test hook), not the CLI after it.
    public init(container: String, _ extra: [String] = [], serveEnvironment: [String: String] = [:]) throws {
        let s = Sandbox()
        s.environment["CK_CONTAINER"] = container
        s.signIn()
        sandbox = s
        self.container = container
        apiToken = try XCTUnwrap(s.ck("api-token", "create", "--name", "tests").object["apiToken"] as? String)
        session = try XCTUnwrap(s.ck("account", "web-auth-token").object["ckWebAuthToken"] as? String)
        let plain = s.environment
        s.environment.merge(serveEnvironment) { _, new in new }
        defer { s.environment = plain }
        serve = try ServeProcess(s, extra)
    }

    /// `ckAPIToken=…&ckWebAuthToken=…`, the session percent-encoded.
    public var auth: String {
        "ckAPIToken=\(apiToken)&ckWebAuthToken=" + (session.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? session)
    }

    /// The path of an endpoint of database `db` (development), with the credentials.
    public func path(_ db: String, _ endpoint: String) -> String {
        "/database/1/\(container)/development/\(db)/\(endpoint)?\(auth)"
    }

    public func post(_ db: String, _ endpoint: String, _ json: String) throws -> HTTPTestClient.Answer {
        try serve.client().request("POST", path(db, endpoint), json: json)
    }
}
