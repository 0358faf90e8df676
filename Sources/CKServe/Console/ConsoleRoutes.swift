import CKCore
import CKHTTP
import CKJSON
import CKModel

/// The console's paths under `/console` (Docs/console.md): its page, script and style, compiled
/// into the binary; the Web Services endpoints at `/console/ws/database/1/…`, answered by the
/// same API call as `/database/1/…` for the console's caller (the device's account, or `?as=`
/// a user who signed in here, as `--as`); and the console API at `/console/api/…` for what
/// Web Services has no endpoint for. Each is one API call. The gate (ConsoleGate) has let the
/// request in before it comes here.
struct ConsoleRoutes: Sendable {
    let gate: ConsoleGate
    /// The server's recent requests, for the live view.
    let requests = RequestLog()

    /// What a path under `/console` is to the gate: a call (the API and Web Services, which
    /// need the key), the page, or one of its files.
    static func kind(_ rest: String) -> ConsoleGate.Kind {
        if rest.hasPrefix("/api/") || rest.hasPrefix("/ws/") { return .call }
        return rest.isEmpty || rest == "/" ? .page : .file
    }

    func respond(_ request: HTTPRequest, rest: String, handler: WebServicesHandler) throws -> HTTPResponse {
        let head = request.head
        let query = QueryString(head.query ?? "")
        switch rest {
        case "", "/":
            try require(head, ["GET"])
            // `/console` → `/console/`, so the page's relative paths resolve; the browser keeps
            // the fragment (the key) across the redirect.
            if rest.isEmpty {
                return HTTPResponse(status: 303, headers: HTTPHeaders([("Location", "/console/"), ("Content-Type", "text/plain; charset=utf-8")]),
                                    body: Array("See /console/\n".utf8))
            }
            return file(ConsolePage.html, type: "text/html; charset=utf-8")
        case "/console.js":
            try require(head, ["GET"])
            return file(ConsolePage.script, type: "text/javascript; charset=utf-8")
        case "/console.css":
            try require(head, ["GET"])
            return file(ConsolePage.style, type: "text/css; charset=utf-8")
        case "/api/overview":
            try require(head, ["GET"])
            return handler.json(200, try handler.api.consoleOverview())
        case "/api/schema":
            try require(head, ["GET"])
            let (container, environment) = try containerAndEnvironment(query)
            return handler.json(200, try handler.api.exportSchemaJSON(as: .console(container: container, environment: environment, scope: .private, appleID: query["as"])))
        case "/api/requests":
            try require(head, ["GET"])
            let after = query["after"].flatMap { Int($0) } ?? 0
            return handler.json(200, DocumentBody(["requests": .array(requests.list(after: after).map { requests.json($0, bodies: false) })], listKey: "requests"))
        case "/api/faults":
            if head.method == "POST" { return handler.json(200, try handler.api.addFault(try AddFaultRequest(json: .object(try json(request))))) }
            try require(head, ["GET"])
            return handler.json(200, try handler.api.faults())
        case "/api/shares":
            try require(head, ["POST"])
            let body = try json(request)
            return handler.json(200, try handler.api.listShares(ShareListRequest(zoneName: try ConsoleHistory.optionalString(body, "zoneName")),
                                                                 as: try ConsoleHistory.caller(body)))
        case "/api/counts":
            try require(head, ["POST"])
            return handler.json(200, try handler.api.zoneRecordCounts(as: try ConsoleHistory.caller(try json(request))))
        case "/api/notifications":
            try require(head, ["POST"])
            let caller = try ConsoleHistory.caller(try json(request))
            return handler.json(200, try handler.api.takeNotifications(limit: 100, as: caller))
        case "/api/faults/clear":
            try require(head, ["POST"])
            // Every fault only when asked for by name: a body that lost its id clears nothing.
            let body = try json(request)
            let id = try ConsoleHistory.optionalString(body, "id")
            guard (id != nil) != (body["all"]?.boolValue == true) else { throw CloudKitError.badRequest("faults/clear takes {\"id\": ID} for one fault or {\"all\": true} for every one") }
            return handler.json(200, try handler.api.clearFaults(ClearFaultsRequest(id: id)))
        case "/api/schema/text":
            try require(head, ["GET"])
            let (container, environment) = try containerAndEnvironment(query)
            return handler.json(200, try handler.api.exportSchema(as: .console(container: container, environment: environment, scope: .private, appleID: nil)))
        case "/api/schema/deploy":
            try require(head, ["POST"])
            let body = try json(request)
            let (container, _) = try containerAndEnvironment(body)
            // A preview must never deploy, so the body says which it is.
            guard let dryRun = body["dryRun"]?.boolValue else { throw CloudKitError.badRequest("dryRun is true (a preview) or false (the deploy)") }
            // A deploy is of the development schema its preview showed: it names that one.
            let ifDevelopment = try ConsoleHistory.optionalString(body, "ifDevelopment")
            guard dryRun || ifDevelopment != nil else { throw CloudKitError.badRequest("a deploy follows its preview: ifDevelopment is the development schema the preview answered") }
            let r = try handler.api.deploySchema(as: .console(container: container, environment: .development, scope: .private, appleID: nil),
                                                 dryRun: dryRun, ifDevelopment: ifDevelopment)
            var document = r.members
            document["development"] = .string(r.development)
            return handler.json(200, DocumentBody(document))
        case "/api/schema/index":
            try require(head, ["POST"])
            let body = try json(request)
            let (container, environment) = try containerAndEnvironment(body)
            let index = try ConsoleHistory.string(body, "index")
            guard let kind = SchemaIndex(rawValue: index) else { throw CloudKitError.badRequest("index is QUERYABLE, SORTABLE or SEARCHABLE, not '\(Names.describe(index))'") }
            let type = try ConsoleHistory.string(body, "recordType"), field = try ConsoleHistory.string(body, "fieldName")
            let caller = Caller.console(container: container, environment: environment, scope: .private, appleID: try ConsoleHistory.optionalString(body, "as"))
            return handler.json(200, try handler.api.addSchemaIndexes(SchemaIndexRequest(recordType: type, fieldName: field, indexes: [kind]), as: caller))
        default:
            if rest.hasPrefix("/api/requests/") {
                try require(head, ["GET"])
                guard let id = Int(rest.dropFirst(14)), let e = requests.entry(id) else {
                    throw CloudKitError(.notFound, "no request \(Names.describe(String(rest.dropFirst(14).prefix(40)))) in the log (it keeps the newest \(requests.capacity))")
                }
                return handler.json(200, DocumentBody(requests.json(e, bodies: true).objectValue ?? [:]))
            }
            if rest.hasPrefix("/api/history/") {
                try require(head, ["POST"])
                return handler.json(200, try ConsoleHistory(api: handler.api).answer(String(rest.dropFirst(13)), try json(request)))
            }
            if rest.hasPrefix("/ws/") { return try webServices(request, path: String(rest.dropFirst(3)), handler: handler) }
            throw CloudKitError(.notFound, "no such console path '\(Names.describe(String(rest.prefix(200))))'")
        }
    }

