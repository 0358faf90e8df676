import CKCore

/// Writes command results in the chosen format. JSON is one sorted, pretty document; NDJSON
/// is one compact value per line; table, CSV and TSV are flat rows (TabularRows) for people
/// and spreadsheets.
struct Printer {
    let io: IO
    let format: OutputFormat

    /// A document whose list under `listKey` (if any) is what NDJSON and tables show, one item a line.
    func emit(_ doc: JSONValue, listKey: String? = nil) {
        switch format {
        case .json: io.writeOut(JSONWriter.pretty(doc))
        case .ndjson:
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

    /// Streams a list of items as `{"<listKey>": [ … ]}` (or NDJSON lines) without holding
    /// them all; the JSON bytes equal `emit` of the whole document. Table, CSV and TSV hold
    /// the rows, as text, until the end: the header needs every column.
    func stream(listKey: String, _ produce: ((JSONValue) -> Void) throws -> Void) rethrows {
        switch format {
        case .json:
            var first = true
            try produce { item in
                var s = first ? "{\n  \"\(listKey)\": [\n    " : ",\n    "
                first = false
                JSONWriter.write(item, into: &s, indent: 4, pretty: true)
                io.writeOut(s)
            }
            io.writeOut(first ? "{\n  \"\(listKey)\": []\n}\n" : "\n  ]\n}\n")
        case .ndjson:
            try produce { io.writeOut(JSONWriter.line($0)) }
        case .table, .csv, .tsv:
            // Every column must be known before the header: the rows are held (as text).
            var rows = TabularRows(time: LocalTime(environment: io.environment))
            try produce { rows.add($0) }
            write(rows, trailer: [])
        }
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
