import CKCore

/// `ck restore` and `ck revert`: old versions written back as new changes, through records/modify
/// like any client's save, so clients following `zone changes` see ordinary updates and every
/// token stays valid (Docs/history.md).
enum RestoreCommands {
    static var all: [Command] { [restore, revert] }

    static let dryRun = OptionSpec("--dry-run", help: "print what would change, change nothing")

    /// Prints the plan, and with the results of writing it each record's new change tag (or its
    /// error); exit 9 when any record failed.
    static func finish(_ inv: Invocation, _ db: Database, zone: String, plan: [RecordDiff]) throws -> Int32 {
        let zoneID = db.zoneID(zone)
        let plan = plan.filter { !$0.isNoChange }
        if inv.args.has("--dry-run") || plan.isEmpty {
            inv.emit(["changes": .array(plan.map { HistoryCommands.diffJSON($0, zoneID: zoneID, fields: true) })], listKey: "changes")
            return ExitCode.success
        }
        let results = try db.apply(plan, zone: zone)
        if results.count == 1, let e = results[0].error { throw e }
        let items: [JSONValue] = zip(plan, results).map { d, r in
            var o = HistoryCommands.diffJSON(d, zoneID: zoneID, fields: true).objectValue ?? [:]
            switch r {
            case .saved(let rec): o["recordChangeTag"] = .string(rec.recordChangeTag)
            case .deleted: break
            case .failed(let e): o["error"] = e.envelope(style: inv.style)
            }
            return .object(o)
        }
        inv.emit(["changes": .array(items)], listKey: "changes")
        return inv.batchExit(results, noun: "records")
    }

    static let restore: Command = Command(["restore"], synopsis: "REF [--zone Z] [RECORD…] [--dry-run]",
        summary: "Write the records of a zone (or the ones named) back as they were at REF, as new changes",
        endpoint: "records/modify", options: [dryRun],
        details: """
        Every record of the zone that differs from its version at REF (or only the RECORDs
        named) is written back: saved as it was (replace), made again if it was deleted since,
        deleted if it did not exist then. These are new changes, made by this user on this
        device: history is never rewritten, tokens stay valid, and clients following 'zone
        changes' see ordinary updates. Each write carries the record's current change tag, so a
        record changed meanwhile is a CONFLICT, not overwritten; in a custom zone the writes are
        one atomic request (per 400). Prints {"changes": [...]} as 'ck diff' does — from now to
        the restored state — with each record's new recordChangeTag. --dry-run only prints.
        REF is \(HistoryCommands.referenceHelp).
        """) { inv in
        let pos = try inv.positionals(min: 1, what: "reference")
        let ref = try HistoryCommands.reference(inv, pos[0])
        let names = try pos.dropFirst().map(RecordCommands.recordName)
        let db = try inv.database()
        let zone = try HistoryCommands.zones(inv, db, refs: [ref], everyZone: false)[0]
        let seq = try db.resolve(ref, in: try db.zone(zone))
        let plan = try db.restorePlan(zone: zone, to: seq, recordNames: names.isEmpty ? nil : names)
        return try finish(inv, db, zone: zone, plan: plan)
    }

    static let revert: Command = Command(["revert"], synopsis: "REF [--zone Z] [--dry-run]",
        summary: "Undo one change by writing its inverse as a new change (like git revert)",
        endpoint: "records/modify", options: [dryRun],
        details: """
        REF names one change (ZONE@SEQ; a token, tag or time stands for the last change at or
        before it). Undoing a save of new fields sets those fields back (the record's other
        fields, and later changes to other fields, stay); undoing a creation deletes the record;
        undoing a deletion makes it again. When a later change touched what it changed (the
        same field, or the record was deleted or made again), it is a CONFLICT (exit 4): use
        'ck restore' to write a whole version back. Prints {"changes": [...]} as 'ck restore'.
        """) { inv in
        let raw = try inv.positionals(min: 1, max: 1, what: "reference (a change: ZONE@SEQ)")[0]
        let ref = try HistoryCommands.reference(inv, raw)
        let db = try inv.database()
        let zone = try HistoryCommands.zones(inv, db, refs: [ref], everyZone: false)[0]
        let z = try db.zone(zone)
        let seq = try db.resolve(ref, in: z)
        guard seq > 0 else { throw CloudKitError(.badRequest, "'\(raw)' is the start of zone '\(Names.describe(zone))', before any change: nothing to revert", zoneID: z.zoneID) }
        return try finish(inv, db, zone: zone, plan: [try db.revertPlan(zone: zone, change: seq)])
    }
}
