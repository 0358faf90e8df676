import CKCore
import CKJSON
import CKModel

/// Everything a command handler gets: its arguments, the resolved global options, the streams,
/// the API, and helpers to read input and print results.
public final class Invocation {
    public let command: Command
    public let args: ParsedArguments
    public let globals: GlobalOptions
    public let io: IO
    let printer: Printer

    init(command: Command, args: ParsedArguments, globals: GlobalOptions, io: IO) {
        self.command = command
        self.args = args
        self.globals = globals
        self.io = io
        self.printer = Printer(io: io, format: globals.format)
    }

    /// The API every command speaks: the data directory, with asset URLs into it.
    public lazy var api: CloudKitAPI = CloudKitAPI(dataDirectory: globals.dataDirectory)

    public func container() throws -> String {
        let c = try globals.containerOverride ?? api.defaultContainer() ?? GlobalOptions.defaultContainer
        try Names.validateContainerID(c)
        return c
    }

    /// Who the command asks as, of which database: the global options.
    func caller(_ scope: DatabaseScope? = nil) throws -> Caller {
        Caller(container: try container(), environment: globals.environment, scope: scope ?? globals.scope,
               user: globals.actingAs.map(Caller.User.appleID) ?? .device, deviceID: globals.device)
    }

    /// The zone `--zone` (or `$CK_ZONE`) names; nil when none was given (the request's own
    /// default applies: `_defaultZone`, or the zone a history reference names).
    var zoneGiven: String? { globals.zones.isEmpty ? nil : globals.zone }

    /// Prints a response body in the chosen format.
    func print(_ body: some ResponseBody) {
        if let k = body.listKey {
            printer.emitList(body.items, listKey: k, others: body.members)
        } else {
            printer.emit(.object(body.members))
        }
    }

    /// Announces on stderr (unless `--quiet`) the fields a write defined just in time, as the
    /// API answered them (SPEC §4).
    func announce(_ defined: [DefinedField]) {
        guard !globals.quiet else { return }
        for f in defined {
            io.writeErr("ck: defined field '\(ErrorReporter.oneLine(f.fieldName))' as \(f.type) in \(f.newRecordType ? "new " : "")record type '\(ErrorReporter.oneLine(f.recordType))'\n")
        }
    }

    /// A warning on stderr, unless `--quiet`.
    func warn(_ message: String) {
        if !globals.quiet { io.writeErr("ck: warning: \(ErrorReporter.oneLine(message))\n") }
    }

    func usageError(_ message: String) -> UsageError { UsageError(message, command: command.path) }

    /// Positionals, checked against the number the command takes.
    func positionals(min: Int = 0, max: Int = Int.max, what: String) throws -> [String] {
        let p = args.positionals
        if p.count < min { throw usageError("missing \(what)") }
        if p.count > max { throw usageError("unexpected argument '\(p[max])'") }
        return p
    }

    /// Reads standard input, at most `limit` bytes (a request's, by default: reference §6):
    /// more is LIMIT_EXCEEDED, after reading `limit + 1` bytes and no more, so memory stays
    /// bounded whatever is piped in. On a terminal it first says what it waits for, and how
    /// to end it, rather than hanging in silence.
    func readStdin(what: String, limit: Int = Limits.requestBytes) throws -> [UInt8] {
        announceStdin(what)
        let bytes = io.readIn(atMost: limit + 1)
        guard bytes.count <= limit else {
            throw CloudKitError(.limitExceeded, "\(what) on stdin: more than \(limit) bytes, the most one request may hold (ck read no further)")
        }
        return bytes
    }

    /// Reads all of standard input, however large (`ck import` of a bulk load, which is no
    /// single request).
    func readAllStdin(what: String) -> [UInt8] {
        announceStdin(what)
        return io.readIn()
    }

    private func announceStdin(_ what: String) {
        if io.stdinIsTerminal() {
            io.writeErr("ck: reading \(what) from standard input (a terminal); end it with Ctrl-D, or give it with '< FILE' or a pipe\n")
        }
    }

    /// Reads standard input as one JSON document (BAD_REQUEST when malformed).
    func readJSONInput(what: String) throws -> JSONValue {
        let bytes = try readStdin(what: what)
        do { return try JSONParser.parse(bytes) } catch let f as JSONParser.Failure {
            throw CloudKitError.badRequest("\(what) on stdin is not valid JSON: \(f)")
        }
    }

    /// Output first, then state: runs `commit` (moving a bookmark, marking notifications read)
    /// only once everything printed so far is written — and, on a pipe, read. Otherwise nothing
    /// is committed and the command fails (quietly if the reader went away).
    func afterOutput(_ commit: () throws -> Void) throws {
        let s = io.confirmDelivered()
        guard s == .ok else { throw OutputError(status: s) }
        try commit()
    }

    func positiveInt(_ option: String, max: Int? = nil) throws -> Int? {
        guard let raw = args.value(option) else { return nil }
        guard let n = Int(raw), n >= 1 else { throw usageError("\(option) must be a positive integer, got '\(raw)'") }
        if let m = max, n > m { throw usageError("\(option) must be at most \(m), got \(n)") }
        return n
    }

    /// Runs a zones/modify or subscriptions/modify of `operations` (`run`) in requests of at
    /// most the operations one holds, and prints the items answered under `key`. Every
    /// operation is attempted: with one, its failure is the command's error; with several, the
    /// failed ones are error items and ck exits 9.
    func modifyInBatches<Operation>(_ operations: [Operation], key: String, _ run: ([Operation]) throws -> ItemsResponse) throws -> Int32 {
        var results: [ItemsResponse.Item] = []
        for start in stride(from: 0, to: operations.count, by: Limits.operationsPerBatch) {
            results += try run(Array(operations[start..<min(start + Limits.operationsPerBatch, operations.count)])).results
        }
        if operations.count == 1, let e = results.first?.error { throw e }
        let response = ItemsResponse(key, results, for: .commandLine)
        self.print(response)
        return batchExit(response.failures.map(OperationResult.failed), total: operations.count, noun: key)
    }

    /// The exit code for a batch: 0, or 9 with a note on stderr when any item failed. When a
    /// batch failed atomically, most items are ATOMIC_ERROR, which says nothing about why: the
    /// note names the cause, the first error that is not ATOMIC_ERROR.
    func batchExit(_ results: [OperationResult], total: Int? = nil, noun: String) -> Int32 {
        let errors = results.compactMap(\.error)
        guard let first = errors.first else { return ExitCode.success }
        let count = total ?? results.count
        let cause = errors.first { $0.code != .atomicError }
        let atomic = cause != nil && errors.contains { $0.code == .atomicError }
        let shown = atomic ? cause! : first
        let label = atomic ? "cause" : "first"
        if globals.errorFormat == .json {
            var doc: [String: JSONValue] = ["serverErrorCode": "PARTIAL_FAILURE", "reason": .string("\(errors.count) of \(count) \(noun) failed"),
                                            "firstError": first.envelope()]
            if atomic { doc["cause"] = shown.envelope() }
            io.writeErr(JSONWriter.line(.object(doc)))
        } else {
            io.writeErr("ck: PARTIAL_FAILURE: \(errors.count) of \(count) \(noun) failed (\(label): \(shown.code.rawValue): \(ErrorReporter.oneLine(shown.reason)))\n")
        }
        return ExitCode.partialFailure
    }
}
