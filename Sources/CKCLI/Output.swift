import CKCore

/// Writes command results in the chosen format. JSON is one sorted, pretty document; NDJSON
/// is one compact value per line; a table is for people.
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
        case .table:
            if let k = listKey, let items = doc[k]?.arrayValue {
                io.writeOut(Table.render(items))
                if var o = doc.objectValue {
                    o[k] = nil
                    for (key, v) in o.sorted(by: { $0.key < $1.key }) { io.writeOut("\(key): \(Table.cell(v))\n") }
                }
            } else {
                io.writeOut(Table.render([doc]))
            }
        }
    }

    /// Streams a list of items as `{"<listKey>": [ … ]}` (or NDJSON lines, or table rows)
    /// without holding them all; the JSON bytes equal `emit` of the whole document.
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
        case .table:
            var rows: [JSONValue] = []
            try produce { rows.append($0) }
            io.writeOut(Table.render(rows))
        }
    }
}

/// Aligned columns. Records show name, type, tag, then one column per field.
enum Table {
    static func cell(_ v: JSONValue) -> String {
        switch v {
        case .string(let s): return s
        case .null: return ""
        default: return JSONWriter.compact(v)
        }
    }

    static func render(_ items: [JSONValue]) -> String {
        var columns: [String] = []
        var rows: [[String: String]] = []
        func add(_ c: String) { if !columns.contains(c) { columns.append(c) } }
        for item in items {
            var row: [String: String] = [:]
            guard let o = item.objectValue else { add("value"); rows.append(["value": cell(item)]); continue }
            if o["recordName"] != nil, let fields = o["fields"]?.objectValue {
                for k in ["recordName", "recordType", "recordChangeTag"] { add(k); row[k] = o[k].map(cell) ?? "" }
                for k in fields.keys.sorted() { add(k); row[k] = fields[k]?["value"].map(cell) ?? "" }
            } else {
                for k in o.keys.sorted() { add(k); row[k] = cell(o[k]!) }
            }
            rows.append(row)
        }
        if columns.isEmpty { return "" }
        var widths = columns.map { $0.count }
        for r in rows { for (i, c) in columns.enumerated() { widths[i] = max(widths[i], (r[c] ?? "").count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, s in i == cells.count - 1 ? s : s.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingTrailingSpaces() + "\n"
        }
        var out = line(columns.map { $0.uppercased() })
        for r in rows { out += line(columns.map { r[$0] ?? "" }) }
        return out
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}

import Foundation
