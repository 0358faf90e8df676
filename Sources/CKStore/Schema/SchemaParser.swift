import CKModel

/// Parses the CloudKit schema language (`.ckdb`, reference §8): comments (`//`, `--`,
/// `/* */`), quoted identifiers, `CREATE ROLE`, `RECORD TYPE` with typed fields, index options
/// and GRANTs. Errors name the line and column.
struct SchemaParser {
    package struct Token: Equatable {
        package enum Kind: Equatable { case word, quoted, symbol, end }
        package var kind: Kind
        package var text: String
        package var line: Int
        package var column: Int
    }

    /// Words that must be quoted to name a field.
    package static let reserved: Set<String> = ["grant", "preferred", "queryable", "sortable", "searchable"]

    private var tokens: [Token] = []
    private var pos = 0

    package static func parse(_ text: String) throws -> Schema {
        var p = SchemaParser()
        p.tokens = try tokenize(Array(text.utf8))
        return try p.schema()
    }

    package static func fail(_ line: Int, _ column: Int, _ message: String) -> CloudKitError {
        CloudKitError.badRequest("schema \(line):\(column): \(message)")
    }

    static func tokenize(_ b: [UInt8]) throws -> [Token] {
        var out: [Token] = []
        var i = 0, line = 1, col = 1
        func advance(_ n: Int = 1) {
            for _ in 0..<n where i < b.count {
                if b[i] == 0x0A { line += 1; col = 1 } else if (b[i] & 0xC0) != 0x80 { col += 1 }
                i += 1
            }
        }
        while i < b.count {
            let c = b[i]
            if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { advance(); continue }
            if c == UInt8(ascii: "/") && i + 1 < b.count && b[i + 1] == UInt8(ascii: "/")
                || c == UInt8(ascii: "-") && i + 1 < b.count && b[i + 1] == UInt8(ascii: "-") {
                while i < b.count && b[i] != 0x0A { advance() }
                continue
            }
            if c == UInt8(ascii: "/") && i + 1 < b.count && b[i + 1] == UInt8(ascii: "*") {
                let (l, cc) = (line, col)
                advance(2)
                while i < b.count && !(b[i] == UInt8(ascii: "*") && i + 1 < b.count && b[i + 1] == UInt8(ascii: "/")) { advance() }
                if i >= b.count { throw fail(l, cc, "comment is not closed with */") }
                advance(2)
                continue
            }
            let (l, cc) = (line, col)
            if c == UInt8(ascii: "\"") {
                advance()
                var s = [UInt8]()
                while i < b.count && b[i] != UInt8(ascii: "\"") {
                    if b[i] == 0x0A { throw fail(l, cc, "quoted identifier is not closed") }
                    s.append(b[i]); advance()
                }
                if i >= b.count { throw fail(l, cc, "quoted identifier is not closed") }
                advance()
                guard let str = String(validating: s, as: UTF8.self), !str.isEmpty else { throw fail(l, cc, "empty or invalid quoted identifier") }
                out.append(Token(kind: .quoted, text: str, line: l, column: cc))
                continue
            }
            if isWordByte(c) {
                var s = [UInt8]()
                while i < b.count && isWordByte(b[i]) { s.append(b[i]); advance() }
                out.append(Token(kind: .word, text: String(decoding: s, as: UTF8.self), line: l, column: cc))
                continue
            }
            if "(),;<>".utf8.contains(c) {
                out.append(Token(kind: .symbol, text: String(UnicodeScalar(c)), line: l, column: cc))
                advance()
                continue
            }
            throw fail(l, cc, "unexpected character '\(c < 0x80 && c >= 0x20 ? String(UnicodeScalar(c)) : "\\u{\(String(c, radix: 16))}")'")
        }
        out.append(Token(kind: .end, text: "end of file", line: line, column: col))
        return out
    }

    static func isWordByte(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x5F
    }

    // MARK: grammar

    private var current: Token { tokens[pos] }

