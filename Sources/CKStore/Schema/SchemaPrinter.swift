import CKModel

/// Prints a schema in `cktool export-schema`'s layout: `DEFINE SCHEMA`, roles, then each
/// record type (in byte order, `Users` last) with the six system fields first and quoted, user
/// fields in byte order with the type column aligned, index options, then GRANTs.
package enum SchemaPrinter {
    package static func print(_ s: Schema) -> String {
        var out = "DEFINE SCHEMA\n"
        for role in s.roles.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            out += "\n    CREATE ROLE \(quote(role));\n"
        }
        let names = s.types.keys.sorted { a, b in
            if (a == "Users") != (b == "Users") { return b == "Users" }
            return a.utf8.lexicographicallyPrecedes(b.utf8)
        }
        for n in names { out += "\n" + recordType(s.types[n]!) }
        return out
    }

    package static func recordType(_ t: RecordTypeSchema) -> String {
        var lines: [String] = []
        let fields = t.systemFieldList + t.userFields
        let names = fields.map { quote($0.name, system: RecordTypeSchema.isSystemField($0.name)) }
        let width = max(names.map(\.count).max() ?? 0, 15) + 1
        for (f, n) in zip(fields, names) {
            lines.append(n + String(repeating: " ", count: width - n.count) + typeAndIndexes(f))
        }
        let systemRoles = ["_creator", "_icloud", "_world"]
        let roles = systemRoles.filter { t.grants[$0] != nil }
            + t.grants.keys.filter { !systemRoles.contains($0) }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for r in roles {
            let perms = RecordTypeSchema.Permission.allCases.filter { t.grants[r]!.contains($0) }
            if perms.isEmpty { continue }
            lines.append("GRANT \(perms.map(\.rawValue).joined(separator: ", ")) TO \(quote(r))")
        }
        return "    RECORD TYPE \(quote(t.name)) (\n" + lines.map { "        " + $0 }.joined(separator: ",\n") + "\n    );\n"
    }

    /// One field as a line of its record type: `"___recordID" REFERENCE QUERYABLE`.
    package static func fieldLine(_ f: FieldSchema) -> String {
        quote(f.name, system: RecordTypeSchema.isSystemField(f.name)) + " " + typeAndIndexes(f)
    }

    static func typeAndIndexes(_ f: FieldSchema) -> String {
        var line = f.type.description
        if f.queryable { line += " QUERYABLE" }
        if f.searchable { line += " SEARCHABLE" }
        if f.sortable { line += " SORTABLE" }
        return line
    }

    /// Quotes system names, names starting with `_`, reserved words and keywords.
    package static func quote(_ n: String, system: Bool = false) -> String {
        let keywords: Set<String> = SchemaParser.reserved.union(["define", "schema", "create", "role", "record", "type", "list", "to", "as", "encrypted"])
        if system || n.hasPrefix("_") || keywords.contains(n.lowercased()) || !n.utf8.allSatisfy(SchemaParser.isWordByte) {
            return "\"" + n + "\""
        }
        return n
    }
}
