import CKCore
import Foundation

/// CloudKit Web Services over HTTP: each request routed (WebServicesRoute), authenticated by
/// the API (`authenticate`: an API token or a server-to-server signature, and a web session),
/// answered by one API call (EndpointCall), and its body or error sent as Apple's servers send
/// them — JSON on every status, the error envelope with the status of reference §4.2, a
/// `Retry-After` header beside `retryAfter`, a rotated web auth token in
/// `X-Apple-CloudKit-Web-Auth-Token`, CORS for the allowed origins. It decides nothing
/// CloudKit decides: that is the API's.
public final class WebServicesHandler: HTTPHandler, @unchecked Sendable {
    let api: CloudKitAPI
    let origins: AllowedOrigins
    /// The names a request's `Host` may give: this server's, so a page on another site that
    /// resolves its name to 127.0.0.1 (DNS rebinding) is refused.
    let hostNames: Set<String>
    /// How long a web client's long-poll waits for a notification.
    let pollSeconds: Double
    let log: (String) -> Void
    private let stopping = NSCondition()
    private var stopped = false
    /// Web clients with a push on its way (guarded by `stopping`).
    private var delivering = Set<String>()

    public init(api: CloudKitAPI, allowedOrigins: [String], hostNames: Set<String>, pollSeconds: Double = 30,
                log: @escaping (String) -> Void) {
        self.api = api
        self.origins = AllowedOrigins(allowedOrigins)
        self.hostNames = hostNames
        self.pollSeconds = pollSeconds
        self.log = log
    }

    /// Ends waiting long-polls (the server is stopping): they answer at once.
    public func stop() {
        stopping.lock()
        stopped = true
        stopping.broadcast()
        stopping.unlock()
    }

    // MARK: HTTPHandler

    public func admit(_ head: HTTPRequestHead) -> HTTPAdmission {
        if var refused = refuseHost(head) {
            origins.decorate(&refused, head)
            return .answer(refused)
        }
        if head.method == "OPTIONS" { return .answer(origins.preflight(head)) }
        let route: WebServicesRoute
        do { route = try WebServicesRoute.parse(head.path) } catch {
            // Refusals carry CORS too: a browser page then reads the envelope, not a network error.
            var r = errorResponse(error, head)
            origins.decorate(&r, head)
            return .answer(r)
        }
        switch route {
        case .upload(let token):
            // The URL is the credential: a forged or stale one is refused before 50 MB are read.
            do { try api.checkUploadURL(token) } catch {
                var r = errorResponse(error, head)
                origins.decorate(&r, head)
                return .answer(r)
            }
            return .readBody(maxBytes: Int(Limits.assetBytes))
        case .signIn: return .readBody(maxBytes: 64 * 1024)
        default: return .readBody(maxBytes: Self.requestBodyLimit)
        }
    }

