import CKCore

/// `ck log`, `ck show`, `ck diff`, `ck blame`: the zone histories read as git reads commits
/// (Docs/history.md). Points in history are references (HistoryReference): a change token,
/// ZONE@SEQ (or SEQ with --zone), HEAD, a tag or a time.
enum HistoryCommands {
    static var all: [Command] { [log, show, diff, blame] }

    static let referenceHelp = HistoryReferences.help

    static func reference(_ inv: Invocation, _ raw: String) throws -> HistoryReference { try inv.reference(raw) }

    /// The zones a command reads: --zone; else the zone a reference names (ZONE@SEQ, a token);
    /// else, when `everyZone`, every zone of the database; else the default zone.
    static func zones(_ inv: Invocation, _ db: Database, refs: [HistoryReference], everyZone: Bool) throws -> [String] {
        if !inv.globals.zones.isEmpty { return [inv.globals.zone] }
        var named: String?
        for r in refs {
            guard let z = try db.zoneName(of: r) else { continue }
            if let n = named, !n.utf8.elementsEqual(z.utf8) {
                throw CloudKitError.badRequest("the references name two zones, '\(Names.describe(n))' and '\(Names.describe(z))'; compare points of one zone")
            }
            named = z
        }
        if let n = named { return [n] }
        return everyZone ? try db.listZones().map(\.zoneID.zoneName) : [inv.globals.zone]
    }

    /// `--user`: an Apple ID that signed in here, or a user record name.
    static func userRecordName(_ inv: Invocation, _ raw: String) throws -> String {
        if raw.hasPrefix("_") { return raw }
        guard let u = try inv.store.accounts.user(appleID: raw) else {
            throw CloudKitError(.notFound, "no user '\(Names.describe(raw))' has signed in on this device (give an Apple ID that has, or a user record name)")
        }
        return u.userRecordName
    }

    /// One diff entry: {recordName, zoneID, status, recordType, fields: {f: {old, new}}}.
    static func diffJSON(_ d: RecordDiff, zoneID: ZoneID, fields: Bool) -> JSONValue {
        var o: [String: JSONValue] = ["recordName": .string(d.recordName), "zoneID": zoneID.json, "status": .string(d.status)]
        if let t = (d.after ?? d.before)?.recordType { o["recordType"] = .string(t) }
        if fields { o["fields"] = RecordDiff.fieldsJSON(d.fields) }
        return .object(o)
    }

    // MARK: log

