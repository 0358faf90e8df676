import CKCore
import CKJSON
import CKModel

/// Writes command results in the chosen format. JSON is one sorted, pretty document; NDJSON
/// is one compact value per line; table, CSV and TSV are flat rows (TabularRows) for people
/// and spreadsheets.
struct Printer {
    let io: IO
    let format: OutputFormat
    /// How much of a long JSON document is built before it is handed on to stdout.
    static let chunk = 1 << 16

    /// A document whose list under `listKey` (if any) is what NDJSON and tables show, one item a line.
    func emit(_ doc: JSONValue, listKey: String? = nil) {
        switch format {
        case .json: io.writeOut(JSONWriter.pretty(doc))
        case .ndjson, .aps:
            if let k = listKey, var o = doc.objectValue, let items = o[k]?.arrayValue {
                for item in items { io.writeOut(JSONWriter.line(item)) }
                o[k] = nil
                if !o.isEmpty { io.writeOut(JSONWriter.line(.object(o))) }
            } else {
                io.writeOut(JSONWriter.line(doc))
            }
        case .table, .csv, .tsv:
            var rows = TabularRows(time: LocalTime(environment: io.environment))
            var trailer: [(String, String)] = []
            if let k = listKey, var o = doc.objectValue, let items = o[k]?.arrayValue {
                for item in items {
                    // A changes/zone entry: its records are the rows; its token closes it.
                    if var entry = item.objectValue, let records = entry["records"]?.arrayValue {
                        records.forEach { rows.add($0) }
                        entry["records"] = nil
                        let zone = entry["zoneID"]?["zoneName"]?.stringValue
                        entry["zoneID"] = nil
                        for (path, v) in rows.flatten(.object(entry), prefix: "").sorted(by: Self.byPath) {
                            trailer.append((zone.map { "\(path) (\($0))" } ?? path, rows.cell(v, key: path)))
                        }
                    } else {
                        rows.add(item)
                    }
                }
                o[k] = nil
                for (path, v) in rows.flatten(.object(o), prefix: "").sorted(by: Self.byPath) { trailer.append((path, rows.cell(v, key: path))) }
            } else {
                rows.add(doc)
            }
            write(rows, trailer: trailer)
        }
    }

    /// A document of `others` and a list under `listKey` whose items encode themselves (record
    /// responses): the same bytes as `emit` of the whole document, without its tree.
    func emitList(_ items: [any JSONEncodable], listKey: String, others: [String: JSONValue] = [:]) {
        switch format {
        case .json:
            // Handed on a chunk at a time: one small buffer, reused, instead of the whole
            // document built and then copied on its way out.
            let chunk = Printer.chunk
            var out: [UInt8] = []
            out.reserveCapacity(chunk + 4096)
            var o = JSONObjectEmitter(indent: 0, pretty: true)
            for k in (Array(others.keys) + [listKey]).sorted(by: { $0.byteOrder($1) < 0 }) {
                o.key(k, into: &out)
                guard k == listKey else { JSONWriter.emit(others[k]!, into: &out, indent: 2, pretty: true); continue }
                if items.isEmpty { out.append(contentsOf: "[]".utf8); continue }
                out.append(0x5B)
                for (n, item) in items.enumerated() {
                    if n > 0 { out.append(0x2C) }
                    JSONWriter.newline(4, into: &out)
                    item.encodeJSON(into: &out, indent: 4, pretty: true)
                    if out.count >= chunk {
                        io.writeOutBytes(out)
                        out.removeAll(keepingCapacity: true)
                    }
                }
                JSONWriter.newline(2, into: &out)
                out.append(0x5D)
            }
            o.close(into: &out)
            out.append(0x0A)
            io.writeOutBytes(out)
        case .ndjson, .aps:
            for item in items { io.writeOut(JSONWriter.line(item)) }
            if !others.isEmpty { io.writeOut(JSONWriter.line(JSONValue.object(others))) }
        case .table, .csv, .tsv:
            var doc = others
            doc[listKey] = .array(items.map(\.jsonValue))
            emit(.object(doc), listKey: listKey)
        }
    }

    /// Streams a list of items as `{"<listKey>": [ … ]}` (or NDJSON lines) without holding
    /// them all; the JSON bytes equal `emit` of the whole document. Table, CSV and TSV hold
    /// the rows, as text, until the end: the header needs every column.
    func stream(listKey: String, _ produce: ((JSONValue) -> Void) throws -> Void) rethrows {
        try streamBatches(listKey: listKey) { batch in
            try withoutActuallyEscaping(batch) { batch in try produce { item in batch(1) { _ in item } } }
        }
    }

    /// `stream` fed a batch at a time: `batch(count, item)` adds items 0..<count, made by
    /// `item(i)`. For JSON and NDJSON the items of a large batch are made and encoded on every
    /// core (`item` must be safe to call from several threads), then written in order.
    func streamBatches(listKey: String, _ produce: (_ batch: (Int, (Int) -> any JSONEncodable) -> Void) throws -> Void) rethrows {
        switch format {
        case .json:
            var first = true
            try produce { count, item in
                let texts = Printer.encode(count) { i in
                    var bytes: [UInt8] = []
                    bytes.reserveCapacity(1024)
                    item(i).encodeJSON(into: &bytes, indent: 4, pretty: true)
                    return String(decoding: bytes, as: UTF8.self)
                }
                for t in texts {
                    io.writeOut((first ? "{\n  \"\(listKey)\": [\n    " : ",\n    ") + t)
                    first = false
                }
            }
            io.writeOut(first ? "{\n  \"\(listKey)\": []\n}\n" : "\n  ]\n}\n")
        case .ndjson, .aps:
            try produce { count, item in Printer.encode(count) { JSONWriter.line(item($0)) }.forEach(io.writeOut) }
        case .table, .csv, .tsv:
            // Every column must be known before the header: the rows are held (as text).
            var rows = TabularRows(time: LocalTime(environment: io.environment))
            try produce { count, item in for i in 0..<count { rows.add(item(i).jsonValue) } }
            write(rows, trailer: [])
        }
    }

    /// `encode(0..<count)`, on every core when there are enough to be worth it.
    private static func encode(_ count: Int, _ encode: (Int) -> String) -> [String] {
        Parallel.map(count, chunk: 64, parallelFrom: 128, encode)
    }

    private static func byPath(_ a: (String, JSONValue), _ b: (String, JSONValue)) -> Bool {
        a.0.utf8.lexicographicallyPrecedes(b.0.utf8)
    }

    /// The rows, then the rest of the document (each zone's in turn): in a table as `key: value` lines after the
    /// rows; in CSV and TSV on stderr (`ck: key: value`), so stdout stays one clean sheet.
    private func write(_ rows: TabularRows, trailer: [(String, String)]) {
        switch format {
        case .csv:
            io.writeOut(TabularText.csv(rows.columns, rows.rows))
            for (k, v) in trailer { io.writeErr("ck: \(k): \(TabularText.escaped(v, forTerminal: true))\n") }
        case .tsv:
            io.writeOut(TabularText.tsv(rows.columns, rows.rows))
            for (k, v) in trailer { io.writeErr("ck: \(k): \(TabularText.escaped(v, forTerminal: true))\n") }
        default:
            var out = TabularText.table(rows.columns, rows.rows)
            for (k, v) in trailer { out += "\(k): \(TabularText.escaped(v, forTerminal: true))\n" }
            io.writeOut(out)
        }
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}
