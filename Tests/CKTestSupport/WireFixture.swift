import Foundation
import XCTest

/// One fixture of Tests/Fixtures/wire: a body recorded from (or sent to) Apple's CloudKit Web
/// Services by a public project, with its source (repository, path, commit, kind). See
/// Tests/Fixtures/wire/README.md for what each holds and how it was trimmed.
public struct WireFixture {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/wire")

    public let name: String
    public let source: [String: Any]
    public let body: Any

    public init(_ name: String, file: StaticString = #filePath, line: UInt = #line) {
        self.name = name
        let url = Self.directory.appendingPathComponent(name + ".json")
        guard let data = try? Data(contentsOf: url), let o = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let source = o["source"] as? [String: Any], let body = o["body"] else {
            XCTFail("fixture \(name) is missing or malformed", file: file, line: line)
            self.source = [:]
            self.body = [String: Any]()
            return
        }
        self.source = source
        self.body = body
    }

    public var object: [String: Any] { body as? [String: Any] ?? [:] }
    public var records: [[String: Any]] { object["records"] as? [[String: Any]] ?? [] }

    /// The body as a JSON document to feed ck on stdin.
    public var text: String { String(decoding: try! JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]), as: UTF8.self) }

    /// The body with some values replaced (a record name or change tag that only a live
    /// store knows), as JSON text.
    public func text(replacing replacements: [String: String]) -> String {
        var t = text
        for (from, to) in replacements { t = t.replacingOccurrences(of: "\"\(from)\"", with: "\"\(to)\"") }
        return t
    }
}

/// Shape checks: the keys ck prints against the keys Apple's servers sent.
public enum Shape {
    public static func keys(_ v: Any?) -> Set<String> { Set((v as? [String: Any])?.keys.map { $0 } ?? []) }

    /// The JSON kind of a value, as a shape compares it.
    public static func kind(_ v: Any?) -> String {
        switch v {
        case is String: return "string"
        case let n as NSNumber: return ["c", "B"].contains(String(cString: n.objCType)) ? "bool" : "number"
        case is [Any]: return "array"
        case is [String: Any]: return "object"
        case nil, is NSNull: return "null"
        default: return "?"
        }
    }

    /// `ck`'s dictionary has exactly the recorded keys (less `optional` ones the recording
    /// may carry and ck need not), each of the same JSON kind.
    public static func assertSameKeys(_ ck: Any?, _ recorded: Any?, optional: Set<String> = [], _ what: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        let mine = keys(ck), theirs = keys(recorded).subtracting(optional)
        XCTAssertEqual(mine.subtracting(optional), theirs, "\(what): ck's keys against the recorded ones", file: file, line: line)
        guard let a = ck as? [String: Any], let b = recorded as? [String: Any] else { return }
        for k in mine.intersection(theirs) where !(b[k] is NSNull) {
            XCTAssertEqual(kind(a[k]), kind(b[k]), "\(what).\(k)", file: file, line: line)
        }
    }

    /// Base64 that decodes to `count` bytes, as the recorded checksums and keys do.
    public static func base64Length(_ v: Any?) -> Int? { (v as? String).flatMap { Data(base64Encoded: $0) }?.count }
}