    static let log: Command = Command(["log"], synopsis: "[RECORD] [--zone Z | --all-zones] [--field F] [--since REF] [--until REF] [--user U] [--device D] [--limit N] [--patch] [--reverse]",
        summary: "List the changes of a zone, a record or a field, newest first (like git log)",
        options: [
            OptionSpec("--all-zones", help: "the changes of every zone of the database, newest first"),
            OptionSpec("--field", value: "F", help: "only changes that changed field F"),
            OptionSpec("--since", value: "REF", help: "only changes after this point (\(referenceHelp))"),
            OptionSpec("--until", value: "REF", help: "only changes up to this point"),
            OptionSpec("--user", value: "U", help: "only changes by this user (Apple ID or user record name)"),
            OptionSpec("--limit", value: "N", help: "at most N changes"),
            OptionSpec("--patch", help: "add each change's field-level diff: fields: {F: {old, new}}"),
            OptionSpec("--reverse", help: "oldest first"),
        ],
        details: """
        Prints {"changes": [...]}: each change with seq, timestamp, operation (save or delete),
        recordName, recordType, recordChangeTag, userRecordName, deviceID, zoneID and prev (the
        change that wrote the version it replaced); newest first, like git (--reverse: oldest
        first). --format ndjson prints one change per line, table a line each. The history is the
        zone's own (ck keeps every change whole): reading k changes costs O(k). After 'ck gc' the
        log shows what remains: the changes that wrote the versions current at the compaction
        point, then every later one.
        --device D (the global option, given on the command line) keeps the changes made on
        device D.
        """) { inv in
        let target = try inv.positionals(max: 1, what: "").first
        if let t = target { try Names.validateRecordName(t) }
        if inv.args.has("--all-zones") && !inv.globals.zones.isEmpty { throw inv.usageError("--zone and --all-zones exclude each other") }
        let limit = try inv.positiveInt("--limit")
        let field = inv.args.value("--field")
        if let f = field { try Names.validateFieldName(f) }
        let since = try inv.args.value("--since").map { try reference(inv, $0) }
        let until = try inv.args.value("--until").map { try reference(inv, $0) }
        let db = try inv.database()
        let user = try inv.args.value("--user").map { try userRecordName(inv, $0) }
        let device = inv.args.value("--device")
        let patch = inv.args.has("--patch")
        let reverse = inv.args.has("--reverse")
        let names = try zones(inv, db, refs: [since, until].compactMap { $0 }, everyZone: inv.args.has("--all-zones"))
        struct Range { var zone: ZoneStore; var after: Int64; var through: Int64 }
        let ranges: [Range] = try names.map { n in
            let z = try db.zone(n)
            let head = try z.history.head()
            let a = try since.map { try db.resolve($0, in: z, emptyBeforeHistory: names.count > 1) } ?? 0
            let b = try until.map { try db.resolve($0, in: z, emptyBeforeHistory: names.count > 1) } ?? head
            return Range(zone: z, after: a, through: b)
        }
        func item(_ c: HistoryChange, _ z: ZoneStore) throws -> JSONValue? {
            if let t = target, !c.recordName.utf8.elementsEqual(t.utf8) { return nil }
            if let u = user, !c.userRecordName.utf8.elementsEqual(u.utf8) { return nil }
            if let d = device, !c.deviceID.utf8.elementsEqual(d.utf8) { return nil }
            guard field != nil || patch else { return c.summary(zoneID: z.zoneID) }
            let before = try c.prev.flatMap { try z.change($0) }?.record
            let changes = RecordDiff.fieldChanges(before, c.record)
            if let f = field, !changes.contains(where: { $0.name.utf8.elementsEqual(f.utf8) }) { return nil }
            guard var o = c.summary(zoneID: z.zoneID).objectValue else { return nil }
            if patch { o["fields"] = RecordDiff.fieldsJSON(changes) }
            return .object(o)
        }
        if ranges.count == 1 {
            let r = ranges[0]
            var n = 0
            try inv.printer.stream(listKey: "changes") { emit in
                try r.zone.forEachChange(after: r.after, through: r.through, newestFirst: !reverse) { c in
                    guard let j = try item(c, r.zone) else { return true }
                    emit(j)
                    n += 1
                    return limit.map { n < $0 } ?? true
                }
            }
            return ExitCode.success
        }
        // Every zone: each zone's newest (or oldest) N, merged by time.
        var all: [(time: Int64, zone: String, seq: Int64, json: JSONValue)] = []
        for r in ranges {
            var n = 0
            try r.zone.forEachChange(after: r.after, through: r.through, newestFirst: !reverse) { c in
                guard let j = try item(c, r.zone) else { return true }
                all.append((c.timestamp, r.zone.zoneID.zoneName, c.seq, j))
                n += 1
                return limit.map { n < $0 } ?? true
            }
        }
        all.sort { a, b in
            if a.time != b.time { return reverse ? a.time < b.time : a.time > b.time }
            if !a.zone.utf8.elementsEqual(b.zone.utf8) { return NameKey(a.zone) < NameKey(b.zone) }
            return reverse ? a.seq < b.seq : a.seq > b.seq
        }
        if let l = limit, all.count > l { all.removeLast(all.count - l) }
        inv.emit(["changes": .array(all.map(\.json))], listKey: "changes")
        return ExitCode.success
    }

    // MARK: show

    static let show: Command = Command(["show"], synopsis: "REF [--zone Z]",
        summary: "Show one change: the record before and after, and what changed field by field",
        details: """
        Prints {change, before, after, fields}: the change (as 'ck log' lists it), the record as
        it was before it (null: it did not exist) and after it (null: deleted), and fields:
        {F: {old, new}} for each field it changed. REF is \(referenceHelp); a token, tag or time
        stands for the last change at or before that point.
        """) { inv in
        let raw = try inv.positionals(min: 1, max: 1, what: "reference (a change: ZONE@SEQ, a token, a tag or a time)")[0]
        let ref = try reference(inv, raw)
        let db = try inv.database()
        let zone = try zones(inv, db, refs: [ref], everyZone: false)[0]
        let z = try db.zone(zone)
        let seq = try db.resolve(ref, in: z)
        guard seq > 0 else { throw CloudKitError(.badRequest, "'\(raw)' is the start of zone '\(Names.describe(zone))', before any change", zoneID: z.zoneID) }
        guard let c = try z.change(seq) else {
            throw CloudKitError(.changeTokenExpired, "change \(seq) of zone '\(Names.describe(zone))' is no longer retained (compacted by 'ck gc')", zoneID: z.zoneID)
        }
        let before = try c.prev.flatMap { try z.change($0) }?.record
        inv.emit(["change": c.summary(zoneID: z.zoneID), "before": before?.response(inv.style) ?? .null,
                  "after": c.record?.response(inv.style) ?? .null, "fields": RecordDiff.fieldsJSON(RecordDiff.fieldChanges(before, c.record))])
        return ExitCode.success
    }

