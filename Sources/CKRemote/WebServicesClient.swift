import CKCore
import CKCrypto
import CKHTTP
import CKJSON
import CKModel
import Foundation

/// A session with one remote: CloudKit Web Services over HTTP, one request at a time, with the
/// credentials CloudKit accepts, pacing, and CloudKit's errors as `CloudKitError`s that name
/// the remote. It holds the only copy of a rotated web auth token and stores each new one
/// before the next request goes (CloudKit answers every request with the token to use next).
public final class WebServicesClient {
    public let remote: RemoteEntry
    public private(set) var credentials: Credentials
    /// Where a rotated web auth token is stored (nil: a token from the environment, kept in memory).
    let store: CredentialStore?
    let http: HTTPClient
    let pacer: Pacer
    /// Where notices go ("throttled; retrying in N s"): stderr, in the CLI.
    let notice: (String) -> Void
    let clientID = UUID().uuidString.lowercased()
    private var key: P256PrivateKey?

    public init(remote: RemoteEntry, credentials: Credentials, store: CredentialStore?, http: HTTPClient,
                pacing: PacingPolicy, notice: @escaping (String) -> Void = { _ in }) {
        self.remote = remote
        self.credentials = credentials
        self.store = store
        self.http = http
        self.pacer = Pacer(pacing)
        self.notice = notice
    }

    /// For tests: the sleeping and the clock of the pacing.
    init(remote: RemoteEntry, credentials: Credentials, store: CredentialStore?, http: HTTPClient, pacer: Pacer, notice: @escaping (String) -> Void) {
        self.remote = remote
        self.credentials = credentials
        self.store = store
        self.http = http
        self.pacer = pacer
        self.notice = notice
    }

    public var waited: Double { pacer.waited }
    /// Bytes of answers received so far (progress).
    public private(set) var bytesReceived = 0
    /// The `reason` of the last error answer, as the server wrote it.
    public private(set) var lastServerReason: String?

    private var callerName: String??

    /// Who the credentials sign in as on the remote (`users/caller`), asked once per session;
    /// nil when they name nobody (a server-to-server key).
    public func callerRecordName() throws -> String? {
        if let known = callerName { return known }
        let me = try call(.public, "users/caller")["userRecordName"]?.stringValue
        callerName = .some(me)
        return me
    }

    /// A write whose request may have reached the server before the failure: whether it was
    /// applied is not known.
    func unknownOutcome(_ e: CloudKitError) -> CloudKitError {
        var e = e
        e.reason += "; the request may have been applied: run 'ck pull', then 'ck push' again"
        return e
    }

    /// The sign-in address the last 421 AUTHENTICATION_REQUIRED gave.
    public private(set) var redirectURL: String?

    public func close() {
        http.close()
        for c in others.values { c.close() }
    }

    enum Auth { case webSession, apiTokenOnly, serverKey }

    /// Which credential a request in `scope` goes with: a signed-in user's session reaches every
    /// database; a server-to-server key the public one only; an API token alone what the
    /// public database grants the world.
    func auth(for scope: DatabaseScope, operation: String) throws -> Auth {
        let haveKey = credentials.keyID != nil && credentials.privateKeyPath != nil
        if scope == .public, haveKey, credentials.webAuthToken == nil || !operation.hasPrefix("users/") && credentials.apiToken == nil { return .serverKey }
        if credentials.apiToken != nil, credentials.webAuthToken != nil { return .webSession }
        if scope == .public, credentials.apiToken != nil { return .apiTokenOnly }
        if haveKey {
            throw CloudKitError(.authenticationRequired, "remote '\(remote.name)': a server-to-server key reaches the public database only; the \(scope.rawValue) database needs a signed-in user: ck remote login \(remote.name) --api-token TOKEN")
        }
        if credentials.apiToken != nil {
            throw CloudKitError(.authenticationRequired, "remote '\(remote.name)': not signed in: ck remote login \(remote.name)")
        }
        throw CloudKitError(.authenticationRequired, "remote '\(remote.name)' has no credentials: ck remote login \(remote.name) --api-token TOKEN (a user), or ck remote key set \(remote.name) --key-id ID --private-key FILE (the public database)")
    }