    /// CloudKit's request limit (reference §6: 2 MB a request, assets aside).
    static let requestBodyLimit = Limits.requestBytes

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let head = request.head
        var response: HTTPResponse
        do {
            switch try WebServicesRoute.parse(head.path) {
            case .database(let c, let e, let scope, let endpoint):
                response = try webServices(request, container: c, environment: e, scope: scope, endpoint: endpoint)
            case .device(let c, let e, let endpoint):
                response = try webServices(request, container: c, environment: e, scope: nil, endpoint: endpoint)
            case .upload(let token):
                try require(head, ["POST", "PUT"])
                response = json(200, try api.receiveAsset(uploadToken: token, bytes: request.body))
            case .asset(let path):
                try require(head, ["GET", "HEAD"])
                var h = HTTPHeaders([("Content-Type", "application/octet-stream")])
                h.add("Cache-Control", "private, max-age=3600")
                response = HTTPResponse(status: 200, headers: h, body: try api.servedAsset(path))
            case .webCourier(let c, let e, let token):
                try require(head, ["GET", "POST"])
                response = try poll(container: c, environment: e, apnsToken: token)
            case .signIn(let c, let e):
                try require(head, ["GET", "POST"])
                response = try SignInPage(api: api, container: c, environment: e).respond(to: request)
            }
        } catch {
            response = errorResponse(error, head)
        }
        origins.decorate(&response, head)
        return response
    }

    public func refusal(status: Int, reason: String) -> HTTPResponse {
        let code: ServerErrorCode
        switch status {
        case 413: code = .limitExceeded
        case 503: code = .serviceUnavailable
        case 500...: code = .internalError
        default: code = .badRequest
        }
        var e = CloudKitError(code, reason)
        if status == 503 { e.retryAfter = 1 }
        return errorResponse(e, status: status)
    }

    public func refusal(status: Int, reason: String, head: HTTPRequestHead) -> HTTPResponse {
        var r = refusal(status: status, reason: reason)
        origins.decorate(&r, head)
        return r
    }

    public func log(_ head: HTTPRequestHead?, status: Int, milliseconds: Double) {
        let tenths = Int((milliseconds * 10).rounded())
        let line = (head.map { "\($0.method) \(Self.loggedPath($0.path))" } ?? "- -") + " \(status) \(tenths / 10).\(tenths % 10)ms"
        log(line)
    }

    /// The path as the log shows it: without the query (API and web auth tokens) and without
    /// the tokens that are path segments (upload URLs, long-polls).
    static func loggedPath(_ path: String) -> String {
        // Web Services paths hold no secret: the commonest case, shown as it is.
        if path.hasPrefix("/database/") || path.hasPrefix("/device/") { return path.utf8.count <= 300 ? path : String(path.prefix(300)) }
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts.count == 3, parts[1] == "upload" { parts[2] = "…" }
        if parts.count == 5, parts[1] == "webcourier" { parts[4] = "…" }
        // An asset URL's hash is what lets one read it.
        if parts.count == 4, parts[1] == "assets" { parts[3] = "…" }
        return String(parts.joined(separator: "/").prefix(300))
    }

    // MARK: Web Services

    private func webServices(_ request: HTTPRequest, container: String, environment: Environment, scope: DatabaseScope?,
                             endpoint: Endpoint) throws -> HTTPResponse {
        let head = request.head
        guard EndpointCall.allows(head.method, endpoint) else {
            throw CloudKitError.badRequest("\(endpoint.path) is sent as \(endpoint.isGET ? "GET (or POST)" : "POST"), not \(Names.describe(head.method))")
        }
        let query = QueryString(head.query ?? "")
        let signature = Self.signature(head, body: request.body)
        let auth = try api.authenticate(WebCredentials(container: container, environment: environment, scope: scope,
                                                       apiToken: query["ckAPIToken"], webAuthToken: query["ckWebAuthToken"],
                                                       signature: signature))
        var caller = Caller(container: container, environment: environment, scope: scope ?? .private, user: auth.user,
                            deviceID: Self.deviceID(query["clientId"]))
        caller.isWebClient = true
        caller.account = auth.account
        let body: JSONValue
        if head.method == "POST", !endpoint.isGET || endpoint == .usersDiscover {
            guard !request.body.isEmpty else { throw CloudKitError.badRequest("\(endpoint.path) needs a JSON body") }
            do { body = try JSONParser.parse(request.body) } catch {
                throw CloudKitError.badRequest("the request body is not JSON: \(error)")
            }
        } else {
            body = .null
        }
        var response = json(200, try EndpointCall.answer(endpoint, body: body, api: api, caller: caller))
        // Only a success carries a new token: CloudKit JS reads none from an error.
        if let t = try? api.rotateWebAuthToken(auth) { response.headers.set("X-Apple-CloudKit-Web-Auth-Token", t) }
        return response
    }

    /// The device a web client's writes are recorded as coming from: its `clientId` (one per
    /// CloudKit JS `configure()`), so a feed fetched from scratch shows it its own deletions.
    static func deviceID(_ clientID: String?) -> String {
        guard let id = clientID, (1...64).contains(id.utf8.count),
              id.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 45 }) else { return Caller.unnamedWebClient }
        return "web-" + id
    }

    static func signature(_ head: HTTPRequestHead, body: [UInt8]) -> ServerSignature? {
        let keyID = head.headers["X-Apple-CloudKit-Request-KeyID"]
        let date = head.headers["X-Apple-CloudKit-Request-ISO8601Date"]
        let sig = head.headers["X-Apple-CloudKit-Request-SignatureV1"]
        guard keyID != nil || date != nil || sig != nil else { return nil }
        return ServerSignature(keyID: keyID ?? "", iso8601Date: date ?? "", signatureV1: sig ?? "", body: body, target: head.target)
    }

    // MARK: long-poll

    /// A web client's long-poll: the next notification as soon as there is one, else `null`
    /// after `pollSeconds` (CloudKit JS ignores a null answer and polls again). The notification
    /// is marked delivered only once the answer is written.
    private func poll(container: String, environment: Environment, apnsToken: String) throws -> HTTPResponse {
        let deadline = Date().addingTimeInterval(pollSeconds)
        let key = container + "/" + environment.rawValue + "/" + apnsToken
        while true {
            // One answer in flight per client: its next poll waits until the last one is
            // acknowledged, so it never gets the same notification twice.
            stopping.lock()
            while delivering.contains(key), !stopped, Date() < deadline { _ = stopping.wait(until: deadline) }
            let mine = !stopped && delivering.insert(key).inserted
            stopping.unlock()
            guard mine else { return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: Array("null".utf8)) }
            let push: WebPush?
            do { push = try api.nextWebPush(container: container, environment: environment, apnsToken: apnsToken) } catch {
                finishDelivery(key)
                throw error
            }
            if let push {
                var r = json(200, push.body)
                let api = self.api
                r.onSent = { [weak self] sent in
                    if sent { try? api.acknowledgeWebPush(push, container: container, environment: environment) }
                    self?.finishDelivery(key)
                }
                return r
            }
            finishDelivery(key)
            stopping.lock()
            defer { stopping.unlock() }
            if stopped || Date() >= deadline { return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: Array("null".utf8)) }
            // A quarter second between looks: a write from the CLI (another process) has no
            // way to wake this one.
            _ = stopping.wait(until: min(deadline, Date().addingTimeInterval(0.25)))
        }
    }

    private func finishDelivery(_ key: String) {
        stopping.lock()
        delivering.remove(key)
        stopping.broadcast()
        stopping.unlock()
    }

    // MARK: answers

    static var jsonHeaders: HTTPHeaders { HTTPHeaders([("Content-Type", "application/json; charset=utf-8")]) }

    func json(_ status: Int, _ body: any ResponseBody) -> HTTPResponse {
        var out: [UInt8] = []
        body.encodeJSON(into: &out, pretty: false)
        return HTTPResponse(status: status, headers: Self.jsonHeaders, body: Self.withoutNativeCodes(out))
    }

    /// The body without the `ckErrorCode` the CLI adds to error dictionaries (the native
    /// CKError code, for the reader of a command's output). Apple's servers send none, and
    /// CloudKit JS takes a `ckErrorCode` it finds in an error over the one it derives from
    /// `serverErrorCode`: CONFLICT would reach the page as 14. Bodies without an error are
    /// sent as encoded (one byte search).
    static func withoutNativeCodes(_ body: [UInt8]) -> [UInt8] {
        let key = Array("\"ckErrorCode\":".utf8)
        guard contains(body, key), let tree = try? JSONParser.parse(body) else { return body }
        func strip(_ v: JSONValue) -> JSONValue {
            if var o = v.objectValue {
                if o["serverErrorCode"]?.stringValue != nil { o["ckErrorCode"] = nil }
                return .object(o.mapValues(strip))
            }
            if let a = v.arrayValue { return .array(a.map(strip)) }
            return v
        }
        return Array(JSONWriter.compact(strip(tree)).utf8)
    }

    private static func contains(_ hay: [UInt8], _ needle: [UInt8]) -> Bool {
        guard hay.count >= needle.count else { return false }
        return (0...(hay.count - needle.count)).contains { i in hay[i] == needle[0] && hay[i..<(i + needle.count)].elementsEqual(needle) }
    }

    private func require(_ head: HTTPRequestHead, _ methods: [String]) throws {
        guard methods.contains(head.method) || (head.method == "HEAD" && methods.contains("GET")) else {
            throw CloudKitError.badRequest("this URL takes \(methods.joined(separator: " or ")), not \(Names.describe(head.method))")
        }
    }

    private func refuseHost(_ head: HTTPRequestHead) -> HTTPResponse? {
        guard let host = head.headers["Host"] else { return nil }
        let name = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }.dropFirst())
            : String(Substring(host.utf8.prefix { $0 != UInt8(ascii: ":") }))
        guard hostNames.contains(name.lowercased()) else {
            return errorResponse(CloudKitError.badRequest("Host '\(Names.describe(String(host.prefix(100))))' is not this server (ck serve answers only its own names, so a page on another site cannot reach it through DNS)"), status: 400)
        }
        return nil
    }

    /// A failure as Apple's servers answer it: the envelope `{uuid, serverErrorCode, reason,
    /// retryAfter?, redirectURL?}` with the code's status; `Retry-After` beside `retryAfter`.
    func errorResponse(_ error: Error, _ head: HTTPRequestHead? = nil, status: Int? = nil) -> HTTPResponse {
        let e = (error as? CloudKitError) ?? CloudKitError.internalError("\(error)")
        if e.code == .networkFailure { return HTTPResponse(status: 0, dropConnection: true) }
        var envelope = e.envelope().objectValue ?? [:]
        envelope["ckErrorCode"] = nil
        if e.code == .authenticationRequired, let head, let (c, env) = (try? WebServicesRoute.parse(head.path))?.containerAndEnvironment {
            envelope["redirectURL"] = .string(SignInPage.url(api: api, container: c, environment: env))
        }
        var r = HTTPResponse(status: status ?? e.code.httpStatus ?? 500, headers: Self.jsonHeaders, body: Array(JSONWriter.compact(.object(envelope)).utf8))
        if let s = e.retryAfter { r.headers.set("Retry-After", String(s)) }
        return r
    }
}
