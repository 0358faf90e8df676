import Foundation
import CKCore

/// `ck export` and `ck import`: a database's records as NDJSON, one Web Services record per
/// line, for fixtures, backups and bulk loads.
enum ImportExportCommands {
    static var all: [Command] { [export, importRecords] }

    static let export: Command = Command(["export"], synopsis: "[--zone Z] [--at REF]",
        summary: "Print every record of a database as NDJSON (one record per line)",
        options: [HistoryCommands.atOption],
        details: """
        Every zone of the database (--db), or only --zone Z, zone by zone in storage order;
        each line is a full Web Services record with its zoneID, which 'ck import' reads back.
        Always NDJSON: --format does not change it. --at REF exports the records as they were
        then (a tag or a time is a point in every zone; a zone made after it exports nothing).
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let db = try inv.database()
        let named = try inv.args.value("--at").flatMap { try db.zoneName(of: try HistoryCommands.reference(inv, $0)) }
        let zones = !inv.globals.zones.isEmpty ? [try db.zone(inv.globals.zone)] : try named.map { [try db.zone($0)] } ?? db.listZones()
        let style = inv.style
        for z in zones {
            // Each line is encoded on the thread that read its record.
            try HistoryCommands.forEachRecord(inv, db, z, emptyBeforeHistory: zones.count > 1, prepare: { JSONWriter.line($0.encodableResponse(style)) }) { r, line in
                if try db.canRead(r) { inv.io.writeOut(line ?? JSONWriter.line(r.encodableResponse(style))) }
                return inv.io.writable()
            }
        }
        return ExitCode.success
    }

    static let importRecords: Command = Command(["import"], synopsis: "[FILE] [--batch N]",
        summary: "Load records from NDJSON (or a JSON array), replacing records of the same name", endpoint: "records/modify",
        options: [OptionSpec("--batch", value: "N", help: "records per committed batch [default and maximum: 400]")],
        details: """
        Reads Web Services records from FILE or stdin: NDJSON, one record per line (what
        'ck export' prints), or one JSON array of records. Each record goes to the zone its
        zoneID names (else --zone); custom zones of the private database are created as needed.
        All the input is checked before anything is written, so malformed input changes
        nothing. A record identical to the one stored (same type, fields and parent) is left as
        it is: no new change, same tag, so re-importing an export is free. Progress (records/s,
        done/total, ETA) goes to stderr when it is a terminal, then a one-line summary; -q for
        none. Records are saved with forceReplace in batches of up to 400 and reported as
        each batch commits: the records/modify response {"records": [...]}, streamed, one item
        per record in input order, {recordName, recordChangeTag, zoneID} or an error
        dictionary (with --format ndjson, one line each). Exit 9 when any record failed.
        """) { inv in
        let files = try inv.positionals(max: 1, what: "")
        let batch = try inv.positiveInt("--batch", max: Limits.operationsPerBatch) ?? Limits.operationsPerBatch
        let bytes: [UInt8]
        if let f = files.first {
            let path = f.hasPrefix("/") ? f : inv.io.currentDirectory + "/" + f
            bytes = try FileSystem.readUserFile(path, shownAs: f)
        } else {
            bytes = inv.readStdin(what: "records to import (NDJSON or a JSON document)")
        }
        let source = RecordSource(bytes: bytes, defaultZone: inv.globals.zone)
        // First pass: check everything, so bad input writes nothing.
        var zones: [String] = []
        var seenZones = Set<NameKey>()
        var count = 0
        try source.forEach { zone, _ in
            count += 1
            if seenZones.insert(NameKey(zone)).inserted { zones.append(zone) }
        }
        if count == 0 { throw CloudKitError.badRequest("import: the input holds no records") }
        let db = try inv.database()
        _ = try db.requireWrite()
        // One index build at the end instead of one per batch.
        db.defersIndexMaintenance = true
        for z in zones where !z.utf8.elementsEqual(ZoneID.defaultZoneName.utf8) {
            if inv.globals.scope != .private { _ = try db.zone(z) }
        }
        for z in zones where !z.utf8.elementsEqual(ZoneID.defaultZoneName.utf8) && inv.globals.scope == .private { _ = try db.createZone(z) }

        // Only failures are kept: holding every saved record would grow with the input.
        var failures: [OperationResult] = []
        var total = 0
        var unchanged = 0
        let progress = ImportProgress(io: inv.io, total: count, quiet: inv.globals.quiet)
        var pendingZone: String?
        var pending: [RecordOperation] = []
        var pendingNames = Set<NameKey>()
        var committed = Set<NameKey>()
        // What each zone's load knows while it is the zone's only writer (BulkLoad).
        var bulks: [NameKey: BulkLoad] = [:]
        for z in zones { bulks[NameKey(z)] = BulkLoad(zone: z) }
        // Each zone the import wrote to, at its end — also when it stops part-way.
        func finishLoads() {
            for z in zones where committed.contains(NameKey(z)) { try? db.finishBulkLoad(bulks[NameKey(z)]!) }
        }
        do {
            try inv.printer.streamBatches(listKey: "records") { emit in
                func flush() throws {
                    guard let z = pendingZone, !pending.isEmpty else { return }
                    var assets: [String: [UInt8]] = [:]
                    AssetDownloads.collect(pending, store: inv.store.assets, into: &assets)
                    // A record whose change tag is not newer than the zone's head before the batch
                    // was left as it was (same fields: no new change).
                    let head = (try? db.zone(z).history.head()) ?? 0
                    defer { if ((try? db.zone(z).history.head()) ?? 0) > head { committed.insert(NameKey(z)) } }
                    let results = try db.modify(zone: z, operations: pending, atomic: false, assets: assets, bulk: bulks[NameKey(z)])
                    var items: [any JSONEncodable] = []
                    items.reserveCapacity(results.count)
                    for r in results {
                        total += 1
                        if r.error != nil { failures.append(r) }
                        if case .saved(let rec) = r, let seq = Int64(rec.recordChangeTag, radix: 36), seq <= head { unchanged += 1 }
                        switch r {
                        case .saved(let rec): items.append(SavedRecordReceipt(rec))
                        default: items.append(inv.resultJSON(r, .modify))
                        }
                    }
                    // The batch's results are encoded together (on every core when there are many).
                    let batch = items
                    emit(batch.count) { batch[$0] }
                    _ = inv.io.flush()
                    pending = []
                    pendingNames = []
                    progress.update(done: total)
                }
                try source.forEach { zone, op in
                    // A batch holds one operation per record, as a records/modify request must.
                    // Names are compared by their bytes: two spellings of a name are two names.
                    if pendingZone.map({ !zone.utf8.elementsEqual($0.utf8) }) ?? true || pending.count == batch
                        || pendingNames.contains(NameKey(op.recordName ?? "")) {
                        try flush()
                        pendingZone = zone
                    }
                    pending.append(op)
                    pendingNames.insert(NameKey(op.recordName ?? ""))
                }
                try flush()
            }
        } catch {
            finishLoads()
            throw error
        }
        // Only zones the import wrote: a refused import leaves the data directory as it was.
        finishLoads()
        progress.finish(done: total, unchanged: unchanged, failed: failures.count)
        return inv.batchExit(failures, total: total, noun: "records")
    }
}

/// Records in NDJSON or a JSON array, with line numbers in errors. NDJSON lines are parsed on
/// every core, a chunk at a time, and handed on in order; the first bad line (in input order)
/// is the error. The next chunk is parsed while the one before it is handed on, so an import's
/// parsing takes the core its commits leave idle instead of waiting between them.
struct RecordSource {
    let bytes: [UInt8]
    let defaultZone: String
    /// Lines parsed together.
    static let chunk = 512

    typealias Line = (number: Int, range: Range<Int>)

    /// A chunk being parsed in the background; `wait()` gives its results in line order.
    private final class ParsedChunk {
        private let done = DispatchGroup()
        private var results: [Result<(String, RecordOperation), Error>] = []

        init(_ parse: @escaping () -> [Result<(String, RecordOperation), Error>]) {
            DispatchQueue.global().async(group: done) { self.results = parse() }
        }

        func wait() -> [Result<(String, RecordOperation), Error>] {
            done.wait()
            return results
        }
    }

    func forEach(_ body: (String, RecordOperation) throws -> Void) throws {
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if first == UInt8(ascii: "[") {
            let doc: JSONValue
            do { doc = try JSONParser.parse(bytes) } catch { throw CloudKitError.badRequest("import: input is not valid JSON: \(error)") }
            for (i, r) in (doc.arrayValue ?? []).enumerated() {
                let (zone, op) = try operation(r, context: "record \(i + 1)")
                try body(zone, op)
            }
            return
        }
        // The lines that are not blank, a chunk at a time; one chunk parsed ahead.
        var lines: [Line] = []
        lines.reserveCapacity(RecordSource.chunk)
        var ahead: ParsedChunk?
        // A chunk still parsing when the body stops the import is waited for, not left running.
        defer { _ = ahead?.wait() }
        func handOn(_ chunk: ParsedChunk) throws {
            for p in chunk.wait() {
                let (zone, op) = try p.get()
                try body(zone, op)
            }
        }
        func next() throws {
            let parsing = ParsedChunk { [lines] in Parallel.map(lines.count, chunk: 16) { i in self.parse(lines[i]) } }
            lines.removeAll(keepingCapacity: true)
            let previous = ahead
            ahead = parsing
            if let previous { try handOn(previous) }
        }
        var line = 0
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            line += 1
            if !bytes[start..<end].allSatisfy({ [0x20, 0x09, 0x0D].contains($0) }) { lines.append((line, start..<end)) }
            start = end + 1
            if lines.count == RecordSource.chunk { try next() }
        }
        if !lines.isEmpty { try next() }
        if let last = ahead { ahead = nil; try handOn(last) }
    }

    /// One line: its zone and its operation, or the error that names the line.
    private func parse(_ l: Line) -> Result<(String, RecordOperation), Error> {
        Result {
            let j: JSONValue
            do { j = try JSONParser.parse(Array(bytes[l.range])) } catch { throw CloudKitError.badRequest("import: line \(l.number) is not valid JSON: \(error)") }
            return try operation(j, context: "line \(l.number)")
        }
    }

    private func operation(_ j: JSONValue, context: String) throws -> (String, RecordOperation) {
        guard j.objectValue != nil else { throw CloudKitError.badRequest("import: \(context) must be a record object, got \(j.kindName)") }
        var zone = defaultZone
        if let z = j["zoneID"], !z.isNull {
            guard let n = z["zoneName"]?.stringValue else { throw CloudKitError.badRequest("import: \(context): zoneID needs a zoneName") }
            try Names.validateZoneName(n)
            zone = n
        }
        var op = try ModifyRequest.parseRecord(j, type: .forceReplace, context: "import: \(context)")
        if op.recordName == nil { throw CloudKitError.badRequest("import: \(context): record needs a recordName") }
        if op.recordType == nil { throw CloudKitError.badRequest("import: \(context): record needs a recordType") }
        op.recordChangeTag = nil
        op.skipIfUnchanged = true
        try op.checkLimits()
        return (zone, op)
    }
}
