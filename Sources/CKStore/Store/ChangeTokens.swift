import CKModel

/// The change tokens of one database: the scope each names, the secret that signs them, and the
/// checks a client's token passes before a feed (or a history reference) reads after it.
package struct ChangeTokens {
    let db: Database

    package var secret: TokenSecret { TokenSecret(paths: db.paths) }

    /// Which history a zone token names; each part encoded byte by byte, so the key is
    /// injective and `|` never appears inside a part.
    func zoneScopeKey(_ z: ZoneStore) -> String {
        Self.scopeKey([db.address.container, db.address.environment.rawValue, db.scope.rawValue, z.zoneID.ownerRecordName, z.zoneID.zoneName, z.incarnation])
    }

    /// Which history a database token names: this database of its owner.
    var databaseScopeKey: String {
        Self.scopeKey([db.address.container, db.address.environment.rawValue, db.scope.rawValue, db.ownerRecordName])
    }

    /// The parts, each encoded, between `|`s. Joined by a loop: the standard library's
    /// `joined(separator:)` runs unspecialized here, and its first call in a process looked up
    /// its generic witnesses (240,000 instructions, 1 % of a query page).
    private static func scopeKey(_ parts: [String]) -> String {
        var key = ""
        for (n, part) in parts.enumerated() {
            if n > 0 { key += "|" }
            key += PathEncoding.component(part)
        }
        return key
    }

    /// Checks a zone token: BAD_REQUEST when forged or foreign, CHANGE_TOKEN_EXPIRED when older
    /// than the retained history or from an earlier zone of the same name.
    func checkZone(_ raw: String, zone z: ZoneStore, head: Int64) throws -> ChangeToken {
        let t = try ChangeToken.decode(raw, secret: try secret.existing())
        guard t.kind == .zone else { throw CloudKitError(.badRequest, "this is a database change token, not a zone change token", zoneID: z.zoneID) }
        let mine = zoneScopeKey(z)
        if !t.scopeKey.sameBytes(mine) {
            let a = t.scopeKey.split(separator: "|", omittingEmptySubsequences: false), b = mine.split(separator: "|", omittingEmptySubsequences: false)
            if a.count == b.count && Array(a.dropLast()).elementsEqual(Array(b.dropLast()), by: { $0.utf8.elementsEqual($1.utf8) }) {
                throw CloudKitError(.changeTokenExpired, "change token expired: zone '\(Names.describe(z.zoneID.zoneName))' was deleted (or purged) and created again since", zoneID: z.zoneID).with(.refetchFromStart)
            }
            var other = a.count >= 5 ? "zone '\(Names.describe(PathEncoding.decodeSimple(String(a[4])) ?? String(a[4])))' of the \(a[2]) database" : "another zone"
            if a.count >= 5, b.count >= 5, !a[3].utf8.elementsEqual(b[3].utf8) { other = "another user's " + other }
            if a.count >= 5, b.count >= 5, !a[0].utf8.elementsEqual(b[0].utf8) || a[1] != b[1] { other += " of another container or environment" }
            throw CloudKitError(.badRequest, "change token belongs to \(other), not zone '\(Names.describe(z.zoneID.zoneName))' of the \(db.scope.rawValue) database", zoneID: z.zoneID)
        }
        let epoch = try z.history.epoch()
        if max(t.seq, t.origin ?? 0) > head || t.epoch > epoch { throw CloudKitError(.badRequest, "change token is from the future of zone '\(Names.describe(z.zoneID.zoneName))'", zoneID: z.zoneID) }
        if t.epoch < epoch {
            throw CloudKitError(.changeTokenExpired, "change token expired: zone '\(Names.describe(z.zoneID.zoneName))' no longer retains history that old", zoneID: z.zoneID).with(.refetchFromStart)
        }
        // `ck gc` compacted the changes after the token's point (HistoryCompaction). The pages of
        // a fetch from scratch read on through what remains of them, as the first page did —
        // whether the fetch began after the compaction or before it: of what gc drops, a page
        // needs only the deletions (an update comes again at its latest state), so only a
        // dropped deletion after the token's point, of a record an earlier page may have
        // returned, expires it. Any other token from there is expired, as CloudKit's are.
        let kept = try z.history.retainedFrom() - 1
        if t.seq < kept, (t.origin ?? 0) < kept, try t.origin == nil || t.seq < z.history.deletionsDroppedThrough() {
            throw CloudKitError(.changeTokenExpired, "change token expired: zone '\(Names.describe(z.zoneID.zoneName))' no longer retains history that old (its history was compacted)", zoneID: z.zoneID).with(.refetchFromStart)
        }
        return t
    }

    /// Checks a database token: BAD_REQUEST when forged, foreign or a zone token,
    /// CHANGE_TOKEN_EXPIRED when older than the retained history; its seq otherwise.
    func checkDatabase(_ raw: String, head: Int64) throws -> Int64 {
        let t = try ChangeToken.decode(raw, secret: try secret.existing())
        guard t.kind == .database else { throw CloudKitError.badRequest("this is a zone change token, not a database change token") }
        guard t.scopeKey.sameBytes(databaseScopeKey) else {
            throw CloudKitError.badRequest("change token belongs to another database, not the \(db.scope.rawValue) database of this user and container")
        }
        if t.seq > head { throw CloudKitError.badRequest("change token is from the future of this database") }
        if t.epoch < (try db.databaseHistory.epoch()) {
            throw CloudKitError(.changeTokenExpired, "change token expired: the database no longer retains history that old").with(.refetchFromStart)
        }
        return t.seq
    }

    /// The token of zone `z`'s head now, signed (made if need be).
    func head(of z: ZoneStore) throws -> String {
        ChangeToken(kind: .zone, scopeKey: zoneScopeKey(z), seq: try z.history.head(), epoch: try z.history.epoch()).encode(secret: try secret.getOrCreate())
    }

    /// The zone's current token, as `zones/list` returns it: none for a zone without a change
    /// feed, nor before any token was issued (no secret is made for it).
    func current(zone z: ZoneStore) throws -> String? {
        guard db.scope != .public, !z.zoneID.isDefault, !z.incarnation.isEmpty, let secret = try secret.existing() else { return nil }
        return ChangeToken(kind: .zone, scopeKey: zoneScopeKey(z), seq: try z.history.head(), epoch: try z.history.epoch()).encode(secret: secret)
    }
}

extension Database {
    package var tokens: ChangeTokens { ChangeTokens(db: self) }
}