    /// A Web Services endpoint for the console's caller: the same request type, API call and
    /// body as over `/database/1/…`.
    private func webServices(_ request: HTTPRequest, path: String, handler: WebServicesHandler) throws -> HTTPResponse {
        let head = request.head
        guard case .database(let container, let environment, let scope, let endpoint) = try WebServicesRoute.parse(path) else {
            throw CloudKitError(.notFound, "the console's Web Services are /console/ws/database/1/{container}/{environment}/{database}/{endpoint}")
        }
        guard EndpointCall.allows(head.method, endpoint) else {
            throw CloudKitError.badRequest("\(endpoint.path) is sent as \(endpoint.isGET ? "GET (or POST)" : "POST"), not \(Names.describe(head.method))")
        }
        let query = QueryString(head.query ?? "")
        let caller = Caller.console(container: container, environment: environment, scope: scope, appleID: query["as"])
        var body: JSONValue = .null
        if head.method == "POST", !endpoint.isGET || endpoint == .usersDiscover {
            guard !request.body.isEmpty else { throw CloudKitError.badRequest("\(endpoint.path) needs a JSON body") }
            do { body = try JSONParser.parse(request.body) } catch { throw CloudKitError.badRequest("the request body is not JSON: \(error)") }
        }
        do {
            // `?filter=TEXT`…: ck's --filter, read as the CLI reads it (`&tz=`: the browser's
            // zone, for dates without an offset); `?at=REF`: the zone as it was (--at).
            let filters = query.values("filter")
            let at = try query["at"].flatMap { $0.isEmpty ? nil : try handler.api.historyReference($0) }
            switch endpoint {
            case .recordsQuery where !filters.isEmpty || at != nil:
                var r = try QueryRecordsRequest(json: body)
                r.at = at
                return handler.json(200, try handler.api.queryRecords(r, filterTexts: filters, timeZoneName: query["tz"], as: caller))
            case .recordsLookup where filters.isEmpty && at != nil:
                var r = try LookupRecordsRequest(json: body)
                r.at = at
                return handler.json(200, try handler.api.lookupRecords(r, as: caller))
            default:
                guard filters.isEmpty && at == nil else {
                    throw CloudKitError.badRequest("filter= is for records/query and at= for records/query and records/lookup, not \(endpoint.path)")
                }
            }
            return handler.json(200, try EndpointCall.answer(endpoint, body: body, api: handler.api, caller: caller))
        } catch let e as CloudKitError {
            // The envelope is CloudKit's; the index a refused query needs goes beside it, so the
            // console can offer to add it (ck prints it to the log as the command that does).
            var r = handler.errorResponse(e, head)
            if case .addIndex(let type, let field, let index, _)? = e.nextStep { r.headers.set("X-CK-Index-Needed", "\(type) \(field) \(index)") }
            return r
        }
    }

