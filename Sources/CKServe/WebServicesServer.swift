import CKCore
import CKHTTP
import CKJSON
import CKModel
import Foundation

/// `ck serve`: the HTTP engine bound to an address, the Web Services handler over the API of one
/// data directory, and the URL the API puts in what it hands out (asset, upload and long-poll
/// URLs) — known only once the port is bound, so the handler is installed then.
public final class WebServicesServer: @unchecked Sendable {
    public let dataDirectory: String
    let host: String
    let requestedPort: UInt16
    let allowedOrigins: [String]
    let pollSeconds: Double
    let log: @Sendable (String) -> Void
    let clock: Clock
    let webTokenRotation: WebTokenRotation
    private var http: HTTPServer?
    private var handler: WebServicesHandler?
    private var sweeper: DispatchSourceTimer?
    /// The console's secret, new each start (ConsoleSecret).
    private let consoleSecret = ConsoleSecret()
    /// The console's URL with its key (`http://127.0.0.1:8484/console/#key=…`), once
    /// started: whoever opens it acts on the data directory, so it is printed, never logged.
    public private(set) var consoleURL: String?
    /// How often uploads no record took are looked for (`CloudKitAPI.sweepExpiredUploads`).
    static let uploadSweepSeconds = 60

    public init(dataDirectory: String, host: String = "127.0.0.1", port: UInt16 = 8484, allowedOrigins: [String] = [],
                pollSeconds: Double = 30, clock: Clock = .system, webTokenRotation: WebTokenRotation = .live,
                log: @escaping @Sendable (String) -> Void) {
        self.clock = clock
        self.webTokenRotation = webTokenRotation
        self.dataDirectory = dataDirectory
        self.host = host
        self.requestedPort = port
        self.allowedOrigins = allowedOrigins
        self.pollSeconds = pollSeconds
        self.log = log
    }

    /// Whether `host` names this machine only.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        // An IPv4 address of 127/8, written as one: a name such as 127.example.com is not.
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { p in p.count <= 3 && !p.isEmpty && p.allSatisfy { ("0"..."9").contains($0) } && UInt8(p) != nil }
    }

    /// Binds and starts answering; returns the server's URL (`http://127.0.0.1:8484`). A port in
    /// use is EXISTS, one the system refuses this user ACCESS_DENIED.
    @discardableResult
    public func start() throws -> String {
        let front = DeferredHandler()
        let configuration = HTTPServerConfiguration(host: host, port: requestedPort)
        let server = HTTPServer(configuration: configuration, handler: front)
        do { try server.start() } catch let e as HTTPServerError {
            // "cannot listen on 127.0.0.1:8484: Address already in use": EXISTS (exit 4), as for
            // anything that exists already; a port the system keeps from this user: ACCESS_DENIED.
            if e.isAddressInUse {
                throw CloudKitError(.exists, e.message + " (another server listens there: is ck serve running already?); choose another port with --port, or --port 0 for any free one")
            }
            if e.isPermissionDenied { throw CloudKitError(.accessDenied, e.message + " (ports below 1024 need privileges); choose another with --port") }
            throw CloudKitError(.internalError, e.message)
        }
        let urlHost = host.contains(":") ? "[\(host)]" : host
        let url = "http://\(urlHost):\(server.port)"
        let api = CloudKitAPI(dataDirectory: dataDirectory, clock: clock, serverURL: url, webTokenRotation: webTokenRotation)
        var names: Set<String> = [host.lowercased(), "localhost", "127.0.0.1", "::1"]
        if !Self.isLoopback(host) { names.insert(Self.hostName()) }
        // Waiting long-polls may hold half the connections: the other half stays for requests.
        // The console only on loopback: over a network its key would travel in clear, to a
        // server that acts as any user of the data directory.
        let console = Self.isLoopback(host) ? consoleSecret : nil
        let handler = WebServicesHandler(api: api, allowedOrigins: allowedOrigins, hostNames: names, pollSeconds: pollSeconds,
                                         maxWaitingPolls: configuration.maxConnections / 2, consoleSecret: console, log: log)
        consoleURL = console.map { url + "/console/#key=" + $0.value }
        front.install(handler)
        self.http = server
        self.handler = handler
        let sweeper = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        sweeper.schedule(deadline: .now(), repeating: .seconds(Self.uploadSweepSeconds))
        sweeper.setEventHandler { _ = try? api.sweepExpiredUploads() }
        sweeper.resume()
        self.sweeper = sweeper
        return url
    }

    /// Stops accepting, ends long-polls, lets the requests in flight finish (within `grace`),
    /// then publishes what the answered commits left to publish.
    public func stop(grace: TimeInterval = 4.5) {
        sweeper?.cancel()
        handler?.stop()
        http?.stop(grace: grace)
        handler?.api.finishPublishing()
    }

    /// Returns once the server has stopped and its answered commits are published.
    public func waitUntilStopped() {
        http?.waitUntilStopped()
        handler?.api.finishPublishing()
    }

    private static func hostName() -> String {
        var buf = [CChar](repeating: 0, count: 256)
        guard gethostname(&buf, buf.count) == 0 else { return "" }
        return String(cString: buf).lowercased()
    }
}

/// The handler the engine starts with: refuses (503) until the real one is installed, which
/// happens before the server's URL is printed — so no client that read it sees a refusal.
final class DeferredHandler: HTTPHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var inner: HTTPHandler?

    func install(_ h: HTTPHandler) {
        lock.lock()
        inner = h
        lock.unlock()
    }

    private var current: HTTPHandler? {
        lock.lock()
        defer { lock.unlock() }
        return inner
    }

    func admit(_ head: HTTPRequestHead) -> HTTPAdmission {
        current?.admit(head) ?? .answer(refusal(status: 503, reason: "ck serve is starting"))
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        current?.respond(to: request) ?? refusal(status: 503, reason: "ck serve is starting")
    }

    func refusal(status: Int, reason: String) -> HTTPResponse {
        if let h = current { return h.refusal(status: status, reason: reason) }
        let body = JSONWriter.compact(["serverErrorCode": "SERVICE_UNAVAILABLE", "reason": .string(reason), "retryAfter": 1])
        return HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json; charset=utf-8"), ("Retry-After", "1")]), body: Array(body.utf8))
    }

    func log(_ head: HTTPRequestHead?, status: Int, milliseconds: Double, note: String?) {
        current?.log(head, status: status, milliseconds: milliseconds, note: note)
    }

    func refusal(status: Int, reason: String, head: HTTPRequestHead) -> HTTPResponse {
        if let h = current { return h.refusal(status: status, reason: reason, head: head) }
        return refusal(status: status, reason: reason)
    }
}