    /// A Web Services call: `POST` with a JSON body, `GET` without one. Answers the body of a
    /// 2xx; throws the CloudKit error of anything else, after the waits pacing allows.
    public func call(_ scope: DatabaseScope, _ operation: String, body: JSONValue? = nil, zone: String? = nil) throws -> JSONValue {
        let path = remote.url.path(scope, operation)
        // A write that may have reached the server is not sent again on a failure that does
        // not say it was refused (a dropped connection, a 5xx): it may have been applied.
        let idempotent = !["records/modify", "zones/modify", "assets/upload", "subscriptions/modify"].contains(operation)
        let bytes = body.map { Array(JSONWriter.compact($0).utf8) }
        var attempt = 0
        while true {
            pacer.beforeRequest()
            let response: HTTPClientResponse
            do {
                response = try http.send(try request(scope, operation, path: path, body: bytes))
            } catch let e as HTTPClientError {
                let failure = CloudKitError(.networkFailure, "remote '\(remote.name)': \(e.message)")
                if e.kind == .transport, e.message.contains("certificate") { throw failure }
                if idempotent, attempt < pacer.policy.retries, pacer.wait(Pacer.backoff(attempt)) { attempt += 1; continue }
                throw idempotent ? failure : unknownOutcome(failure)
            }
            bytesReceived += response.body.count
            // The HTTPS helper's own answer: the request never reached the server.
            if let kind = response.header("X-CK-Transport-Error") {
                let why = String(decoding: response.body.prefix(500), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                let failure = CloudKitError(.networkFailure, "remote '\(remote.name)': \(why.isEmpty ? kind : why)")
                // A certificate or TLS refusal is not cured by waiting.
                if kind == "certificate" || kind == "tls" || kind == "other" { throw failure }
                if idempotent || kind == "dns" || kind == "connect", attempt < pacer.policy.retries, pacer.wait(Pacer.backoff(attempt)) { attempt += 1; continue }
                throw idempotent ? failure : unknownOutcome(failure)
            }
            let json = try? JSONParser.parse(response.body)
            if (200..<300).contains(response.status) {
                adoptRotatedToken(response)
                guard let json else { throw CloudKitError(.internalError, "remote '\(remote.name)' answered \(operation) with a body that is not JSON") }
                return json
            }
            var error = remoteError(response, json: json, operation: operation, zone: zone)
            lastServerReason = json?["reason"]?.stringValue
            let refused = error.code == .throttled || response.status == 429 || response.status == 503 || error.code == .tryAgainLater
            if !idempotent, !refused, (500..<600).contains(response.status) { throw unknownOutcome(error) }
            if let delay = retryDelay(response, error, raw: json?["serverErrorCode"]?.stringValue, attempt: attempt) {
                let shown = delay < 10 ? String(format: "%.1f", delay) : String(Int(delay.rounded()))
                guard pacer.wait(delay) else {
                    error.reason += " (gave up after waiting \(Int(pacer.waited)) s of --max-wait \(Int(pacer.policy.maxWait)) s; what was fetched is saved: run the command again to go on)"
                    throw RemoteGaveUp(error: error, waited: pacer.waited)
                }
                notice("\(error.code == .throttled ? "throttled" : error.code.rawValue); retrying in \(shown) s")
                attempt += 1
                continue
            }
            throw error
        }
    }

    /// How long to wait before a failed request is sent again; nil: it is not retried.
    func retryDelay(_ response: HTTPClientResponse, _ e: CloudKitError, raw: String?, attempt: Int) -> Double? {
        // A wait the server asks for is honoured, but never below the backoff (a 0 would spin)
        // nor past a bounded number of attempts; what is not a finite, non-negative number of
        // seconds is no wait.
        func asked(_ s: Double?) -> Double? {
            guard let s, s.isFinite, s >= 0, attempt < pacer.policy.retries * 4 else { return nil }
            return max(s, Pacer.backoff(attempt, jitter: 0))
        }
        let header = response.header("Retry-After").flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        if e.code == .throttled || response.status == 429 {
            if let s = asked(e.retryAfter.map(Double.init) ?? header) { return s }
            return attempt < pacer.policy.retries ? Pacer.backoff(attempt) : nil
        }
        if response.status == 503 || e.code == .tryAgainLater || e.code == .serviceUnavailable {
            if let s = asked(header ?? e.retryAfter.map(Double.init)) { return s }
        }
        if (500..<600).contains(response.status) || raw == "ZONE_BUSY" {
            return attempt < pacer.policy.retries ? Pacer.backoff(attempt) : nil
        }
        return nil
    }

    func request(_ scope: DatabaseScope, _ operation: String, path: String, body: [UInt8]?) throws -> HTTPClientRequest {
        var headers: [(name: String, value: String)] = [("Content-Type", "text/plain")]
        var query = ""
        switch try auth(for: scope, operation: operation) {
        case .webSession:
            query = "?ckAPIToken=" + Self.queryEncoded(credentials.apiToken!) + "&ckWebAuthToken=" + Self.queryEncoded(credentials.webAuthToken!)
        case .apiTokenOnly:
            query = "?ckAPIToken=" + Self.queryEncoded(credentials.apiToken!)
        case .serverKey:
            // Signed over date, body hash and the path with no query (Apple's example has none).
            let key = try signingKey()
            let date = Self.iso8601(Date())
            let hash = Data(SHA256.digest(body ?? [])).base64EncodedString()
            let signature = key.signature(for: Array((date + ":" + hash + ":" + path).utf8))
            headers += [("X-Apple-CloudKit-Request-KeyID", credentials.keyID!), ("X-Apple-CloudKit-Request-ISO8601Date", date),
                        ("X-Apple-CloudKit-Request-SignatureV1", Data(signature.der).base64EncodedString())]
        }
        let target = (remote.url.scheme == "https" ? remote.url.origin : "") + path + query
        return HTTPClientRequest(method: body == nil ? "GET" : "POST", target: target, headers: headers, body: body ?? [])
    }

    func signingKey() throws -> P256PrivateKey {
        if let k = key { return k }
        let path = credentials.privateKeyPath!
        guard let data = FileManager.default.contents(atPath: path), let pem = String(data: data, encoding: .utf8) else {
            throw CloudKitError(.authenticationFailed, "remote '\(remote.name)': cannot read the private key \(path)")
        }
        do { key = try P256PrivateKey(pem: pem) } catch let e as P256Error {
            throw CloudKitError(.authenticationFailed, "remote '\(remote.name)': \(path): \(e.message)")
        }
        return key!
    }

    /// Every 2xx carries the web auth token to use next; it is stored before the next request.
    func adoptRotatedToken(_ r: HTTPClientResponse) {
        guard credentials.webAuthToken != nil,
              let t = r.header("X-Apple-CloudKit-Web-Auth-Token") ?? r.header("X-Apple-CloudKit-Session"), !t.isEmpty, t != credentials.webAuthToken else { return }
        credentials.webAuthToken = t
        do { try store?.update(remote.url) { $0.webAuthToken = t } } catch {
            // The session goes on with the token in memory; the next command may need a login.
            notice("could not store the rotated web auth token (\(error)); this command goes on with it")
        }
    }

    /// The CloudKit error an answer carries, naming the remote (and the zone); AUTHENTICATION
    /// errors say what to do.
    func remoteError(_ r: HTTPClientResponse, json: JSONValue?, operation: String, zone: String?) -> CloudKitError {
        let code = json?["serverErrorCode"]?.stringValue.flatMap(ServerErrorCode.init(rawValue:))
            ?? (r.status == 421 ? .authenticationRequired : r.status == 401 ? .authenticationFailed : r.status == 403 ? .accessDenied
                : r.status == 404 ? .notFound : r.status == 429 ? .throttled : r.status == 503 ? .serviceUnavailable : r.status >= 500 ? .internalError : .badRequest)
        if code == .authenticationRequired { redirectURL = json?["redirectURL"]?.stringValue ?? json?["redirectUrl"]?.stringValue }
        let reason = json?["reason"]?.stringValue ?? "HTTP \(r.status) \(r.reason)"
        let at = "remote '\(remote.name)'" + (zone.map { " zone '\($0)'" } ?? "") + ", \(operation)"
        var e = CloudKitError(code, "\(at): \(reason)")
        if let ra = json?["retryAfter"]?.int64Value { e.retryAfter = Int(ra) }
        if let z = json?["zoneID"]?["zoneName"]?.stringValue { e.zoneID = ZoneID(zoneName: z, ownerRecordName: json?["zoneID"]?["ownerRecordName"]?.stringValue ?? ZoneID.defaultOwner) }
        switch code {
        case .authenticationRequired:
            e.reason += credentials.webAuthToken != nil
                ? "; the session ended (signed out, or expired): ck remote login \(remote.name)"
                : "; sign in: ck remote login \(remote.name)"
        case .authenticationFailed:
            if credentials.keyID != nil, let skew = clockSkew(r) { e.reason += "; " + skew }
            e.reason += "; check the credentials: ck remote show \(remote.name)"
        default: break
        }
        return e
    }

    /// How far this machine's clock is from the server's (`Date`), for a signature refused:
    /// a signed request carries its time, and a server refuses one too far from its own.
    func clockSkew(_ r: HTTPClientResponse) -> String? {
        guard let d = r.header("Date") else { return "the server sent no Date to compare clocks with" }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let server = f.date(from: d) else { return nil }
        let diff = Date().timeIntervalSince(server)
        if abs(diff) < 2 { return "this machine's clock agrees with the server's (within 2 s)" }
        return String(format: "this machine's clock is %.0f s %@ the server's", abs(diff), diff > 0 ? "ahead of" : "behind")
    }

    /// `2026-11-25T13:03:49Z`: ISO 8601 without fractions, as CloudKit's signatures take it.
    static func iso8601(_ d: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        return f.string(from: d)
    }

    /// A query value as Web Services takes it: `+`, `/` and `=` of a token escaped, as every
    /// character outside the unreserved set.
    static func queryEncoded(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E: out.append(Character(UnicodeScalar(b)))
            default: out += String(format: "%%%02X", b)
            }
        }
        return out
    }

    /// GET of an absolute URL the remote handed out (an asset's downloadURL): its bytes.
    public func download(_ url: String, limit: Int) throws -> [UInt8] {
        let r = try sendAbsolute("GET", url, body: nil)
        guard r.status == 200 else { throw CloudKitError(.networkFailure, "remote '\(remote.name)': an asset download answered HTTP \(r.status)") }
        guard r.body.count <= limit else { throw CloudKitError(.limitExceeded, "remote '\(remote.name)': an asset is larger than \(limit) bytes") }
        return r.body
    }

    /// POST of bytes to an upload URL `assets/upload` handed out: the answer's JSON.
    public func upload(_ url: String, bytes: [UInt8]) throws -> JSONValue {
        let r = try sendAbsolute("POST", url, body: bytes)
        guard (200..<300).contains(r.status), let j = try? JSONParser.parse(r.body) else {
            throw CloudKitError(.networkFailure, "remote '\(remote.name)': an asset upload answered HTTP \(r.status)")
        }
        return j
    }

    /// Other hosts' connections (an asset host): kept apart from the API's, as Apple's asset
    /// hosts refuse requests on a connection shared with the API host.
    private var others: [String: HTTPClient] = [:]

    func sendAbsolute(_ method: String, _ url: String, body: [UInt8]?) throws -> HTTPClientResponse {
        pacer.beforeRequest()
        let request = { (target: String) in
            HTTPClientRequest(method: method, target: target, headers: body == nil ? [] : [("Content-Type", "application/octet-stream")], body: body ?? [])
        }
        let origin = remote.url.origin
        if remote.url.scheme == "http", url.hasPrefix(origin + "/") { return try http.send(request(String(url.dropFirst(origin.count)))) }
        if url.hasPrefix("https://") { return try http.send(request(url)) }
        guard url.hasPrefix("http://"), let other = try? RemoteURL.authority(url) else {
            throw CloudKitError(.badRequest, "remote '\(remote.name)' handed out an address that is neither http:// nor https:// (not shown: it may carry a token)")
        }
        let client = others[other.origin] ?? RemoteConnection.plainClient(host: other.host, port: other.port)
        others[other.origin] = client
        return try client.send(request(String(url.dropFirst(other.origin.count))))
    }
}
