import CKJSON
import CKModel
import CKStore
import Foundation

/// Records in NDJSON or a JSON array, with line numbers in errors. NDJSON lines are parsed on
/// every core, a chunk at a time, and handed on in order; the first bad line (in input order)
/// is the error. The next chunk is parsed while the one before it is handed on, so an import's
/// parsing takes the core its commits leave idle instead of waiting between them.
struct ImportSource {
    let bytes: [UInt8]
    let defaultZone: String
    /// Lines parsed together.
    static let chunk = 512

    typealias Line = (number: Int, range: Range<Int>)

    /// A chunk being parsed in the background; `wait()` gives its results in line order.
    private final class ParsedChunk {
        private let done = DispatchGroup()
        private var results: [Result<(String, RecordOperation), Error>] = []

        init(_ parse: @escaping () -> [Result<(String, RecordOperation), Error>]) {
            DispatchQueue.global().async(group: done) { self.results = parse() }
        }

        func wait() -> [Result<(String, RecordOperation), Error>] {
            done.wait()
            return results
        }
    }

    func forEach(_ body: (String, RecordOperation) throws -> Void) throws {
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if first == UInt8(ascii: "[") {
            let doc: JSONValue
            do { doc = try JSONParser.parse(bytes) } catch { throw CloudKitError.badRequest("import: input is not valid JSON: \(error)") }
            for (i, r) in (doc.arrayValue ?? []).enumerated() {
                let (zone, op) = try operation(r, context: "record \(i + 1)")
                try body(zone, op)
            }
            return
        }
        // The lines that are not blank, a chunk at a time; one chunk parsed ahead.
        var lines: [Line] = []
        lines.reserveCapacity(ImportSource.chunk)
        var ahead: ParsedChunk?
        // A chunk still parsing when the body stops the import is waited for, not left running.
        defer { _ = ahead?.wait() }
        func handOn(_ chunk: ParsedChunk) throws {
            for p in chunk.wait() {
                let (zone, op) = try p.get()
                try body(zone, op)
            }
        }
        func next() throws {
            let parsing = ParsedChunk { [lines] in Parallel.map(lines.count, chunk: 16) { i in self.parse(lines[i]) } }
            lines.removeAll(keepingCapacity: true)
            let previous = ahead
            ahead = parsing
            if let previous { try handOn(previous) }
        }
        var line = 0
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            line += 1
            if !bytes[start..<end].allSatisfy({ [0x20, 0x09, 0x0D].contains($0) }) { lines.append((line, start..<end)) }
            start = end + 1
            if lines.count == ImportSource.chunk { try next() }
        }
        if !lines.isEmpty { try next() }
        if let last = ahead { ahead = nil; try handOn(last) }
    }

    /// One line: its zone and its operation, or the error that names the line.
    private func parse(_ l: Line) -> Result<(String, RecordOperation), Error> {
        Result {
            let j: JSONValue
            do { j = try JSONParser.parse(Array(bytes[l.range])) } catch { throw CloudKitError.badRequest("import: line \(l.number) is not valid JSON: \(error)") }
            return try operation(j, context: "line \(l.number)")
        }
    }

    /// `context` (`line 12`) is made only for an error: every line of an import passes here.
    private func operation(_ j: JSONValue, context: @autoclosure () -> String) throws -> (String, RecordOperation) {
        guard j.objectValue != nil else { throw CloudKitError.badRequest("import: \(context()) must be a record object, got \(j.kindName)") }
        var zone = defaultZone
        if let z = j["zoneID"], !z.isNull {
            guard let n = z["zoneName"]?.stringValue else { throw CloudKitError.badRequest("import: \(context()): zoneID needs a zoneName") }
            try Names.validateZoneName(n)
            zone = n
        }
        var op = try ModifyRequest.parseRecord(j, type: .forceReplace, context: "import: \(context())")
        if op.recordName == nil { throw CloudKitError.badRequest("import: \(context()): record needs a recordName") }
        if op.recordType == nil { throw CloudKitError.badRequest("import: \(context()): record needs a recordType") }
        op.recordChangeTag = nil
        op.skipIfUnchanged = true
        try op.checkLimits()
        return (zone, op)
    }
}
