import CKModel
import Dispatch

/// A bulk load into one zone (`ck import`, batch after batch, each its own commit): what it
/// knows without reading the disk while it is the zone's only writer.
///
/// A load that begins on an empty zone (no history, no record or reference files) knows that
/// the zone holds exactly the records it has written, for as long as the zone's head is where
/// its own last batch left it (and the zone is the same incarnation). Then
/// - a batch reads from the disk only the records the load wrote before: a name it never
///   wrote has no record;
/// - the zone's indexes are made at the end from the index entries of the records as they were
///   written, instead of reading every record file again.
/// Once another writer has committed to the zone in between, or the entries could not follow
/// (a record written twice, a type whose indexed fields changed), the load assumes nothing any
/// more: batches read as any write does, and the end builds the indexes from the record files.
package final class BulkLoad {
    package let zoneName: String
    private var started = false
    /// The zone's head after this load's last batch; nil: nothing is assumed.
    private var expectedHead: Int64?
    /// The zone's incarnation when the load began (a zone deleted and made again is another).
    private var incarnation = ""
    /// Each name this load wrote.
    private var written = Set<NameKey>()
    /// Per record type written, the indexed fields its entries were made for.
    private var fields: [NameKey: [String]] = [:]
    private var spills: IndexSpills?
    /// Index lines are made and spilled here, behind the batches (the zone's lock is not held
    /// for them); `feedFailed` is only touched on it.
    private let feeding = DispatchQueue(label: "ck.bulk-load.index-lines")
    private var feedFailed = false

    package init(zone: String) { zoneName = zone }

    /// Whether the load still knows the zone (what the tests ask).
    var knowsZone: Bool { expectedHead != nil }

    /// Before a batch, with the zone's lock held and any interrupted commit finished: the names
    /// known to have no record, or nil when nothing is assumed.
    func knownAbsent(in z: ZoneStore) throws -> ((NameKey) -> Bool)? {
        let head = try z.history.head()
        if !started {
            started = true
            if head == 0, try !FileSystem.exists(z.recordsDirectory), try !FileSystem.exists(z.refsDirectory) {
                expectedHead = 0
                incarnation = z.incarnation
            }
        } else if expectedHead != head || !z.incarnation.sameBytes(incarnation) {
            forget()
        }
        guard expectedHead != nil else { return nil }
        // Not a copy of the set: `committed` adds to it in place once the batch is done.
        return { [unowned self] in !self.written.contains($0) }
    }

    /// After a batch committed through `head`, still under the zone's lock: its records'
    /// index entries, under the schema as the commit left it.
    package func committed(_ tx: Transaction, through head: Int64, schema: Schema?, index: ZoneIndex) {
        guard expectedHead != nil else { return }
        guard let schema, tx.zone.incarnation.sameBytes(incarnation) else { return forget() }
        expectedHead = head
        var batch: [(record: Record, fields: [String])] = []
        for (k, record) in tx.records {
            // A delete, or a second version of a record: its earlier entries would stay.
            guard let r = record, written.insert(k).inserted else { return forget() }
            let tk = NameKey(r.recordType)
            let f = ZoneIndex.indexedFields(schema.types[r.recordType])
            if let had = fields[tk], had != f { return forget() }
            fields[tk] = f
            batch.append((r, f))
        }
        if spills == nil {
            do { spills = try IndexSpills(in: try Directory.open(index.directory, create: true)!) } catch { return forget() }
        }
        let spills = self.spills!
        feeding.async { [self, batch] in
            guard !feedFailed else { return }
            do {
                for (r, f) in batch {
                    try spills.add(type: r.recordType, field: nil, IndexKey.hex(r.recordName))
                    for field in f { try spills.add(type: r.recordType, field: field, IndexKey.line(key: IndexKey.key(of: r, field: field), name: r.recordName)) }
                }
            } catch {
                feedFailed = true
            }
        }
    }

    /// At the end, with the zone's lock held: writes the zone's indexes from the entries if
    /// they describe the zone as it is at `head` under `schema`. False when they cannot.
    func writeIndexes(_ index: ZoneIndex, schema: Schema, head: Int64) throws -> Bool {
        guard expectedHead == head, index.zone.incarnation.sameBytes(incarnation), let spills, feeding.sync(execute: { !feedFailed }) else { return false }
        for (tk, f) in fields where ZoneIndex.indexedFields(schema.types[tk.string]) != f { return false }
        try index.writeRuns(from: spills, types: Set(fields.keys), schema: schema, head: head)
        return true
    }

    private func forget() {
        expectedHead = nil
        written = []
        fields = [:]
        discard()
    }

    /// Removes the entries' temporary files.
    package func discard() {
        feeding.sync {}
        spills?.discard()
        spills = nil
    }
}