    private func error(_ message: String, at t: Token? = nil) -> CloudKitError {
        let t = t ?? current
        return SchemaParser.fail(t.line, t.column, message)
    }

    private func describe(_ t: Token) -> String {
        switch t.kind {
        case .end: return "end of file"
        case .quoted: return "\"\(t.text)\""
        default: return "'\(t.text)'"
        }
    }

    private func isKeyword(_ k: String, _ t: Token? = nil) -> Bool {
        let t = t ?? current
        return t.kind == .word && t.text.uppercased() == k
    }

    private mutating func expectKeyword(_ k: String) throws {
        guard isKeyword(k) else { throw error("expected \(k), found \(describe(current))") }
        pos += 1
    }

    private mutating func expectSymbol(_ s: String, context: String = "") throws {
        guard current.kind == .symbol && current.text == s else {
            throw error("expected '\(s)'\(context.isEmpty ? "" : " " + context), found \(describe(current))")
        }
        pos += 1
    }

    private func isSymbol(_ s: String) -> Bool { current.kind == .symbol && current.text == s }

    /// An identifier: a word (not a reserved word) or a quoted name.
    private mutating func identifier(_ what: String) throws -> (String, quoted: Bool, Token) {
        let t = current
        switch t.kind {
        case .quoted: pos += 1; return (t.text, true, t)
        case .word:
            if SchemaParser.reserved.contains(t.text.lowercased()) {
                throw error("'\(t.text)' is a reserved word; quote it (\"\(t.text)\") to use it as \(what)")
            }
            guard let f = t.text.utf8.first, !(f >= 0x30 && f <= 0x39) else { throw error("\(what) cannot start with a digit: '\(t.text)'") }
            pos += 1
            return (t.text, false, t)
        default: throw error("expected \(what), found \(describe(t))")
        }
    }

    private mutating func schema() throws -> Schema {
        try expectKeyword("DEFINE")
        try expectKeyword("SCHEMA")
        var s = Schema()
        var sawUsers = false
        while current.kind != .end {
            if isKeyword("CREATE") {
                pos += 1
                try expectKeyword("ROLE")
                let (name, _, t) = try identifier("a role name")
                if name.hasPrefix("_") { throw error("role names starting with '_' are reserved for the system roles", at: t) }
                if s.roles.contains(name) { throw error("role '\(name)' is defined twice", at: t) }
                s.roles.insert(name)
            } else if isKeyword("RECORD") {
                pos += 1
                try expectKeyword("TYPE")
                let (name, _, t) = try identifier("a record type name")
                do { try Names.validateRecordType(name) } catch let e as CloudKitError { throw error(e.reason, at: t) }
                if s.types[name] != nil { throw error("record type '\(name)' is defined twice", at: t) }
                var type = try recordType(name)
                if name == "Users" { sawUsers = true; if type.fields["roles"] == nil { type.fields["roles"] = RecordTypeSchema.users.fields["roles"] } }
                s.types[name] = type
            } else {
                throw error("expected CREATE ROLE or RECORD TYPE, found \(describe(current))")
            }
            if current.kind == .end { break }
            try expectSymbol(";", context: "after the statement")
        }
        if !sawUsers { s.types["Users"] = .users }
        // Grants may name only roles the schema creates (or the system roles).
        for t in s.types.values {
            for role in t.grants.keys where !role.hasPrefix("_") && !s.roles.contains(role) {
                throw CloudKitError.badRequest("schema: record type '\(t.name)' grants to role '\(role)', which no CREATE ROLE defines")
            }
        }
        return s
    }

