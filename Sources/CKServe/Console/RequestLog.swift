import CKHTTP
import CKJSON
import Foundation

/// The server's recent requests, for the console's live view: a bounded ring kept in memory
/// (the newest `capacity`), each with its bodies cut to `bodyLimit` bytes and the secrets its
/// bodies can hold masked. The log on stderr stays the record; this is what a person looks at.
/// It is the server's own state, not the store's: a command line has none.
///
/// A body is shown (parsed, masked, written again) when a person opens its entry, not when the
/// request is answered: every request is logged and few are looked at, and showing both bodies
/// cost a lookup an eighth of its time. A body within `bodyLimit` is kept as it came, which
/// costs no more memory than its shown text would; a longer one is shown at once and cut.
final class RequestLog: @unchecked Sendable {
    /// A body as kept: its bytes, to be shown when asked; or, for a long or binary one, the text
    /// already shown.
    enum Body {
        case bytes([UInt8])
        case shown(String)
    }

    struct Entry {
        fileprivate(set) var id: Int
        let time: Int64
        let method: String
        let path: String
        let caller: String
        let status: Int
        let milliseconds: Double
        let error: String?
        let request: Body
        let response: Body
        let bodyLimit: Int

        var requestBody: String { RequestLog.shown(request, limit: bodyLimit) }
        var responseBody: String { RequestLog.shown(response, limit: bodyLimit) }
    }

    let capacity: Int
    let bodyLimit: Int
    private let lock = NSLock()
    /// The ring: once full, a new entry takes the oldest's slot (`oldest`), so adding one moves
    /// none of the others.
    private var entries: [Entry] = []
    private var oldest = 0
    private var next = 1

    init(capacity: Int = 500, bodyLimit: Int = 16 * 1024) {
        self.capacity = capacity
        self.bodyLimit = bodyLimit
    }

    /// Members whose values are secrets wherever they appear in a body: sessions, push tokens
    /// (a long-poll URL is one), API tokens, and the capability URLs of assets (an upload's
    /// `url`, a `downloadURL`), which let whoever holds them write or read the bytes.
    static let secretKeys: Set<String> = ["ckWebAuthToken", "ckSession", "apnsToken", "webcourierURL", "apiToken", "ckAPIToken", "token", "url", "downloadURL"]

    func add(_ head: HTTPRequestHead, path: String, caller: String, request: [UInt8], response: HTTPResponse, milliseconds: Double, binaryBodies: Bool) {
        let error = response.status >= 400 ? (try? JSONParser.parse(response.body))?["serverErrorCode"]?.stringValue : nil
        let time = Int64(Date().timeIntervalSince1970 * 1000)
        let req = kept(request, binary: binaryBodies), res = kept(response.body, binary: binaryBodies)
        var entry = Entry(id: 0, time: time, method: head.method, path: path, caller: caller, status: response.status,
                          milliseconds: milliseconds, error: error, request: req, response: res, bodyLimit: bodyLimit)
        // The entry a full ring drops is freed after the lock, not under it: every request
        // passes here, and its bodies' memory going back is the longest part.
        var dropped: Entry?
        lock.lock()
        entry.id = next
        next += 1
        if entries.count < capacity {
            entries.append(entry)
        } else {
            dropped = entries[oldest]
            entries[oldest] = entry
            oldest = (oldest + 1) % capacity
        }
        lock.unlock()
        withExtendedLifetime(dropped) {}
    }

    /// Entries after `after`, newest first, at most `limit`.
    func list(after: Int, limit: Int = 200) -> [Entry] {
        lock.lock()
        defer { lock.unlock() }
        var out: [Entry] = []
        for i in 0..<min(entries.count, max(limit, 0)) {
            let e = entries[(oldest + entries.count - 1 - i) % entries.count]
            guard e.id > after else { break }
            out.append(e)
        }
        return out
    }

    func entry(_ id: Int) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        return entries.first { $0.id == id }
    }

    private func kept(_ body: [UInt8], binary: Bool) -> Body {
        if binary { return .shown("(\(body.count) bytes)") }
        return body.count <= bodyLimit ? .bytes(body) : .shown(Self.shown(body, limit: bodyLimit))
    }

    static func shown(_ body: Body, limit: Int) -> String {
        switch body {
        case .bytes(let b): return shown(b, limit: limit)
        case .shown(let s): return s
        }
    }

    /// A body as the console shows it: JSON with its secrets masked, compact; other text as it
    /// is; bytes that are not UTF-8 by their count. Cut at `limit` bytes.
    static func shown(_ body: [UInt8], limit: Int) -> String {
        if body.isEmpty { return "" }
        var text: String
        if let json = try? JSONParser.parse(body) {
            text = JSONWriter.compact(masked(json))
        } else if let s = String(validating: body, as: UTF8.self) {
            text = s
        } else {
            return "(\(body.count) bytes)"
        }
        if text.utf8.count > limit { text = String(decoding: text.utf8.prefix(limit), as: UTF8.self) + "… (\(body.count) bytes in all)" }
        return text
    }

    static func masked(_ v: JSONValue) -> JSONValue {
        switch v {
        case .object(let o):
            var out: [String: JSONValue] = [:]
            for (k, x) in o { out[k] = secretKeys.contains(k) && x.stringValue != nil ? .string("…") : masked(x) }
            return .object(out)
        case .array(let a): return .array(a.map(masked))
        default: return v
        }
    }

    func json(_ e: Entry, bodies: Bool) -> JSONValue {
        var o: [String: JSONValue] = ["id": .int(Int64(e.id)), "time": .int(e.time), "method": .string(e.method), "path": .string(e.path),
                                      "caller": .string(e.caller), "status": .int(Int64(e.status)),
                                      "milliseconds": .double((e.milliseconds * 10).rounded() / 10)]
        if let err = e.error { o["serverErrorCode"] = .string(err) }
        if bodies {
            o["requestBody"] = .string(e.requestBody)
            o["responseBody"] = .string(e.responseBody)
        }
        return .object(o)
    }
}