    /// A console API body: a JSON object.
    private func json(_ request: HTTPRequest) throws -> [String: JSONValue] {
        guard let o = (try? JSONParser.parse(request.body))?.objectValue else { throw CloudKitError.badRequest("the console API takes a JSON object") }
        return o
    }

    private func containerAndEnvironment(_ query: QueryString) throws -> (String, Environment) {
        try containerAndEnvironment(container: query["container"], environment: query["environment"])
    }

    private func containerAndEnvironment(_ body: [String: JSONValue]) throws -> (String, Environment) {
        try containerAndEnvironment(container: try ConsoleHistory.optionalString(body, "container"), environment: try ConsoleHistory.optionalString(body, "environment"))
    }

    private func containerAndEnvironment(container: String?, environment: String?) throws -> (String, Environment) {
        guard let c = container else { throw CloudKitError.badRequest("the console's schema calls name a container") }
        try Names.validateContainerID(c)
        let raw = environment ?? "development"
        guard let e = Environment(rawValue: raw) else { throw CloudKitError.badRequest("the environment is development or production, not '\(Names.describe(raw))'") }
        return (c, e)
    }

    private func file(_ text: String, type: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", type)]), body: Array(text.utf8))
    }

    private func require(_ head: HTTPRequestHead, _ methods: [String]) throws {
        guard methods.contains(head.method) || (head.method == "HEAD" && methods.contains("GET")) else {
            throw CloudKitError.badRequest("this console URL takes \(methods.joined(separator: " or ")), not \(Names.describe(head.method))")
        }
    }

    /// A refusal: a page for a browser's address bar, the JSON envelope for the console's script.
    func refusal(_ r: ConsoleGate.Refusal, _ head: HTTPRequestHead, handler: WebServicesHandler) -> HTTPResponse {
        var out: HTTPResponse
        let code: ServerErrorCode = r.status == 400 ? .badRequest : .accessDenied
        if (head.headers["Accept"] ?? "").contains("text/html") {
            out = HTTPResponse(status: r.status, headers: HTTPHeaders([("Content-Type", "text/html; charset=utf-8")]),
                               body: Array(ConsolePage.refused(r.reason).utf8), logNote: code.rawValue + ": " + r.reason)
        } else {
            out = handler.errorResponse(CloudKitError(code, r.reason), head, status: r.status)
        }
        ConsoleGate.secure(&out)
        return out
    }
}