    private mutating func recordType(_ name: String) throws -> RecordTypeSchema {
        try expectSymbol("(", context: "after RECORD TYPE \(name)")
        var fields: [String: FieldSchema] = [:]
        var grants: [String: Set<RecordTypeSchema.Permission>] = [:]
        if isSymbol(")") { pos += 1; return RecordTypeSchema(name: name, fields: fields, grants: grants) }
        while true {
            if isKeyword("GRANT") {
                pos += 1
                var perms: [RecordTypeSchema.Permission] = []
                repeat {
                    if !perms.isEmpty { pos += 1 }
                    guard current.kind == .word, let p = RecordTypeSchema.Permission(rawValue: current.text.uppercased()) else {
                        throw error("expected READ, CREATE or WRITE, found \(describe(current))")
                    }
                    perms.append(p)
                    pos += 1
                } while isSymbol(",") && tokens[pos + 1].kind == .word && RecordTypeSchema.Permission(rawValue: tokens[pos + 1].text.uppercased()) != nil
                try expectKeyword("TO")
                let (role, _, _) = try identifier("a role name")
                if role.hasPrefix("_") && !["_creator", "_icloud", "_world"].contains(role) {
                    throw error("unknown system role '\(role)'; the system roles are _creator, _icloud and _world")
                }
                grants[role, default: []].formUnion(perms)
            } else {
                let (fname, quoted, t) = try identifier("a field name")
                if RecordTypeSchema.isSystemField(fname) {
                    guard quoted else { throw error("system field \(fname) must be quoted: \"\(fname)\"", at: t) }
                    guard RecordTypeSchema.systemFields.contains(where: { $0.0 == fname }) else { throw error("unknown system field \"\(fname)\"", at: t) }
                } else {
                    do { try Names.validateFieldName(fname) } catch let e as CloudKitError { throw error(e.reason, at: t) }
                }
                if fields[fname] != nil { throw error("field '\(fname)' is defined twice in record type '\(name)'", at: t) }
                let typeToken = current
                let type = try dataType()
                if let sys = RecordTypeSchema.systemFields.first(where: { $0.0 == fname }), sys.1 != type {
                    throw error("system field \"\(fname)\" is \(sys.1), not \(type)", at: typeToken)
                }
                var f = FieldSchema(name: fname, type: type)
                while current.kind == .word, ["QUERYABLE", "SORTABLE", "SEARCHABLE"].contains(current.text.uppercased()) {
                    switch current.text.uppercased() {
                    case "QUERYABLE": f.queryable = true
                    case "SORTABLE": f.sortable = true
                    default:
                        guard type.primitive == .string else { throw error("only STRING fields can be SEARCHABLE; '\(fname)' is \(type)") }
                        f.searchable = true
                    }
                    pos += 1
                }
                fields[fname] = f
            }
            if isSymbol(",") { pos += 1; continue }
            if isSymbol(")") { pos += 1; break }
            throw error("expected ',' or ')' in record type '\(name)', found \(describe(current))")
        }
        return RecordTypeSchema(name: name, fields: fields, grants: grants)
    }

    private mutating func primitive() throws -> SchemaType {
        var encrypted = false
        if isKeyword("ENCRYPTED") { encrypted = true; pos += 1 }
        let t = current
        guard t.kind == .word, let p = SchemaType.Primitive(rawValue: t.text.uppercased()) else {
            throw error("unknown type \(describe(t)); expected one of ASSET, BYTES, DOUBLE, INT64, LOCATION, NUMBER, REFERENCE, STRING, TIMESTAMP or LIST<…>")
        }
        pos += 1
        var type = SchemaType(p, encrypted: encrypted)
        if encrypted && [.asset, .reference, .number].contains(p) { throw error("\(p.rawValue) cannot be ENCRYPTED", at: t) }
        if p == .number && isKeyword("PREFERRED") {
            pos += 1
            try expectKeyword("AS")
            guard isKeyword("INT64") || isKeyword("DOUBLE") else { throw error("NUMBER PREFERRED AS takes INT64 or DOUBLE, found \(describe(current))") }
            type.preferred = SchemaType.Primitive(rawValue: current.text.uppercased())
            pos += 1
        }
        return type
    }

    private mutating func dataType() throws -> SchemaType {
        if isKeyword("LIST") {
            pos += 1
            try expectSymbol("<", context: "after LIST")
            var t = try primitive()
            try expectSymbol(">", context: "to close LIST<")
            t.isList = true
            return t
        }
        return try primitive()
    }
}