    // MARK: diff

    static let diffOptions: [OptionSpec] = [
        OptionSpec("--stat", help: "only counts: {added, changed, deleted}"),
        OptionSpec("--name-only", help: "records and what happened to them, without their fields"),
    ]

    static let diff: Command = Command(["diff"], synopsis: "REF1 [REF2] [--zone Z] [--stat | --name-only]",
        summary: "Show the records added, changed and deleted between two points (default: up to now)",
        options: diffOptions,
        details: """
        Prints {"changes": [...]}: for each record that differs between REF1 and REF2 (default:
        the newest change), {recordName, recordType, zoneID, status: added|changed|deleted,
        fields: {F: {old, new}}}, zone by zone, by record name. A record changed and changed back
        is not listed. Without --zone, and unless a reference names a zone (ZONE@SEQ, a token),
        every zone of the database is compared (a tag or a time is a point in each; a zone made
        after it counts from empty). REF is \(referenceHelp). Reading k changes costs O(k).
        """) { inv in
        let raws = try inv.positionals(min: 1, max: 2, what: "reference")
        if inv.args.has("--stat") && inv.args.has("--name-only") { throw inv.usageError("--stat and --name-only exclude each other") }
        let refs = try raws.map { try reference(inv, $0) }
        let db = try inv.database()
        let names = try zones(inv, db, refs: refs, everyZone: true)
        var items: [JSONValue] = []
        var counts = ["added": 0, "changed": 0, "deleted": 0]
        for n in names {
            let z = try db.zone(n)
            let a = try db.resolve(refs[0], in: z, emptyBeforeHistory: names.count > 1)
            let b = try refs.count > 1 ? db.resolve(refs[1], in: z, emptyBeforeHistory: names.count > 1) : z.history.head()
            for d in try z.diff(from: a, to: b) {
                counts[d.status, default: 0] += 1
                items.append(diffJSON(d, zoneID: z.zoneID, fields: !inv.args.has("--name-only")))
            }
        }
        if inv.args.has("--stat") {
            inv.emit(.object(counts.mapValues { .int(Int64($0)) }))
        } else {
            inv.emit(["changes": .array(items)], listKey: "changes")
        }
        return ExitCode.success
    }

    // MARK: blame

    static let blame: Command = Command(["blame"], synopsis: "RECORD [--zone Z] [--at REF]",
        summary: "For each field of a record, the change that last set it",
        options: [OptionSpec("--at", value: "REF", help: "the record as of this point (\(referenceHelp))")],
        details: """
        Prints {recordName, recordType, recordChangeTag, zoneID, fields: [...]}: for each field,
        {field, type, value, seq, timestamp, userRecordName, deviceID, recordChangeTag} of the
        change that last set it, found by following the record's own history back (its cost is
        that record's history, not the zone's). A field set before the retained history ('ck
        gc') names the oldest retained change, with "boundary": true.
        """) { inv in
        let name = try RecordCommands.recordName(try inv.positionals(min: 1, max: 1, what: "record name")[0])
        let at = try inv.args.value("--at").map { try reference(inv, $0) }
        let db = try inv.database()
        let zone = try zones(inv, db, refs: at.map { [$0] } ?? [], everyZone: false)[0]
        let z = try db.zone(zone)
        let seq = try at.map { try db.resolve($0, in: z) }
        let snap = try z.snapshot()
        let version: HistoryChange?
        if let s = seq {
            version = try z.version(of: name, at: s, in: snap)
        } else {
            version = try z.version(of: name, at: snap.head, in: snap)
        }
        guard let v = version, let rec = v.record, try db.canRead(rec) else {
            throw CloudKitError(.notFound, "record '\(Names.describe(name))' not found\(seq.map { " at \(zone)@\($0)" } ?? "")", recordName: name, zoneID: z.zoneID)
        }
        let fields: [JSONValue] = try z.blame(v).map { f, c, boundary in
            var o: [String: JSONValue] = [
                "field": .string(f), "seq": .int(c.seq), "timestamp": .int(c.timestamp), "userRecordName": .string(c.userRecordName),
                "deviceID": .string(c.deviceID),
            ]
            if let t = c.recordChangeTag { o["recordChangeTag"] = .string(t) }
            if let value = rec.fields[f] {
                o["type"] = .string(value.type.rawValue)
                o["value"] = value.value
            }
            if boundary { o["boundary"] = true }
            return .object(o)
        }
        inv.emit(["recordName": .string(rec.recordName), "recordType": .string(rec.recordType), "recordChangeTag": .string(rec.recordChangeTag),
                  "zoneID": z.zoneID.json, "fields": .array(fields)], listKey: "fields")
        return ExitCode.success
    }
}

