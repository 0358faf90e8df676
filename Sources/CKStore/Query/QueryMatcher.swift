import CKJSON
import CKModel
import Foundation

/// CloudKit's matching rules for one filter: string equality ignores case (record names and
/// references are exact, byte for byte), BEGINS_WITH is
/// case-sensitive, token searches ignore case, diacritics and stop words, NEAR is a circle.
enum QueryMatcher {
    package static func fieldValue(_ r: Record, _ name: String) -> RecordField? {
        if let s = SystemField.named(name) { return s.value(of: r) }
        return r.fields[name]
    }

    package static func matches(_ r: Record, _ f: QueryFilter) -> Bool {
        guard let field = fieldValue(r, f.fieldName) else { return false }
        let rhs = f.value.value
        let rhsList = rhs.arrayValue ?? [rhs]
        let members = field.type.isList ? (field.value.arrayValue ?? []) : [field.value]
        switch f.comparator {
        case .equals: return !field.type.isList && equal(field.value, rhs)
        case .notEquals: return !field.type.isList && !equal(field.value, rhs)
        case .lessThan: return order(field, rhs).map { $0 < 0 } ?? false
        case .lessThanOrEquals: return order(field, rhs).map { $0 <= 0 } ?? false
        case .greaterThan: return order(field, rhs).map { $0 > 0 } ?? false
        case .greaterThanOrEquals: return order(field, rhs).map { $0 >= 0 } ?? false
        case .near:
            guard field.type.base == .location, let d = f.distance else { return false }
            return members.contains { distance($0, rhs).map { $0 <= d } ?? false }
        case .containsAllTokens, .containsAnyTokens:
            let want = tokens(rhs.stringValue ?? "")
            var have = Set<String>()
            for m in members { if let s = m.stringValue { have.formUnion(tokens(s)) } }
            if want.isEmpty { return false }
            return f.comparator == .containsAllTokens ? want.isSubset(of: have) : !want.isDisjoint(with: have)
        case .in: return !field.type.isList && rhsList.contains { equal(field.value, $0) }
        case .notIn: return !field.type.isList && !rhsList.contains { equal(field.value, $0) }
        case .listContains: return members.contains { equal($0, rhs) }
        case .notListContains: return !members.contains { equal($0, rhs) }
        case .listContainsAny: return rhsList.contains { v in members.contains { equal($0, v) } }
        case .notListContainsAny: return !rhsList.contains { v in members.contains { equal($0, v) } }
        case .listContainsAll: return rhsList.allSatisfy { v in members.contains { equal($0, v) } }
        case .notListContainsAll: return !rhsList.allSatisfy { v in members.contains { equal($0, v) } }
        case .beginsWith: return !field.type.isList && begins(field.value, rhs)
        case .notBeginsWith: return !field.type.isList && !begins(field.value, rhs)
        case .listMemberBeginsWith: return members.contains { begins($0, rhs) }
        case .notListMemberBeginsWith: return !members.contains { begins($0, rhs) }
        }
    }

    /// A comparable scalar: numbers, strings, reference names.
    package enum Scalar { case number(Double), text(String) }

    package static func scalar(_ v: JSONValue) -> Scalar? {
        switch v {
        case .int(let i): return .number(Double(i))
        case .double(let d): return .number(d)
        case .bool(let b): return .number(b ? 1 : 0)
        case .string(let s): return .text(s)
        case .object(let o):
            if let n = o["recordName"]?.stringValue { return .text(n) }
            if let c = o["fileChecksum"]?.stringValue { return .text(c) }
            return nil
        default: return nil
        }
    }

    package static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        if a["latitude"] != nil || b["latitude"] != nil { return a == b }
        // Record names (references, recordName) are compared by their bytes, as everywhere.
        if let x = a["recordName"]?.stringValue ?? (b["recordName"] != nil ? a.stringValue : nil),
           let y = b["recordName"]?.stringValue ?? b.stringValue {
            return x.utf8.elementsEqual(y.utf8)
        }
        switch (scalar(a), scalar(b)) {
        case (.number(let x)?, .number(let y)?): return x == y
        case (.text(let x)?, .text(let y)?): return x.compare(y, options: [.caseInsensitive]) == .orderedSame
        default: return false
        }
    }

    package static func compare(_ a: JSONValue, _ b: JSONValue) -> Int? {
        switch (scalar(a), scalar(b)) {
        case (.number(let x)?, .number(let y)?): return x < y ? -1 : (x > y ? 1 : 0)
        case (.text(let x)?, .text(let y)?):
            // By code point, which is UTF-8's byte order: compared on the bytes, nothing copied.
            return x.byteOrder(y)
        default: return nil
        }
    }

    private static func order(_ field: RecordField, _ rhs: JSONValue) -> Int? {
        guard !field.type.isList, field.type.base != .location else { return nil }
        return compare(field.value, rhs)
    }

    private static func begins(_ a: JSONValue, _ b: JSONValue) -> Bool {
        guard let s = a.stringValue, let p = b.stringValue else { return false }
        return s.hasPrefix(p)
    }

    static let stopWords: Set<String> = [
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of",
        "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
    ]

    package static func tokens(_ s: String) -> Set<String> {
        let folded = s.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        var out = Set<String>()
        var cur = ""
        for ch in folded {
            if ch.isLetter || ch.isNumber { cur.append(ch) } else {
                if !cur.isEmpty && !stopWords.contains(cur) { out.insert(cur) }
                cur = ""
            }
        }
        if !cur.isEmpty && !stopWords.contains(cur) { out.insert(cur) }
        return out
    }

    /// Great-circle distance in meters.
    package static func distance(_ a: JSONValue, _ b: JSONValue) -> Double? {
        guard let la1 = a["latitude"]?.doubleValue, let lo1 = a["longitude"]?.doubleValue,
              let la2 = b["latitude"]?.doubleValue, let lo2 = b["longitude"]?.doubleValue else { return nil }
        let r = 6_371_000.0, p = Double.pi / 180
        let dLat = (la2 - la1) * p, dLon = (lo2 - lo1) * p
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(la1 * p) * cos(la2 * p) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * r * asin(min(1, sqrt(h)))
    }
}
