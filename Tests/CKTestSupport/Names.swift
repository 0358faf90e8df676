import Foundation

/// The record names a command printed, in order — the one way the tests read them:
/// - a JSON document: the records of its first zone (a changes/zone response; a tombstone
///   there reads "-name"), or else its `records` (lookup, modify, query, list, share list);
///   a document with neither (notifications, a zone list) names no record;
/// - otherwise NDJSON, one record a line. A line that is not a record reads
///   "<not a record: …>", and no output at all "<no output>", so that neither passes for a
///   list of names (an empty NDJSON stream is compared as `stdout == ""`).
public func names(_ output: String) -> [String] {
    let text = output.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !text.isEmpty else { return ["<no output>"] }
    if let doc = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any], doc["recordName"] == nil {
        if let zones = doc["zones"] as? [[String: Any]] {
            return (zones.first?["records"] as? [[String: Any]] ?? []).map {
                ($0["deleted"] as? Bool == true ? "-" : "") + ($0["recordName"] as? String ?? "?")
            }
        }
        return (doc["records"] as? [[String: Any]] ?? []).map { $0["recordName"] as? String ?? "?" }
    }
    return text.split(separator: "\n", omittingEmptySubsequences: true).map { line in
        ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["recordName"] as? String
            ?? "<not a record: \(line.prefix(80))>"
    }
}

/// The record names `r` printed (see `names(_:)` of a string).
public func names(_ r: CKResult) -> [String] { names(r.stdout) }