/// `--at REF` on `record get`, `record list`, `record query` and `export`: the answer as of a
/// point in the zone's history.
extension HistoryCommands {
    static let atOption = HistoryReferences.atOption

    /// The zone a command reads: --zone, else the zone `--at` names (ZONE@SEQ, a token), else
    /// the default zone.
    static func atZone(_ inv: Invocation, _ db: Database) throws -> String {
        guard let raw = inv.args.value("--at") else { return inv.globals.zone }
        return try zones(inv, db, refs: [try reference(inv, raw)], everyZone: false)[0]
    }

    /// The point `--at` names in zone `z` (nil without --at).
    static func atSeq(_ inv: Invocation, _ db: Database, _ z: ZoneStore, emptyBeforeHistory: Bool = false) throws -> Int64? {
        guard let raw = inv.args.value("--at") else { return nil }
        return try db.resolve(try reference(inv, raw), in: z, emptyBeforeHistory: emptyBeforeHistory)
    }

    /// records/lookup, as of --at when given.
    static func lookup(_ inv: Invocation, _ db: Database, _ names: [String]) throws -> [OperationResult] {
        let zone = try atZone(inv, db)
        guard let seq = try atSeq(inv, db, try db.zone(zone)) else { return try db.lookup(zone: zone, recordNames: names) }
        return try db.lookup(zone: zone, recordNames: names, at: seq)
    }

    /// Every record of a zone the caller may read, as of --at when given.
    static func forEachRecord(_ inv: Invocation, _ db: Database, _ z: ZoneStore, emptyBeforeHistory: Bool = false, _ body: (Record) throws -> Bool) throws {
        try forEachRecord(inv, db, z, emptyBeforeHistory: emptyBeforeHistory, prepare: nil) { r, _ in try body(r) }
    }

    /// The same, with `prepare(record)` worked out on the threads that read the records where
    /// it can be (nil otherwise: the caller works it out).
    static func forEachRecord(_ inv: Invocation, _ db: Database, _ z: ZoneStore, emptyBeforeHistory: Bool = false,
                              prepare: ((Record) -> String)?, _ body: (Record, String?) throws -> Bool) throws {
        guard let seq = try atSeq(inv, db, z, emptyBeforeHistory: emptyBeforeHistory) else {
            try z.snapshot().forEachRecord(prepare: prepare, body)
            return
        }
        try db.forEachRecord(zone: z, at: seq) { try body($0, nil) }
    }
}

extension HistoryCommands {
    /// Every page of `query`, streamed (`--all`).
    static func queryAll(_ inv: Invocation, _ db: Database, zone: String, _ req: QueryRequest, _ body: (QueryResult) throws -> Bool) throws {
        guard inv.args.value("--at") != nil else { return try db.queryAll(zone: zone, req, body) }
        let name = inv.globals.zones.isEmpty && zone.utf8.elementsEqual(inv.globals.zone.utf8) ? try atZone(inv, db) : zone
        let z = try db.zone(name)
        try db.queryAll(zone: name, req, at: try atSeq(inv, db, z)!, body)
    }

    /// records/query, as of --at when given (in the zone --at names, unless --zone or the
    /// request body names one).
    static func query(_ inv: Invocation, _ db: Database, zone: String, _ req: QueryRequest) throws -> QueryResult {
        guard inv.args.value("--at") != nil else { return try db.query(zone: zone, req) }
        let name = inv.globals.zones.isEmpty && zone.utf8.elementsEqual(inv.globals.zone.utf8) ? try atZone(inv, db) : zone
        let z = try db.zone(name)
        return try db.query(zone: name, req, at: try atSeq(inv, db, z)!)
    }
}
