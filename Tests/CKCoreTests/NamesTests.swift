import CKJSON
import CKModel
import XCTest
@testable import CKCore

final class NamesTests: XCTestCase {
    func testRecordAndZoneNamesRefusePathsControlAndLength() {
        for bad in ["", "a\u{0}b", "tab\there", "x\u{7F}", String(repeating: "n", count: 256), String(repeating: "é", count: 128)] {
            XCTAssertThrowsError(try Names.validateRecordName(bad), bad)
            XCTAssertThrowsError(try Names.validateZoneName(bad), bad)
        }
        // Record names take `/`, `\`, `+` and dots as CloudKit does (real names: `2/2/<hex>`,
        // `AePrcOf/CTl//CIzZ6wpFz0/G4b+`); zone names, which name directories, do not.
        for pathLike in ["../x", "a/b", "a\\b", ".", "..", "2/2/4dca04a3", "AePrcOf/CTl//CIzZ6wpFz0/G4b+", "----Root-Folder----"] {
            XCTAssertNoThrow(try Names.validateRecordName(pathLike), pathLike)
        }
        for bad in ["../x", "a/b", "a\\b", ".", ".."] { XCTAssertThrowsError(try Names.validateZoneName(bad), bad) }
        XCTAssertNoThrow(try Names.validateRecordName(String(repeating: "n", count: 255)))
        XCTAssertNoThrow(try Names.validateRecordName("todo-1.ÄÖ 😀"))
    }

    func testFieldAndTypeNames() {
        for bad in ["_x", "1a", "a-b", "a b", "", "é", String(repeating: "a", count: 256)] {
            XCTAssertThrowsError(try Names.validateFieldName(bad), bad)
        }
        XCTAssertNoThrow(try Names.validateFieldName("dueDate_2"))
        XCTAssertThrowsError(try Names.validateRecordType("To Do"))
    }

    func testContainerIdentifiers() {
        XCTAssertNoThrow(try Names.validateContainerID("iCloud.com.example.app"))
        XCTAssertNoThrow(try Names.validateContainerID("iCloud.Com.example-1.app_2"))
        for bad in ["com.example.app", "iCloud.", "iCloud.a/b", "iCloud.../x", "iCloud.a b", "iCloud.a..b", "iCloud.ab..", "icloud.a", "iCloud.é"] {
            XCTAssertThrowsError(try Names.validateContainerID(bad), bad)
        }
        // Each refusal names what is wrong: the prefix (and length), or the characters.
        for (bad, says) in [("com.example.app", "must start with 'iCloud.'"), ("iCloud.", "must start with 'iCloud.'"),
                            ("iCloud." + String(repeating: "a", count: 300), "must start with 'iCloud.'"),
                            ("iCloud.a..b", "may contain only"), ("iCloud.é", "may contain only")] {
            XCTAssertThrowsError(try Names.validateContainerID(bad)) { XCTAssertTrue("\($0)".contains(says), "\(bad.prefix(20)): \($0)") }
        }
    }

    func testPathEncodingNeverEscapesItsDirectory() {
        for name in ["../../etc/passwd", "..", ".hidden", "a/b", "%2F", String(repeating: "é", count: 255), "a\u{0}"] {
            let c = PathEncoding.component(name)
            XCTAssertFalse(c.contains("/"), name)
            XCTAssertFalse(c.hasPrefix("."), name)
            XCTAssertLessThanOrEqual(c.utf8.count, 255, name)
        }
        XCTAssertNotEqual(PathEncoding.component("a/b"), PathEncoding.component("a%2Fb"), "encoding is injective")
        XCTAssertNotEqual(PathEncoding.component(String(repeating: "é", count: 200) + "x"),
                          PathEncoding.component(String(repeating: "é", count: 200) + "y"), "long names stay distinct")
    }

    func testTimestamps() {
        XCTAssertEqual(Timestamps.parseISO8601("2019-10-28"), 1_572_220_800_000)
        XCTAssertEqual(Timestamps.parseISO8601("1970-01-01T00:00:01.5Z"), 1_500)
        XCTAssertEqual(Timestamps.parseISO8601("2019-10-28T02:00:00+02:00"), 1_572_220_800_000)
        XCTAssertEqual(Timestamps.parseISO8601("2020-02-29 12:00"), 1_582_977_600_000)
        for bad in ["2019-13-01", "2019-02-30", "2019-10-28T25:00", "yesterday", "2019-10-28Tx", "20191028"] {
            XCTAssertNil(Timestamps.parseISO8601(bad), bad)
        }
    }

    func testFieldValueValidation() throws {
        let bad: [JSONValue] = [
            ["value": "x", "type": "INT64"], ["value": 1.5, "type": "INT64"], ["value": "!!", "type": "BYTES"],
            ["value": ["latitude": 91, "longitude": 0], "type": "LOCATION"], ["value": ["recordName": ""], "type": "REFERENCE"],
            ["value": ["recordName": "a", "action": "CASCADE"], "type": "REFERENCE"], ["value": [1, "x"], "type": "INT64_LIST"],
            ["value": 1, "type": "BOOLEAN"], ["value": ["a": 1]], ["type": "STRING"], "plain",
        ]
        for b in bad { XCTAssertThrowsError(try RecordField.parse(name: "f", json: b), JSONWriter.compact(b)) }
        XCTAssertEqual(try RecordField.parse(name: "f", json: ["value": true])?.value, 1)
        XCTAssertEqual(try RecordField.parse(name: "f", json: ["value": [1, 2]])?.type.rawValue, "INT64_LIST")
        XCTAssertEqual(try RecordField.parse(name: "f", json: ["value": []])?.type.rawValue, "UNKNOWN_LIST")
        XCTAssertEqual(try RecordField.parse(name: "f", json: ["value": ["recordName": "a"]])?.value["action"], "NONE")
        XCTAssertNil(try RecordField.parse(name: "f", json: ["value": nil]), "null clears the field")
    }

    /// Names are keyed by their bytes: equal bytes find each other in a set, canonically
    /// equivalent spellings and prefixes of each other do not.
    func testNameKeysHashAndCompareByTheirBytes() {
        XCTAssertEqual(NameKey("caf\u{e9}").hashValue, NameKey("caf\u{e9}").hashValue)
        XCTAssertNotEqual(NameKey("caf\u{e9}"), NameKey("cafe\u{301}"))
        var names = Set<NameKey>()
        var rng = SystemRandomNumberGenerator()
        var made: [String] = ["", "a", "ab", "a\u{0}", "cafe\u{301}", "caf\u{e9}"]
        for _ in 0..<2_000 {
            made.append(String((0..<Int.random(in: 0...12, using: &rng)).map { _ in "ab\u{e9}\u{301}-".randomElement(using: &rng)! }))
        }
        for n in made { names.insert(NameKey(n)) }
        XCTAssertEqual(names.count, Set(made.map { Array($0.utf8) }).count, "one key a byte string")
        for n in made { XCTAssertTrue(names.contains(NameKey(n)), n.debugDescription) }
        XCTAssertFalse(names.contains(NameKey("never-made-\u{1F600}")))
    }
}
