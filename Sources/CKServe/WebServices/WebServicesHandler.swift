import CKCore
import CKHTTP
import CKJSON
import CKModel
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
    /// The long-polls waiting, and their caps.
    let polls: LongPolls
    /// The console's paths and their gate; nil for a handler made without a secret (tests of
    /// Web Services alone), which answers `/console` NOT_FOUND.
    let console: ConsoleRoutes?

    public init(api: CloudKitAPI, allowedOrigins: [String], hostNames: Set<String>, pollSeconds: Double = 30,
                maxWaitingPolls: Int = 128, consoleSecret: ConsoleSecret? = nil, log: @escaping (String) -> Void) {
        self.api = api
        // The server's own pages (the sign-in form) are not cross-origin, whatever the list says.
        self.origins = AllowedOrigins(allowedOrigins, serverURL: api.serverURL)
        self.hostNames = hostNames
        self.pollSeconds = pollSeconds
        self.polls = LongPolls(LongPolls.Limits(total: maxWaitingPolls))
        self.log = log
        let port = api.serverURL.flatMap { $0.split(separator: ":").last.flatMap { UInt16($0) } } ?? 0
        self.console = consoleSecret.map { ConsoleRoutes(gate: ConsoleGate(secret: $0, hostNames: hostNames, port: port)) }
    }

    /// Ends waiting long-polls (the server is stopping): they answer at once.
    public func stop() { polls.stop() }

    // MARK: HTTPHandler

    public func admit(_ head: HTTPRequestHead) -> HTTPAdmission {
        let toConsole = Self.isConsolePath(head.path)
        if var refused = refuseHost(head) {
            // The console never answers another origin's page, not even with an error it can read.
            if toConsole { ConsoleGate.secure(&refused) } else { origins.decorate(&refused, head) }
            return .answer(refused)
        }
        if head.method == "OPTIONS" {
            // No preflight lets another origin's page call the console.
            if toConsole {
                var r = HTTPResponse(status: 403)
                ConsoleGate.secure(&r)
                return .answer(r)
            }
            return .answer(origins.preflight(head))
        }
        let route: WebServicesRoute
        do { route = try WebServicesRoute.parse(head.path) } catch { return refuse(error, head, route: nil) }
        let query = QueryString(head.query ?? "")
        // What is resolved here travels with the request to `respond`, not resolved again.
        func read(_ maxBytes: Int, checked: HeadAuthentication? = nil) -> HTTPAdmission {
            .readBody(maxBytes: maxBytes, context: AdmittedRequest(route: route, query: query, checked: checked))
        }
        switch route {
        case .upload(let token):
            // The URL is the credential: a forged, stale or used one is refused before 50 MB
            // are read, and the bytes go to disk as they come.
            do {
                try require(head, ["POST", "PUT"])
                return .streamBody(maxBytes: Int(Limits.assetBytes), sink: UploadSink(try api.beginAssetUpload(uploadToken: token)),
                                   context: AdmittedRequest(route: route, query: query, checked: nil))
            } catch { return refuse(error, head, route: route) }
        case .signIn: return read(Self.smallBodyLimit)
        case .database(let c, let e, let scope, let endpoint):
            do { return read(Self.requestBodyLimit, checked: try authenticateHead(head, query, container: c, environment: e, scope: scope, endpoint: endpoint)) }
            catch { return refuse(error, head, route: route) }
        case .device(let c, let e, let endpoint):
            do { return read(Self.requestBodyLimit, checked: try authenticateHead(head, query, container: c, environment: e, scope: nil, endpoint: endpoint)) }
            catch { return refuse(error, head, route: route) }
        case .webCourier, .asset, .configScript:
            // No credential in the head, and no use for a body: an anonymous client may not
            // make the server hold megabytes of one.
            return read(Self.smallBodyLimit)
        case .console(let rest):
            guard let console else { return refuse(CloudKitError(.notFound, "this server has no console: ck serves it on a loopback address only (--host 127.0.0.1, ::1 or localhost)"), head, route: route) }
            // The gate before the body: a call without the key is not read a byte of.
            let kind = ConsoleRoutes.kind(rest)
            if let refusal = console.gate.check(head, kind) { return .answer(console.refusal(refusal, head, handler: self)) }
            return read(kind == .call ? Self.requestBodyLimit : Self.smallBodyLimit)
        }
    }

    /// Whether a path is the console's (`/console`, `/console/…`).
    static func isConsolePath(_ path: String) -> Bool { path == "/console" || path.hasPrefix("/console/") }

    /// A refusal before the body: with CORS too, so a browser page reads the envelope, not a
    /// network error.
    private func refuse(_ error: Error, _ head: HTTPRequestHead, route: WebServicesRoute?) -> HTTPAdmission {
        var r = errorResponse(error, head, route: route)
        origins.decorate(&r, head)
        return .answer(r)
    }

    /// A request that brings a body is refused before it is read when what its head carries
    /// already fails (no API token and no signature, an unknown token or key, a date out of
    /// skew): an anonymous client cannot make the server read megabytes. What passed is not
    /// checked again; the signature itself, which covers the body, is checked after. A request
    /// without a body is authenticated once, after (nil).
    private func authenticateHead(_ head: HTTPRequestHead, _ query: QueryString, container: String, environment: Environment,
                                  scope: DatabaseScope?, endpoint: Endpoint) throws -> HeadAuthentication? {
        let length = head.headers["Content-Length"]
        guard (length != nil && length != "0") || head.headers["Transfer-Encoding"] != nil else { return nil }
        return try api.authenticateBeforeBody(WebCredentials(container: container, environment: environment, scope: scope, apiToken: query["ckAPIToken"],
                                                             signature: Self.signature(head, body: []), endpoint: endpoint))
    }

    /// CloudKit's request limit (reference §6: 2 MB a request, assets aside).
    static let requestBodyLimit = Limits.requestBytes
    /// What a request that needs no credential may bring: the sign-in page's form, and the
    /// body a long-poll, a downloadURL or the config script does not read.
    static let smallBodyLimit = 64 * 1024

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let started = DispatchTime.now().uptimeNanoseconds
        let response = answer(request)
        if let console, let admitted = request.context as? AdmittedRequest,
           let caller = Self.consoleLogCaller(admitted.route, request.head, admitted.query) {
            let route = admitted.route
            let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
            var opaque = false
            switch route {
            case .upload, .asset, .signIn, .configScript: opaque = true
            default: break
            }
            console.requests.add(request.head, path: Self.loggedPath(request.head.path), caller: caller, request: request.body, response: response,
                                 milliseconds: ms, binaryBodies: opaque)
        }
        return response
    }

    /// Who the console's request log says a request came from, by the credential it carried
    /// (never the credential itself); nil for the console's own page and API, which it does
    /// not log.
    static func consoleLogCaller(_ route: WebServicesRoute, _ head: HTTPRequestHead, _ query: QueryString) -> String? {
        switch route {
        case .console(let rest):
            guard rest.hasPrefix("/ws/") else { return nil }
            return "console" + (query["as"].map { $0.isEmpty ? "" : " as " + $0 } ?? "")
        case .database, .device:
            if head.headers["X-Apple-CloudKit-Request-SignatureV1"] != nil { return "server-to-server key" }
            return query["ckWebAuthToken"] != nil ? "API token, web session" : "API token"
        case .webCourier: return "web client (long-poll)"
        case .upload, .asset: return "capability URL"
        case .signIn, .configScript: return "page"
        }
    }

    private func answer(_ request: HTTPRequest) -> HTTPResponse {
        let head = request.head
        var response: HTTPResponse
        // The engine hands back what `admit` gave it; it calls `respond` for no other request.
        guard let admitted = request.context as? AdmittedRequest else {
            response = errorResponse(CloudKitError.internalError("a request reached respond without what admit resolved of it"), head)
            origins.decorate(&response, head)
            return response
        }
        do {
            switch admitted.route {
            case .database(let c, let e, let scope, let endpoint):
                response = try webServices(request, admitted.query, container: c, environment: e, scope: scope, endpoint: endpoint, checked: admitted.checked)
            case .device(let c, let e, let endpoint):
                response = try webServices(request, admitted.query, container: c, environment: e, scope: nil, endpoint: endpoint, checked: admitted.checked)
            case .upload:
                guard let sink = request.bodySink as? UploadSink else { throw CloudKitError.internalError("the upload's body went nowhere") }
                response = json(200, try sink.finish())
            case .asset(let path):
                try require(head, ["GET", "HEAD"])
                let served = try api.servedAsset(path, query: head.query)
                var h = HTTPHeaders([("Content-Type", "application/octet-stream")])
                h.add("Cache-Control", "private, max-age=\(served.maxAgeSeconds)")
                // Bytes anyone may have stored: never run as a page of this origin, where the
                // console keeps its key.
                h.add("X-Content-Type-Options", "nosniff")
                h.add("Content-Security-Policy", "sandbox; default-src 'none'")
                response = HTTPResponse(status: 200, headers: h, body: served.bytes)
            case .webCourier(let c, let e, let token):
                try require(head, ["GET", "POST"])
                response = try poll(container: c, environment: e, apnsToken: token, wait: request.clientWait)
            case .signIn(let c, let e):
                try require(head, ["GET", "POST"])
                response = try SignInPage(api: api, container: c, environment: e, origins: origins).respond(to: request)
            case .configScript:
                try require(head, ["GET"])
                var h = HTTPHeaders([("Content-Type", "text/javascript; charset=utf-8")])
                h.add("Cache-Control", "no-cache")
                response = HTTPResponse(status: 200, headers: h, body: Array(CloudKitConfigScript.source(serverURL: api.serverURL ?? "").utf8))
            case .console(let rest):
                guard let console else { throw CloudKitError(.notFound, "this server has no console: ck serves it on a loopback address only (--host 127.0.0.1, ::1 or localhost)") }
                response = try console.respond(request, rest: rest, handler: self)
            }
        } catch {
            response = errorResponse(error, head, route: admitted.route)
        }
        if case .console = admitted.route { ConsoleGate.secure(&response) } else { origins.decorate(&response, head) }
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
        // The engine's refusals (too large, too slow, malformed) keep the console's rules too:
        // no CORS for another origin to read them by, and its page's headers.
        if Self.isConsolePath(head.path) { ConsoleGate.secure(&r) } else { origins.decorate(&r, head) }
        return r
    }

    public func log(_ head: HTTPRequestHead?, status: Int, milliseconds: Double, note: String?) {
        let tenths = Int((milliseconds * 10).rounded())
        let line = (head.map { "\($0.method) \(Self.loggedPath($0.path))" } ?? "- -") + " \(status) \(tenths / 10).\(tenths % 10)ms"
        log(note.map { line + " " + Self.redacted($0, head) } ?? line)
    }

    /// A log note without the secrets its request carried (tokens in the query, the path or a
    /// signature header), on one line and of bounded length. Reasons never hold a secret; this
    /// makes sure of it.
    static func redacted(_ note: String, _ head: HTTPRequestHead?) -> String {
        var text = String(note.prefix(600)).replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\r", with: " ")
        guard let head else { return text }
        let query = QueryString(head.query ?? "")
        var secrets = [query["ckAPIToken"], query["ckWebAuthToken"], query["token"], head.headers["X-Apple-CloudKit-Request-SignatureV1"]].compactMap { $0 }
        // The token segments of capability URLs, by position: a mistyped URL (`/upload/T/x`)
        // still holds a good token, and a wrong path's reason shows the path whole.
        let parts = head.path.split(separator: "/")
        if let at = ["upload": 1, "webcourier": 3, "assets": 2][String(parts.first ?? "")], parts.count > at { secrets.append(String(parts[at])) }
        for s in secrets where s.utf8.count >= 8 { text = text.replacingOccurrences(of: s, with: "…") }
        return text
    }

    /// The path as the log shows it: without the query (API and web auth tokens) and without
    /// the tokens that are path segments (upload URLs, long-polls).
    static func loggedPath(_ path: String) -> String {
        // Web Services paths hold no secret: the commonest case, shown as it is.
        if path.hasPrefix("/database/") || path.hasPrefix("/device/") { return path.utf8.count <= 300 ? path : String(path.prefix(300)) }
        // The segments kept are those before the token: /upload/, /webcourier/{c}/{e}/, and
        // /assets/{2 hex}/ (an asset URL's hash is what lets one read it). What follows the
        // token goes too: a mistyped URL (a trailing slash) is refused, but its token is good.
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1, let before = ["upload": 2, "webcourier": 4, "assets": 3][parts[1]], parts.count > before else {
            return String(path.prefix(300))
        }
        return String((parts[..<before] + ["…"]).joined(separator: "/").prefix(300))
    }

    // MARK: Web Services

    private func webServices(_ request: HTTPRequest, _ query: QueryString, container: String, environment: Environment,
                             scope: DatabaseScope?, endpoint: Endpoint, checked: HeadAuthentication?) throws -> HTTPResponse {
        let head = request.head
        guard EndpointCall.allows(head.method, endpoint) else {
            throw CloudKitError.badRequest("\(endpoint.path) is sent as \(endpoint.isGET ? "GET (or POST)" : "POST"), not \(Names.describe(head.method))")
        }
        let signature = Self.signature(head, body: request.body)
        let auth = try api.authenticate(WebCredentials(container: container, environment: environment, scope: scope,
                                                       apiToken: query["ckAPIToken"], webAuthToken: query["ckWebAuthToken"],
                                                       signature: signature, endpoint: endpoint), checked: checked)
        let caller = auth.caller(container: container, environment: environment, scope: scope, deviceID: Self.deviceID(query["clientId"]))
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
    /// is marked delivered only once the answer is written. While nothing comes the poll waits
    /// in poll(2) — woken by a change to the client's inbox, whoever made it — and ends as soon
    /// as its client hangs up.
    private func poll(container: String, environment: Environment, apnsToken: String, wait: HTTPClientWait) throws -> HTTPResponse {
        let null = HTTPResponse(status: 200, headers: Self.jsonHeaders, body: Array("null".utf8))
        let key = container + "/" + environment.rawValue + "/" + apnsToken
        // Watching before the first look: what is delivered in between still wakes it.
        let (client, watch) = try api.watchWebPush(container: container, environment: environment, apnsToken: apnsToken)
        try polls.enter(key, credential: client.issuer, watch: watch)
        defer { polls.leave(key, credential: client.issuer, watch: watch) }
        let deadline = Date().addingTimeInterval(pollSeconds)
        while true {
            if polls.isStopped { return null }
            watch.drain()
            if polls.startDelivery(key, watch) {
                let push: WebPush?
                do { push = try api.nextWebPush(container: container, environment: environment, apnsToken: apnsToken) } catch {
                    polls.finishDelivery(key)
                    throw error
                }
                if let push {
                    var r = json(200, push.body)
                    let api = self.api, polls = self.polls
                    r.onSent = { sent in
                        if sent { try? api.acknowledgeWebPush(push, container: container, environment: environment) }
                        polls.finishDelivery(key)
                    }
                    return r
                }
                polls.finishDelivery(key)
            }
            // Otherwise another poll of this client is delivering: its end wakes this one.
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return null }
            // Where changes to files cannot be watched, looked at again every second.
            let slice = watch.isWatching ? left : min(left, 1)
            switch wait.wait(for: watch.descriptor, seconds: slice) {
            case .woken:
                // A client bound to its user meanwhile: its next poll watches the inbox.
                if !watch.watchesInbox, (try? api.webPushClient(container: container, environment: environment, apnsToken: apnsToken))?.isBound == true {
                    return null
                }
                watch.renew()
            case .timedOut: continue
            case .stopping: return null
            case .clientGone:
                return HTTPResponse(status: 0, dropConnection: true, logNote: "the client went away while its long-poll waited")
            }
        }
    }

    // MARK: answers

    static var jsonHeaders: HTTPHeaders { HTTPHeaders([("Content-Type", "application/json; charset=utf-8")]) }

    /// A body as the API encodes it: for the wire, its error dictionaries are CloudKit's, with
    /// no `ckErrorCode` (the API has a server URL: `ResponseStyle.Audience.wire`).
    func json(_ status: Int, _ body: any ResponseBody) -> HTTPResponse {
        var out: [UInt8] = []
        body.encodeJSON(into: &out, pretty: false)
        return HTTPResponse(status: status, headers: Self.jsonHeaders, body: out)
    }

    private func require(_ head: HTTPRequestHead, _ methods: [String]) throws {
        guard methods.contains(head.method) || (head.method == "HEAD" && methods.contains("GET")) else {
            throw CloudKitError.badRequest("this URL takes \(methods.joined(separator: " or ")), not \(Names.describe(head.method))")
        }
    }

    private func refuseHost(_ head: HTTPRequestHead) -> HTTPResponse? {
        guard let host = head.headers["Host"] else { return nil }
        guard let name = Self.hostName(host), hostNames.contains(name) else {
            return errorResponse(CloudKitError.badRequest("Host '\(Names.describe(String(host.prefix(100))))' is not this server (ck serve answers only its own names, so a page on another site cannot reach it through DNS)"), status: 400)
        }
        return nil
    }

    /// The name a `Host` field gives, lowercased: `name[:port]` or `[IPv6][:port]`, the port
    /// digits only (RFC 9110 §7.2); nil for anything else (`localhost:80@evil.example`).
    static func hostName(_ host: String) -> String? {
        // ASCII (every request's Host, nearly) is split on its bytes: searching Characters for
        // ':' cost 3,600 instructions a request. Else by Characters, as a grapheme with a colon
        // in it is no colon.
        if host.utf8.allSatisfy({ $0 < 0x80 }) { return asciiHostName(host) }
        var name = Substring(host), port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            name = host[host.index(after: host.startIndex)..<close]
            let rest = host[host.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { return nil }
                port = rest.dropFirst()
            }
        } else if let colon = host.firstIndex(of: ":") {
            name = host[..<colon]
            port = host[host.index(after: colon)...]
        }
        if let port, port.utf8.count > 5 || !port.utf8.allSatisfy({ (48...57).contains($0) }) { return nil }
        return name.lowercased()
    }

    /// `hostName` of an ASCII field, where bytes and Characters are one.
    private static func asciiHostName(_ host: String) -> String? {
        var host = host
        return host.withUTF8 { u -> String? in
            var name = u[...], port: Slice<UnsafeBufferPointer<UInt8>>?
            if u.first == UInt8(ascii: "[") {
                guard let close = u.firstIndex(of: UInt8(ascii: "]")) else { return nil }
                name = u[1..<close]
                let rest = u[(close + 1)...]
                if !rest.isEmpty {
                    guard rest.first == UInt8(ascii: ":") else { return nil }
                    port = rest.dropFirst()
                }
            } else if let colon = u.firstIndex(of: UInt8(ascii: ":")) {
                name = u[..<colon]
                port = u[(colon + 1)...]
            }
            if let port, port.count > 5 || !port.allSatisfy({ (48...57).contains($0) }) { return nil }
            return String(decoding: name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self)
        }
    }

    /// A failure as Apple's servers answer it: the envelope `{uuid, serverErrorCode, reason,
    /// retryAfter?, redirectURL?}` with the code's status; `Retry-After` beside `retryAfter`.
    /// `route`: the request's, when its path named one.
    func errorResponse(_ error: Error, _ head: HTTPRequestHead? = nil, route: WebServicesRoute? = nil, status: Int? = nil) -> HTTPResponse {
        if let m = error as? WebServicesRoute.MethodNotAllowed {
            var r = errorResponse(m.error, head, route: route, status: 405)
            r.headers.set("Allow", "OPTIONS")
            return r
        }
        let e = (error as? CloudKitError) ?? CloudKitError.internalError("\(error)")
        if e.code == .networkFailure { return HTTPResponse(status: 0, dropConnection: true, logNote: "NETWORK_FAILURE: " + e.reason) }
        var envelope = e.envelope(for: .wire).objectValue ?? [:]
        if e.code == .authenticationRequired, let head, let (c, env) = route?.containerAndEnvironment {
            // The page that asked (its browser's Origin) is the one the sign-in page may post to;
            // an API token with a sign-in callback has the page redirect to that instead.
            let opener = head.headers["Origin"].flatMap { origins.allows($0) && AllowedOrigins.isOrigin($0) ? $0 : nil }
            let redirecting = QueryString(head.query ?? "")["ckAPIToken"].flatMap { t in
                (try? api.signInCallback(ofAPIToken: t, container: c, environment: env)) == nil ? nil : t
            }
            envelope["redirectURL"] = .string(SignInPage.url(api: api, container: c, environment: env, opener: opener, redirecting: redirecting))
        }
        var r = HTTPResponse(status: status ?? e.code.httpStatus ?? 500, headers: Self.jsonHeaders, body: Array(JSONWriter.compact(.object(envelope)).utf8),
                             logNote: e.code.rawValue + ": " + e.reason + (logHint(e, route).map { "; " + $0 } ?? ""))
        if let s = e.retryAfter { r.headers.set("Retry-After", String(s)) }
        return r
    }

    /// What the server's user does about a refusal whose remedy is the schema (an index, a
    /// record type, a deploy), as the command that addresses this data directory and the
    /// request's container: for the log only, the answer keeps CloudKit's words.
    func logHint(_ e: CloudKitError, _ route: WebServicesRoute?) -> String? {
        guard let step = e.nextStep, case .database(let container, let environment, _, _)? = route else { return nil }
        let ck = "ck --data-dir \(Self.shellWord(api.dataDirectory)) --container \(Self.shellWord(container))"
        switch step {
        case .addIndex(let type, let field, let index, let line):
            let add = "\(ck) schema index add \(Self.shellWord(type)) \(Self.shellWord(field)) \(index)"
            let how = environment == .production ? "add the index in development, then deploy: \(add); \(ck) schema deploy" : "add the index: \(add)"
            return how + " (in the .ckdb of record type \(type): \(line))"
        case .defineRecordType:
            return environment == .production
                ? "production has the record types a deploy gave it: \(ck) schema deploy"
                : "a record type exists once a record of it is saved in development, or a schema defines it: \(ck) schema import FILE"
        case .deploySchema: return "deploy the development schema first: \(ck) schema deploy"
        default: return nil
        }
    }

    /// A word as a shell reads it back: as it is when it holds nothing special, else quoted.
    static func shellWord(_ s: String) -> String {
        if !s.isEmpty, s.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_./:@%+,=".unicodeScalars.contains($0)) }) { return s }
        return "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
