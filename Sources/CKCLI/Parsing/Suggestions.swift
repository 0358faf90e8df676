/// "Did you mean …": the nearest known words to a mistyped one, like git's help.autocorrect
/// list (edit distance, with a prefix counting as close).
enum Suggestions {
    /// cktool's commands (reference §7.2) and what does their work in ck; "" for the token and
    /// team commands, which ck has no need of.
    static let cktool: [String: String] = [
        "query-records": "ck record query", "create-record": "ck record save", "delete-record": "ck record delete",
        "delete-records": "ck record delete", "export-schema": "ck schema export", "import-schema": "ck schema import",
        "validate-schema": "ck schema import --validate", "reset-schema": "ck schema reset",
        "save-token": "", "remove-token": "", "get-teams": "",
    ]

    /// The candidates closest to `word`, best first; empty when nothing is close enough.
    static func nearest(_ word: String, among candidates: [String]) -> [String] {
        let w = Array(word.lowercased())
        var scored: [(String, Int)] = []
        for c in Set(candidates) {
            let lc = c.lowercased()
            let d: Int
            if lc.hasPrefix(word.lowercased()) && !word.isEmpty { d = 0 } else { d = distance(w, Array(lc)) }
            // Allow about one edit in three characters, at least one.
            if d <= max(1, min(3, w.count / 3)) { scored.append((c, d)) }
        }
        return scored.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }.map(\.0)
    }

    /// ", did you mean 'a' or 'b'?" — or "" when there is nothing to suggest.
    static func hint(_ word: String, among candidates: [String], quote: (String) -> String = { "'\($0)'" }) -> String {
        let n = nearest(word, among: candidates).prefix(3).map(quote)
        switch n.count {
        case 0: return ""
        case 1: return "; did you mean \(n[0])?"
        default: return "; did you mean \(n.dropLast().joined(separator: ", ")) or \(n.last!)?"
        }
    }

    /// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prev2 = [Int](repeating: 0, count: b.count + 1)
        var prev = Array(0...b.count)
        var cur = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            cur[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { cur[j] = min(cur[j], prev2[j - 2] + 1) }
            }
            (prev2, prev, cur) = (prev, cur, prev2)
        }
        return prev[b.count]
    }
}
