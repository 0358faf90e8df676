import CKJSON
import CKModel
import XCTest
@testable import CKCore
@testable import CKStore

/// The fast record paths against the general ones they stand in for: `RecordResponse` must
/// write the bytes `JSONWriter` writes for `Record.response`, and `StoredRecordDecoder` must
/// read a record file as `JSONParser` + `Record(stored:)` do — or decline.
final class RecordCodecTests: XCTestCase {
    private var rng = SystemRandomNumberGenerator()

    private func randomString() -> String {
        let pieces = ["a", "Z", "é", "😀", "\"", "\\", "\n", "\u{1}", "\u{2028}", "/", " ", "日本", "x y", "0"]
        return (0..<Int.random(in: 0...6, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    private func randomValue(_ base: FieldType.Base) -> JSONValue {
        switch base {
        case .string, .bytes, .encryptedBytes: return .string(randomString())
        case .int64, .timestamp: return .int(Int64.random(in: Int64.min...Int64.max, using: &rng))
        case .double: return .double([0.5, -1e300, 3.0, 1e-7, 123456.789].randomElement(using: &rng)!)
        case .reference:
            return ["recordName": .string("r" + randomString()), "action": .string(["NONE", "DELETE_SELF", "VALIDATE"].randomElement(using: &rng)!)]
        case .location: return ["latitude": .double(37.5), "longitude": .double(-122.25), "horizontalAccuracy": .int(5)]
        case .asset:
            return Bool.random(using: &rng)
                ? ["fileChecksum": .string("ab" + String(Int.random(in: 0...999999, using: &rng))), "size": .int(12)]
                : ["downloadURL": .string("https://example.com/a b")]
        case .unknown: return .array([])
        }
    }

    private func randomRecord() -> Record {
        var fields: [String: RecordField] = [:]
        for _ in 0..<Int.random(in: 0...6, using: &rng) {
            let base = FieldType.Base.allCases.filter { $0 != .unknown }.randomElement(using: &rng)!
            let list = Bool.random(using: &rng)
            let name = ["title", "Title", "a_b", "z9", "priority", "tags", "é", "aa", "a"].randomElement(using: &rng)!
            let value: JSONValue = list ? .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in randomValue(base) }) : randomValue(base)
            fields[name] = RecordField(type: FieldType(base, list: list), value: value)
        }
        if Bool.random(using: &rng) { fields["empty"] = RecordField(type: FieldType(.unknown, list: true), value: .array([])) }
        let stamp = { ChangeStamp(timestamp: Int64.random(in: 0...1_900_000_000_000, using: &self.rng), userRecordName: "_" + self.randomString(), deviceID: self.randomString()) }
        var r = Record(recordName: "rec-" + randomString(), recordType: ["ToDoItem", "T_2", "Ünï"].randomElement(using: &rng)!,
                       recordChangeTag: String(Int.random(in: 1...99999, using: &rng), radix: 36), fields: fields,
                       created: stamp(), modified: stamp(),
                       zoneID: ZoneID(zoneName: Bool.random(using: &rng) ? ZoneID.defaultZoneName : "Zone " + randomString(), ownerRecordName: "_owner" + randomString()),
                       parent: Bool.random(using: &rng) ? "p" + randomString() : nil, shortGUID: Bool.random(using: &rng) ? "g" + randomString() : nil)
        if Bool.random(using: &rng) { r.share = "share-" + randomString() }
        return r
    }

    private func fileBytes(_ r: Record, pretty: Bool = true) -> [UInt8] {
        let doc: JSONValue = ["schemaVersion": .int(FileFormat.schemaVersion), "record": r.json()]
        return Array((pretty ? JSONWriter.pretty(doc) : JSONWriter.compact(doc)).utf8)
    }

    private func general(_ bytes: [UInt8]) throws -> Record {
        guard let j = try JSONParser.parse(bytes)["record"] else { throw CloudKitError.internalError("no record") }
        return try Record(stored: j)
    }

    func testResponseBytesEqualTheGeneralEncoder() {
        var numbersAsStrings = ResponseStyle(assetBase: "file:///data/assets/", encryptedAssets: true)
        numbersAsStrings.numbersAsStrings = true
        let styles = [ResponseStyle(assetBase: "file:///data/assets/", encryptedAssets: true), ResponseStyle(assetBase: "file:///d%20x/", encryptedAssets: false),
                      numbersAsStrings]
        for _ in 0..<500 {
            let r = randomRecord()
            let keys: Set<String>? = Bool.random(using: &rng) ? nil : Set(r.fields.keys.filter { _ in Bool.random(using: &self.rng) } + ["absent"])
            let style = styles.randomElement(using: &rng)!
            let withZoneID = Bool.random(using: &rng)
            let general = r.response(style, desiredKeys: keys, withZoneID: withZoneID)
            let fast = r.encodableResponse(style, desiredKeys: keys, withZoneID: withZoneID)
            for (indent, pretty) in [(0, false), (0, true), (4, true), (6, true)] {
                var a: [UInt8] = [], b: [UInt8] = []
                JSONWriter.emit(general, into: &a, indent: indent, pretty: pretty)
                fast.encodeJSON(into: &b, indent: indent, pretty: pretty)
                XCTAssertEqual(String(decoding: b, as: UTF8.self), String(decoding: a, as: UTF8.self), "indent \(indent) pretty \(pretty)")
            }
            XCTAssertEqual(fast.jsonValue, general)
            XCTAssertEqual(JSONWriter.line(fast), JSONWriter.line(general))
        }
    }

    func testSavedRecordReceiptBytesEqualTheGeneralEncoder() {
        for _ in 0..<300 {
            let r = randomRecord()
            let receipt = SavedRecordReceipt(r)
            // What `ck import` printed for a saved record before it wrote receipts straight to bytes.
            let general: JSONValue = ["recordName": .string(r.recordName), "recordChangeTag": .string(r.recordChangeTag), "zoneID": r.zoneID.json]
            XCTAssertEqual(receipt.jsonValue, general)
            for (indent, pretty) in [(0, false), (0, true), (4, true)] {
                var a: [UInt8] = [], b: [UInt8] = []
                JSONWriter.emit(general, into: &a, indent: indent, pretty: pretty)
                receipt.encodeJSON(into: &b, indent: indent, pretty: pretty)
                XCTAssertEqual(String(decoding: b, as: UTF8.self), String(decoding: a, as: UTF8.self), "indent \(indent) pretty \(pretty)")
            }
            var z: [UInt8] = []
            r.zoneID.encodeJSON(into: &z, indent: 2, pretty: true)
            XCTAssertEqual(String(decoding: z, as: UTF8.self), { var o: [UInt8] = []; JSONWriter.emit(r.zoneID.json, into: &o, indent: 2, pretty: true); return String(decoding: o, as: UTF8.self) }())
        }
    }

    func testStoredFileBytesEqualTheGeneralEncoder() throws {
        for i in 0..<500 {
            var r = randomRecord()
            if i % 10 == 0 {
                r.recordType = ShareInfo.recordType
                r.shareInfo = ["publicPermission": "READ_ONLY", "participants": .array([]), "owner": ["userIdentity": [:]], "rootRecordName": "root"]
            }
            let fast = StoredRecordFile(r)
            // What a commit writes is what fsck and the general encoder write, byte for byte.
            XCTAssertEqual(String(decoding: fast.bytes, as: UTF8.self), String(decoding: fileBytes(r), as: UTF8.self))
            XCTAssertEqual(JSONWriter.line(fast), JSONWriter.line(fast.jsonValue))
            XCTAssertEqual(try general(fast.bytes), r, "the file reads back as the record")
        }
    }

    func testHistoryEntryLineEqualsTheGeneralEncoderAndReadsBack() throws {
        for i in 0..<500 {
            var r = randomRecord()
            if i % 10 == 0 {
                r.recordType = ShareInfo.recordType
                r.shareInfo = ["publicPermission": "NONE", "participants": .array([]), "owner": ["userIdentity": [:]], "rootRecordName": "root"]
            }
            let save = i % 3 != 0
            let e = HistoryEntry(seq: Int64.random(in: 1...Int64.max, using: &rng), timestamp: Int64.random(in: 0...1_900_000_000_000, using: &rng),
                                 op: save ? .save : .delete, recordName: r.recordName, userRecordName: "_" + randomString(), deviceID: randomString(),
                                 record: save ? r : nil, prev: Bool.random(using: &rng) ? Int64.random(in: 1...999_999, using: &rng) : nil)
            // The log line a commit appends is the one the general encoder writes for the entry.
            XCTAssertEqual(JSONWriter.line(e), JSONWriter.line(e.jsonValue))
            // And readers get the entry back from it, typed.
            let back = try HistoryEntry(line: try JSONParser.parse(Array(JSONWriter.line(e).utf8.dropLast())))
            XCTAssertEqual([back.seq, back.timestamp], [e.seq, e.timestamp])
            XCTAssertEqual([back.recordName, back.userRecordName, back.deviceID], [e.recordName, e.userRecordName, e.deviceID])
            XCTAssertEqual(back.op, e.op)
            XCTAssertEqual(back.prev, e.prev)
            XCTAssertEqual(back.record, e.record)
            XCTAssertEqual(back.recordChangeTag, save ? r.recordChangeTag : nil)
            if save {
                XCTAssertEqual(e.jsonValue["recordChangeTag"]?.stringValue, r.recordChangeTag)
                XCTAssertEqual(e.jsonValue["record"], r.json())
            } else {
                XCTAssertNil(e.jsonValue.objectValue?["record"])
                XCTAssertNil(e.jsonValue.objectValue?["recordChangeTag"])
            }
        }
    }

    func testShareRecordResponseTakesTheGeneralPath() throws {
        var r = randomRecord()
        r.recordType = ShareInfo.recordType
        r.shareInfo = ["publicPermission": "NONE", "participants": .array([]), "owner": ["userIdentity": [:]], "rootRecordName": "root"]
        let style = ResponseStyle(assetBase: "file:///a/", encryptedAssets: true)
        XCTAssertEqual(JSONWriter.line(r.encodableResponse(style)), JSONWriter.line(r.response(style)))
        XCTAssertFalse(JSONWriter.line(r.encodableResponse(style)).contains("rootRecordName"))
        // Stored, a share record's own keys are read by the general path: the fast one declines.
        XCTAssertNil(StoredRecordDecoder.recordFile(fileBytes(r)))
        XCTAssertEqual(try general(fileBytes(r)).shareInfo?["publicPermission"], "NONE")
    }

    func testDecoderReadsWhatTheGeneralPathReads() throws {
        for _ in 0..<500 {
            let r = randomRecord()
            for pretty in [true, false] {
                let bytes = fileBytes(r, pretty: pretty)
                let fast = StoredRecordDecoder.recordFile(bytes)
                XCTAssertNotNil(fast, "declined a record file as ck writes it")
                XCTAssertEqual(fast, try general(bytes))
                XCTAssertEqual(fast, r)
            }
        }
    }

    func testDecoderDeclinesWhatTheGeneralPathRefusesOrReadsDifferently() throws {
        let r = randomRecord()
        let text = String(decoding: fileBytes(r, pretty: false), as: UTF8.self)
        let record = String(decoding: Array(JSONWriter.compact(r.json()).utf8), as: UTF8.self)
        let body = String(record.dropFirst().dropLast())
        let cases = [
            "", "{", "[]", "null", text + "x", text + ",",
            #"{"record":\#(record),"record":\#(record)}"#,                       // duplicate envelope key
            #"{"schemaVersion":2,"schemaVersion":2,"record":\#(record)}"#,       // duplicate other key
            "{" + #""record":{"# + body + #","recordName":"dup"}}"#,           // duplicate record key
            "{" + #""record":{"# + body + #","x":1,"x":2}}"#,                  // duplicate unknown key
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{},"created":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"zoneID":{"zoneName":"Z"}}}"#, // no modified
            #"{"record":{"recordName":1,"recordType":"T","recordChangeTag":"1","fields":{},"created":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"modified":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{"f":{"type":"NOPE","value":1}},"created":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"modified":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{"f":{"type":"STRING","value":"x","value":"y"}},"created":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"modified":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{"f":{"type":"STRING","value":"x"},"f":{"type":"STRING","value":"y"}},"created":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"modified":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{},"created":{"timestamp":1.5,"userRecordName":"u","deviceID":"d"},"modified":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{},"created":{"timestamp":1,"userRecordName":"u","deviceID":"d","deviceID":"e"},"modified":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{},"created":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"modified":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"zoneID":{"zoneName":"Z","zoneType":7}}}"#,
            #"{"record":{"recordName":"a\ud800","recordType":"T"}}"#,
        ]
        for c in cases {
            let bytes = Array(c.utf8)
            let fast = StoredRecordDecoder.recordFile(bytes)
            if let slow = try? general(bytes) {
                // Accepted by both only when both read the same record.
                XCTAssertEqual(fast, slow, c)
            } else {
                XCTAssertNil(fast, "the fast path read what the general path refuses: \(c)")
            }
        }
    }

    /// A key ck does not write (a file edited by hand), or one it writes spelled with an escape
    /// (a file written by another tool), sends the file to the general path, which reads the
    /// record all the same.
    func testAKeyCkDoesNotWriteIsReadByTheGeneralPath() throws {
        let stamp = #"{"timestamp":1,"userRecordName":"u","deviceID":"d"}"#
        let cases = [
            #"{"\u0072ecord":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{},"created":STAMP,"modified":STAMP,"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"record\u004eame":"a","recordType":"T","recordChangeTag":"1","fields":{},"created":STAMP,"modified":STAMP,"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{"f":{"t\u0079pe":"STRING","value":"x"}},"created":STAMP,"modified":STAMP,"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{"\u0066":{"type":"STRING","value":"x"}},"created":STAMP,"modified":STAMP,"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{},"created":{"timestamp":1,"userRecordName":"u","device\u0049D":"d"},"modified":STAMP,"zoneID":{"zoneName":"Z"}}}"#,
            #"{"note":"mine","record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{},"created":STAMP,"modified":STAMP,"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{},"created":{"timestamp":1,"userRecordName":"u","deviceID":"d","x":1},"modified":STAMP,"zoneID":{"zoneName":"Z"}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{},"created":STAMP,"modified":STAMP,"zoneID":{"zoneName":"Z","x":true}}}"#,
            #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{"f":{"type":"STRING","value":"x","x":null}},"created":STAMP,"modified":STAMP,"zoneID":{"zoneName":"Z"}}}"#,
        ]
        for c in cases {
            let bytes = Array(c.replacingOccurrences(of: "STAMP", with: stamp).utf8)
            XCTAssertNil(StoredRecordDecoder.recordFile(bytes), c)
            let read = try StoredRecordDecoder.record(inFile: bytes, shownAs: "test")
            XCTAssertEqual(read, try general(bytes), c)
            XCTAssertEqual(read.recordName, "a")
        }
    }

    /// One to three bytes removed, replaced by JSON's punctuation (or a byte that is no UTF-8),
    /// or repeated elsewhere.
    private func damaged(_ original: [UInt8]) -> [UInt8] {
        var bytes = original
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            let at = Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: bytes.remove(at: at)
            case 1: bytes[at] = [0x22, 0x2C, 0x7B, 0x7D, 0x5B, 0x5D, 0x3A, 0x30, 0x61, 0x5C, 0xFF, 0x20, 0x2E].randomElement(using: &rng)!
            default: bytes.insert(bytes[Int.random(in: 0..<bytes.count, using: &rng)], at: at)
            }
        }
        return bytes
    }

    /// Damaged files: whatever the fast path reads, the general path reads the same.
    func testDecoderNeverDiffersOnDamagedFiles() throws {
        var accepted = 0
        for _ in 0..<3000 {
            let bytes = damaged(fileBytes(randomRecord(), pretty: Bool.random(using: &rng)))
            let fast = StoredRecordDecoder.recordFile(bytes)
            if let slow = try? general(bytes) {
                if let fast { XCTAssertEqual(fast, slow); accepted += 1 }
            } else {
                XCTAssertNil(fast, String(decoding: bytes, as: UTF8.self))
            }
        }
        XCTAssertGreaterThan(accepted, 0, "some damage (inside a string value) leaves a readable record")
    }

    /// A key ck does not know, in UTF-8 beyond ASCII, is skipped by both paths alike.
    func testAKeyBeyondASCIIIsSkippedByBothPaths() throws {
        let stamp = #"{"timestamp":1,"userRecordName":"u","deviceID":"d"}"#
        let other = Array(#"{"record":{"créé":1,"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{},"created":STAMP,"modified":STAMP,"zoneID":{"zoneName":"Z"}}}"#
            .replacingOccurrences(of: "STAMP", with: stamp).utf8)
        XCTAssertEqual(StoredRecordDecoder.recordFile(other), try general(other))
        XCTAssertNotNil(StoredRecordDecoder.recordFile(other))
    }

    // MARK: history lines

    private func randomEntry() -> HistoryEntry {
        let r = randomRecord()
        let delete = Int.random(in: 0..<4, using: &rng) == 0
        return HistoryEntry(seq: Int64.random(in: 1...(1 << 40), using: &rng), timestamp: Int64.random(in: 0...1_900_000_000_000, using: &rng),
                            op: delete ? .delete : .save, recordName: r.recordName, userRecordName: "_" + randomString(),
                            deviceID: randomString(), record: delete ? nil : r, prev: Bool.random(using: &rng) ? Int64.random(in: 1...99_999, using: &rng) : nil)
    }

    /// What a reader keeps of an entry, as bytes (a Record's `==` is canonical equivalence).
    private func shown(_ e: HistoryEntry) -> [UInt8] { Array(JSONWriter.line(e).utf8) + Array((e.recordChangeTag ?? "-").utf8) }

    private func generalEntry(_ bytes: [UInt8]) throws -> HistoryEntry { try HistoryEntry(line: JSONParser.parse(bytes)) }

    /// An entry's line as a log holds it: framed (AppendLogFraming), or as written before.
    private func logLine(_ e: HistoryEntry) -> [UInt8] {
        let json = Array(JSONWriter.line(e).utf8.dropLast())
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: return json
        case 1: return AppendLogFraming.frame(json, commits: false)
        default: return AppendLogFraming.frame(json, commits: true)
        }
    }

    /// A history line as ck writes it is read by the fast path, as the general path reads it.
    func testHistoryLinesAreReadAsTheGeneralPathReadsThem() throws {
        for _ in 0..<500 {
            let e = randomEntry()
            let line = logLine(e)
            let fast = HistoryEntry.decoded(line[...])
            XCTAssertNotNil(fast, "declined a line as ck writes it: \(String(decoding: line, as: UTF8.self))")
            XCTAssertEqual(fast.map(shown), shown(try generalEntry(line)))
            XCTAssertEqual(fast.map(shown), shown(e))
        }
    }

    /// Damaged, reordered or hand-written lines: whatever the fast path reads, the general path
    /// reads the same; what the general path refuses, the fast path never reads.
    func testHistoryLineDecoderNeverDiffers() throws {
        var accepted = 0
        let cases = [
            #"{"deviceID":"d","op":"save","seq":1,"seq":2,"recordName":"a","timestamp":1,"userRecordName":"u"}"#,
            #"{"deviceID":"d","op":"delete","s\u0065q":1,"recordName":"a","timestamp":1,"userRecordName":"u"}"#,
            #"{"deviceID":"d","op":"delete","seq":1.0,"recordName":"a","timestamp":1,"userRecordName":"u"}"#,
            #"{"deviceID":"d","op":"delete","seq":1,"recordName":"a","userRecordName":"u"}"#,
            #"{"deviceID":"d","op":"nope","seq":1,"recordName":"a","timestamp":1,"userRecordName":"u"}"#,
            #"{"deviceID":"d","op":"delete","seq":1,"recordName":"a","timestamp":1,"userRecordName":"u","x":1}"#,
            #"{"deviceID":"d","op":"delete","seq":1,"recordName":"a","timestamp":1,"userRecordName":"u"} x"#,
            #"{"deviceID":"d","op":"save","seq":1,"recordName":"a","timestamp":1,"userRecordName":"u","record":null}"#,
            #"{"check":"0","check":"0","deviceID":"d","op":"delete","seq":1,"recordName":"a","timestamp":1,"userRecordName":"u"}"#,
        ]
        for c in cases {
            let bytes = Array(c.utf8)
            XCTAssertNil(HistoryEntry.decoded(bytes[...]), c)
        }
        for _ in 0..<3000 {
            let bytes = damaged(logLine(randomEntry()))
            let fast = HistoryEntry.decoded(bytes[...])
            if let slow = try? generalEntry(bytes) {
                if let fast { XCTAssertEqual(shown(fast), shown(slow)); accepted += 1 }
            } else {
                XCTAssertNil(fast, String(decoding: bytes, as: UTF8.self))
            }
        }
        XCTAssertGreaterThan(accepted, 0, "some damage (inside a string value) leaves a readable line")
    }

    /// A file with several malformed fields names the same one on every read: the first in
    /// byte order, whatever order its dictionary holds them in.
    func testTheMalformedFieldNamedIsTheFirstInByteOrder() {
        let fields = (0..<12).map { #""f\#($0)":{"type":"NOPE","value":1}"# }.shuffled(using: &rng).joined(separator: ",")
        let text = #"{"record":{"recordName":"a","recordType":"T","recordChangeTag":"1","fields":{"#
            + fields + #","ok":{"type":"STRING","value":"x"}},"created":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"modified":{"timestamp":1,"userRecordName":"u","deviceID":"d"},"zoneID":{"zoneName":"Z"}}}"#
        XCTAssertThrowsError(try StoredRecordDecoder.record(inFile: Array(text.utf8), shownAs: "test")) {
            XCTAssertTrue("\($0)".contains("malformed field 'f0'"), "\($0)")
        }
    }

    /// The read step of a history's readers: a line that carries another seq than its index
    /// word's is damage whichever path reads it, a line the fast path declines is read by the
    /// general one, and one that is not JSON is damage.
    func testAHistoryLineIsReadOnlyUnderItsOwnSeq() throws {
        let e = randomEntry()
        let line = logLine(e)[...]
        XCTAssertEqual(shown(try ChangeHistory.read(HistoryEntry.self, seq: e.seq, line)), shown(e))
        XCTAssertThrowsError(try ChangeHistory.read(HistoryEntry.self, seq: e.seq + 1, line)) {
            XCTAssertEqual(($0 as? AppendLog.Damage)?.what, "entry carries seq \(e.seq)")
        }
        // Declined (a key ck does not write), then read by the general path.
        let other = Array(#"{"deviceID":"d","op":"delete","recordName":"a","seq":7,"timestamp":5.0,"userRecordName":"u","x":1}"#.utf8)[...]
        XCTAssertNil(HistoryEntry.decoded(other))
        let read = try ChangeHistory.read(HistoryEntry.self, seq: 7, other)
        XCTAssertEqual(read.timestamp, 5)
        XCTAssertEqual(read.recordName, "a")
        XCTAssertThrowsError(try ChangeHistory.read(HistoryEntry.self, seq: 7, Array("{\"seq\":7".utf8)[...])) {
            XCTAssertEqual(($0 as? AppendLog.Damage)?.what, "entry is not valid JSON")
        }
    }
}
