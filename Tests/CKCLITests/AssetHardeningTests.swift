import CKTestSupport
import Foundation
import XCTest

/// Hostile ASSETID values (Docs/wire.md, "Assets"): sizes over CloudKit's limit, sizes that
/// disagree with the bytes, checksums in non-canonical base64, downloadURLs of other schemes,
/// and `file://` URLs outside an asset store or through symbolic links. Each is refused with
/// its exit code and one line (or a per-record error in a batch), and changes nothing; the
/// export → import round trip keeps working.
final class AssetHardeningTests: XCTestCase {
    /// The review's setup: signed in, zone Z.
    private func sandbox(_ appleID: String = "x@example.com") -> CLISandbox {
        let s = CLISandbox()
        s.signIn(appleID)
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        return s
    }

    /// A data directory holding `bytes` as asset field `a` of record `src`, and that asset's
    /// value as ck prints it (fileChecksum, size, downloadURL into its asset store).
    private func source(_ bytes: Data, root: URL? = nil) throws -> (CLISandbox, [String: Any]) {
        let s = sandbox("source@example.com")
        let file = s.root.appendingPathComponent("asset.bin")
        try bytes.write(to: file)
        let saved = s.run(["--zone", "Z", "record", "save", "--type", "T", "--name", "src", "a:ASSET=@" + file.path])
        XCTAssertEqual(saved.status, 0, saved.stderr)
        return (s, value(s.ck("--zone", "Z", "record", "get", "src"), "a"))
    }

    private func value(_ r: CKResult, _ field: String) -> [String: Any] {
        ((r.record["fields"] as? [String: Any])?[field] as? [String: Any])?["value"] as? [String: Any] ?? [:]
    }

    /// One record of zone Z with asset field `a`, as an NDJSON line (or `record save --stdin` body).
    private func line(_ name: String, _ asset: Any, type: String = "ASSETID") -> String {
        let record: [String: Any] = ["recordName": name, "recordType": "T", "zoneID": ["zoneName": "Z"],
                                     "fields": ["a": ["type": type, "value": asset]]]
        return String(decoding: try! JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]), as: UTF8.self)
    }

    /// A checksum no store holds: the base64 of 32 bytes.
    private let unknownSum = Data(repeating: 7, count: 32).base64EncodedString()

    /// `import` of one line: the record fails alone (exit 9, its error on stdout naming `contains`).
    private func assertImportRefuses(_ s: CLISandbox, _ text: String, code: String = "BAD_REQUEST", contains: String,
                                     file: StaticString = #filePath, line: UInt = #line) {
        s.assertUnchanged("import \(text.prefix(200))", file: file, line: line) {
            let r = s.run(["import"], stdin: text + "\n")
            XCTAssertEqual(r.status, 9, r.stderr, file: file, line: line)
            XCTAssertTrue(r.stdout.contains("\"serverErrorCode\":\"\(code)\"") || r.stdout.contains("\"serverErrorCode\": \"\(code)\""),
                          r.stdout, file: file, line: line)
            XCTAssertTrue(r.stdout.contains(contains), "stdout lacks '\(contains)': \(r.stdout)", file: file, line: line)
            XCTAssertEqual(r.stderr.filter { $0 == "\n" }.count, 1, r.stderr, file: file, line: line)
        }
    }

    /// `record save --stdin` of one record: exit `exit`, one stderr line, nothing on stdout.
    private func assertSaveRefuses(_ s: CLISandbox, _ text: String, exit: Int32 = 6, contains: String,
                                   file: StaticString = #filePath, line: UInt = #line) {
        s.assertUnchanged("save \(text.prefix(200))", file: file, line: line) {
            assertFailure(s.run(["--zone", "Z", "record", "save", "--stdin"], stdin: text), exit: exit, contains: contains, file: file, line: line)
        }
    }

    /// A file of `size` bytes that takes no space (and takes forever to hash, were it read).
    private func sparse(_ url: URL, size: UInt64) throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: nil))
        let h = try FileHandle(forWritingTo: url)
        try h.truncate(atOffset: size)
        try h.close()
    }

    // MARK: 1. sizes over CloudKit's asset limit

    func testAnAssetOverCloudKitsLimitIsRefusedBeforeAnyFileIsOpened() throws {
        let s = sandbox()
        let elsewhere = CLISandbox()
        let big = elsewhere.root.appendingPathComponent("big")
        try sparse(big, size: 3_000_000_000)
        // The same, shaped like an asset store's file and named after the checksum it claims.
        let hex = String(repeating: "07", count: 32)
        let store = elsewhere.root.appendingPathComponent("data/assets/07")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        try sparse(store.appendingPathComponent(hex), size: 100_000_000)
        let shaped = URL(fileURLWithPath: store.appendingPathComponent(hex).path).absoluteString
        for (url, size) in [(big.absoluteString, 100_000_000), (big.absoluteString, 3_000_000_000), (shaped, 100_000_000), (big.absoluteString, 50_000_001)] {
            let v: [String: Any] = ["fileChecksum": unknownSum, "size": size, "downloadURL": url]
            let started = Date()
            s.assertUnchanged("size \(size)") {
                // Refused while the input is read: the whole import, exit 8, one line.
                assertFailure(s.run(["import"], stdin: line("big", v) + "\n"), exit: 8, contains: "LIMIT_EXCEEDED")
                assertFailure(s.run(["import"], stdin: line("big", v) + "\n"), exit: 8, contains: "asset limit of 50000000 bytes")
                assertFailure(s.run(["--zone", "Z", "record", "save", "--stdin"], stdin: line("big", v)), exit: 8, contains: "field 'a'")
                let op = "{\"operations\": [{\"operationType\": \"forceReplace\", \"record\": \(line("big", [v], type: "ASSETID_LIST"))}]}"
                assertFailure(s.run(["--zone", "Z", "record", "modify"], stdin: op), exit: 8, contains: "LIMIT_EXCEEDED")
            }
            XCTAssertLessThan(Date().timeIntervalSince(started), 20, "nothing read or hashed for \(size) bytes")
        }
        // Exactly at the limit the size is acceptable (the bytes are what is missing here).
        assertImportRefuses(s, line("edge", ["fileChecksum": unknownSum, "size": 50_000_000] as [String: Any]), contains: "no asset with checksum")
        // A remote asset is as its server sent it: ck reads nothing of it, whatever its size.
        let remote: [String: Any] = ["fileChecksum": unknownSum, "size": 3_000_000_000, "downloadURL": "https://cvws.icloud-content.com/B/x/${f}?o=1"]
        let r = s.run(["import"], stdin: line("video", remote) + "\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(value(s.ck("--zone", "Z", "record", "get", "video"), "a")["size"] as? Int, 3_000_000_000)
    }

    /// Assets are read and hashed a piece at a time: every size around SHA-256's 64-byte blocks
    /// and ck's 1 MiB reads comes through export → import with its bytes intact.
    func testExportImportCarriesAssetsOfEverySizeAroundBlockBoundaries() throws {
        let a = sandbox("a@example.com")
        let sizes = [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 4096, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 * (1 << 20) + 17]
        var blobs: [String: Data] = [:]
        for n in sizes {
            let bytes = Data((0..<n).map { UInt8(32 + ($0 &* 31 &+ n) % 95) })  // printable: stdout is compared as text
            let file = a.root.appendingPathComponent("f\(n)")
            try bytes.write(to: file)
            blobs["r\(n)"] = bytes
            XCTAssertEqual(a.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "r\(n)", "a:ASSET=@" + file.path).status, 0)
        }
        let exported = a.ck("export")
        XCTAssertEqual(exported.status, 0, exported.stderr)
        let b = sandbox("b@example.com")
        let imported = b.run(["import"], stdin: exported.stdout)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        for (name, bytes) in blobs {
            let got = b.run(["--zone", "Z", "record", "get", name, "--asset", "a"])
            XCTAssertEqual(got.status, 0, got.stderr)
            XCTAssertEqual(Data(got.stdout.utf8).count, bytes.count, name)
            XCTAssertTrue(Data(got.stdout.utf8) == bytes, "\(name): the bytes came along")
        }
        // Again, now that the bytes are here: nothing is read, the sizes agree.
        let again = b.run(["import"], stdin: exported.stdout)
        XCTAssertEqual(again.status, 0, again.stderr)
    }

    /// A data directory whose path needs percent-encoding (a space, non-ASCII) exports URLs
    /// that import reads back.
    func testAnAssetStoreUnderAPathThatNeedsEscapingRoundTrips() throws {
        let a = CLISandbox()
        a.environment["CK_DATA_DIR"] = a.root.appendingPathComponent("my data ü").path
        a.signIn("a@example.com")
        XCTAssertEqual(a.ck("zone", "create", "Z").status, 0)
        let file = a.root.appendingPathComponent("p")
        try Data("percent\n".utf8).write(to: file)
        XCTAssertEqual(a.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "p", "a:ASSET=@" + file.path).status, 0)
        let url = value(a.ck("--zone", "Z", "record", "get", "p"), "a")["downloadURL"] as? String ?? ""
        XCTAssertTrue(url.contains("my%20data%20"), url)
        let b = sandbox("b@example.com")
        XCTAssertEqual(b.run(["import"], stdin: a.ck("export").stdout).status, 0)
        XCTAssertEqual(b.run(["--zone", "Z", "record", "get", "p", "--asset", "a"]).stdout, "percent\n")
    }

    // MARK: 2. a size that disagrees with the bytes

    func testAnAssetsSizeMustBeThatOfTheBytesItNames() throws {
        let s = sandbox()
        let file = s.root.appendingPathComponent("f")
        try Data("thirteen byte".utf8).write(to: file)
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "one", "a:ASSET=@" + file.path).status, 0)
        let stored = value(s.ck("--zone", "Z", "record", "get", "one"), "a")
        let sum = stored["fileChecksum"] as? String ?? ""
        XCTAssertEqual(stored["size"] as? Int, 13)

        for size in [14, 12, 0] {
            let v: [String: Any] = ["fileChecksum": sum, "size": size]
            assertSaveRefuses(s, line("two", v), contains: "field 'a' of record 'two': the asset's size is \(size) but the bytes with checksum '\(sum)' are 13 bytes long")
            assertImportRefuses(s, line("two", v), contains: "are 13 bytes long")
            assertImportRefuses(s, line("two", [v], type: "ASSETID_LIST"), contains: "field 'a' of record 'two'")
            // With the downloadURL ck printed, too.
            var printed = stored
            printed["size"] = size
            assertImportRefuses(s, line("two", printed), contains: "are 13 bytes long")
        }
        // The review's case: a size no asset may have is refused as such.
        assertSaveRefuses(s, line("two", ["fileChecksum": sum, "size": 999_999_999] as [String: Any]), exit: 8, contains: "LIMIT_EXCEEDED")
        // The right size is accepted.
        let ok = s.run(["--zone", "Z", "record", "save", "--stdin"], stdin: line("two", ["fileChecksum": sum, "size": 13] as [String: Any]))
        XCTAssertEqual(ok.status, 0, ok.stderr)
    }

    /// A file of the right name and shape but another size (or other bytes) is not taken.
    func testAnExportedFileOfAnotherSizeOrOtherBytesIsNotTaken() throws {
        let (a, v) = try source(Data("the original bytes\n".utf8))
        let b = sandbox()
        var wrong = v
        wrong["size"] = 5
        assertImportRefuses(b, line("w", wrong), contains: "the file holds 19 bytes, not the asset's size 5")
        // Same size, other bytes, in place in the source's store.
        let path = URL(string: v["downloadURL"] as? String ?? "")!.path
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        try Data("THE ORIGINAL BYTES\n".utf8).write(to: URL(fileURLWithPath: path))
        assertImportRefuses(b, line("w", v), contains: "the file's SHA-256 is not the fileChecksum")
        _ = a
    }

    // MARK: 3. checksums in non-canonical base64

    func testAChecksumMustBeCanonicalBase64() throws {
        let s = sandbox()
        let file = s.root.appendingPathComponent("f")
        try Data("canonical\n".utf8).write(to: file)
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "one", "a:ASSET=@" + file.path).status, 0)
        let stored = value(s.ck("--zone", "Z", "record", "get", "one"), "a")
        let sum = stored["fileChecksum"] as? String ?? ""
        // The last character before '=' carries two unused bits: its neighbour decodes the same.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var chars = Array(sum)
        let i = chars.count - 2
        chars[i] = alphabet[alphabet.firstIndex(of: chars[i])! ^ 1]
        let twin = String(chars)
        XCTAssertEqual(Data(base64Encoded: twin), Data(base64Encoded: sum), "the same bytes, spelled differently")
        for bad in [twin, String(sum.dropLast()), sum + "\n", " " + sum, "not base64!", sum.replacingOccurrences(of: "=", with: "")] {
            let v: [String: Any] = ["fileChecksum": bad, "size": 10]
            assertSaveRefuses(s, line("two", v), contains: "is not canonical base64")
            s.assertUnchanged("import \(bad)") {
                assertFailure(s.run(["import"], stdin: line("two", v) + "\n"), exit: 6, contains: "is not canonical base64")
            }
            // A remote asset's checksum too.
            let remote: [String: Any] = ["fileChecksum": bad, "size": 10, "downloadURL": "https://example.com/x"]
            assertSaveRefuses(s, line("two", remote), contains: "is not canonical base64")
        }
        // Canonical, it is the stored asset (and prints as it is).
        let ok = s.run(["--zone", "Z", "record", "save", "--stdin"], stdin: line("two", ["fileChecksum": sum, "size": 10] as [String: Any]))
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(value(s.ck("--zone", "Z", "record", "get", "two"), "a")["fileChecksum"] as? String, sum)
    }

    // MARK: 4. downloadURLs that are neither https:// nor file://

    func testOnlyHTTPSURLsMakeARemoteAsset() throws {
        let s = sandbox()
        let file = s.root.appendingPathComponent("f")
        try Data("held\n".utf8).write(to: file)
        XCTAssertEqual(s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "held", "a:ASSET=@" + file.path).status, 0)
        let held = value(s.ck("--zone", "Z", "record", "get", "held"), "a")
        let heldSum = held["fileChecksum"] as? String ?? ""
        let hostile = ["FILE:///etc/passwd", "", "javascript:alert(1)", "http://example.com/a", "ftp://example.com/a", "data:,hello",
                       "https://", "https:///path", "https://exa mple.com/a", "https://user@example.com/a", "https://example.com:99999/a",
                       "https://example.com/a\nb", "https://example.com/a b", "https://example.com/%zz", "https://-", "https://a..b/",
                       "https://example.com\\@evil/", "Https://example.com/a", String(repeating: "x", count: 300)]
        for url in hostile {
            for sum in [unknownSum, heldSum] {
                let v: [String: Any] = ["fileChecksum": sum, "size": 5, "downloadURL": url]
                assertSaveRefuses(s, line("r", v), contains: "its downloadURL '")
                assertImportRefuses(s, line("r", v), contains: "field 'a' of record 'r'")
            }
        }
        let shown = s.run(["--zone", "Z", "record", "save", "--stdin"], stdin: line("r", ["fileChecksum": unknownSum, "size": 5, "downloadURL": "javascript:alert(1)"] as [String: Any]))
        XCTAssertTrue(shown.stderr.contains("'javascript:alert(1)' is neither an https:// URL"), shown.stderr)
        // A downloadURL past 8 KiB is not one a server sends.
        let long: [String: Any] = ["fileChecksum": unknownSum, "size": 5, "downloadURL": "https://example.com/" + String(repeating: "a", count: 9000)]
        assertSaveRefuses(s, line("r", long), contains: "at most 8192")

        // Any host, a port, an IPv6 literal, Apple's `${f}`: a remote asset, kept as sent.
        for (i, url) in ["https://cvws.icloud-content.com/B/AQ/${f}?o=A&v=1", "https://example.com", "https://127.0.0.1:8443/x#y",
                         "https://[::1]/a%20b", "https://EXAMPLE.com./"].enumerated() {
            let v: [String: Any] = ["fileChecksum": unknownSum, "size": 5, "downloadURL": url]
            let r = s.run(["--zone", "Z", "record", "save", "--stdin"], stdin: line("remote\(i)", v))
            XCTAssertEqual(r.status, 0, "\(url): \(r.stderr)")
            XCTAssertEqual(value(s.ck("--zone", "Z", "record", "get", "remote\(i)"), "a")["downloadURL"] as? String, url)
            assertFailure(s.run(["--zone", "Z", "record", "get", "remote\(i)", "--asset", "a"]), exit: 3, contains: "downloadURL")
        }
        // An https URL for bytes that are here: the stored asset (its URL is ck's own).
        let r = s.run(["--zone", "Z", "record", "save", "--stdin"], stdin: line("local", ["fileChecksum": heldSum, "size": 5, "downloadURL": "https://example.com/x"] as [String: Any]))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(value(s.ck("--zone", "Z", "record", "get", "local"), "a")["downloadURL"] as? String, held["downloadURL"] as? String)
    }

    // MARK: 5. file:// URLs only into an asset store, and never through a link

    func testAFileURLOutsideAnAssetStoreIsRefusedWhateverItsChecksum() throws {
        let s = sandbox()
        // Checksums computed by ck, as an attacker would.
        let scratch = sandbox("scratch@example.com")
        let secret = scratch.root.appendingPathComponent("secret.txt")
        try Data("root:x:0:0:secret\n".utf8).write(to: secret)
        var targets = [secret.path]
        if FileManager.default.isReadableFile(atPath: "/etc/passwd") { targets.append("/etc/passwd") }
        // A symbolic link to the secret, and a link inside a copy of an asset store's shape.
        let link = scratch.root.appendingPathComponent("link.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: secret)
        targets.append(link.path)
        for (i, path) in targets.enumerated() {
            let saved = scratch.run(["--zone", "Z", "record", "save", "--type", "T", "--name", "t\(i)", "a:ASSET=@" + path])
            XCTAssertEqual(saved.status, 0, saved.stderr)
            let v = value(scratch.ck("--zone", "Z", "record", "get", "t\(i)"), "a")
            let forged: [String: Any] = ["fileChecksum": v["fileChecksum"] ?? "", "size": v["size"] ?? 0, "downloadURL": URL(fileURLWithPath: path).absoluteString]
            assertImportRefuses(s, line("leak", forged), contains: "could not be read: ck reads a file:// downloadURL only from an asset store")
            assertSaveRefuses(s, line("leak", forged), contains: "no asset with checksum")
            assertFailure(s.run(["--zone", "Z", "record", "get", "leak", "--asset", "a"]), exit: 3)
        }
        // Shapes that are not ck's: another host, a relative path, dot segments, a wrong name or
        // shard, upper-case hex, a checksum that is no SHA-256, a NUL.
        let (a, v) = try source(Data("exported\n".utf8))
        let url = v["downloadURL"] as? String ?? ""
        let sum = v["fileChecksum"] as? String ?? ""
        let path = URL(string: url)!.path
        let name = (path as NSString).lastPathComponent, shard = String(name.prefix(2))
        let base = (path as NSString).deletingLastPathComponent.dropLast(2)
        var bad = ["file://example.com" + path, "file:" + path, "file://" + String(path.dropFirst()),
                   "file://" + base + "../assets/" + shard + "/" + name, "file://" + base + shard + "/./" + name,
                   "file://" + base + shard + "/" + name + "/", "file://" + base + shard + "/" + name.uppercased(),
                   "file://" + base + "00/" + name, "file://" + base + shard + "/" + String(name.dropLast()) + "0",
                   "file://" + (path as NSString).deletingLastPathComponent + "%00/" + name,
                   "file://" + path.replacingOccurrences(of: "/assets/", with: "/assetz/")]
        bad.append("file://" + path.replacingOccurrences(of: "/assets/", with: "/assets/./"))
        for u in bad {
            assertImportRefuses(s, line("shape", ["fileChecksum": sum, "size": 9, "downloadURL": u] as [String: Any]), contains: "its downloadURL '")
        }
        let remote21 = Data(repeating: 1, count: 21).base64EncodedString()
        assertImportRefuses(s, line("shape", ["fileChecksum": remote21, "size": 9, "downloadURL": url] as [String: Any]),
                            contains: "its checksum is not a SHA-256")
        // ck's own shape is taken (and file://localhost/ is the same URL).
        let ok = s.run(["import"], stdin: line("fine", v) + "\n" + line("fine2", ["fileChecksum": sum, "size": 9, "downloadURL": "file://localhost" + path] as [String: Any]) + "\n")
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(s.run(["--zone", "Z", "record", "get", "fine", "--asset", "a"]).stdout, "exported\n")
        _ = a
    }

    func testNoSymbolicLinkIsFollowedInsideTheAssetStore() throws {
        let fm = FileManager.default
        let bytes = Data("linked bytes\n".utf8)
        let real = CLISandbox()
        let elsewhere = real.root.appendingPathComponent("elsewhere")
        try fm.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try bytes.write(to: elsewhere.appendingPathComponent("copy"))

        // The file, its shard directory, the assets directory: each replaced by a link to an
        // identical copy, and each refused.
        for level in ["file", "shard", "assets"] {
            let (a, v) = try source(bytes)
            let path = URL(string: v["downloadURL"] as? String ?? "")!.path
            let shardDir = (path as NSString).deletingLastPathComponent, assets = (shardDir as NSString).deletingLastPathComponent
            let copy = elsewhere.appendingPathComponent(level)
            switch level {
            case "file":
                try fm.moveItem(atPath: path, toPath: copy.path)
                try fm.createSymbolicLink(atPath: path, withDestinationPath: copy.path)
            case "shard":
                try fm.moveItem(atPath: shardDir, toPath: copy.path)
                try fm.createSymbolicLink(atPath: shardDir, withDestinationPath: copy.path)
            default:
                try fm.moveItem(atPath: assets, toPath: copy.path)
                try fm.createSymbolicLink(atPath: assets, withDestinationPath: copy.path)
            }
            let b = sandbox()
            assertImportRefuses(b, line("l", v), contains: "is a symbolic link, which ck does not follow here")
            _ = a
        }

        // A link above the data directory is a path as any other: followed.
        let (a, v) = try source(bytes)
        let path = URL(string: v["downloadURL"] as? String ?? "")!.path
        let dataDir = URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let alias = elsewhere.appendingPathComponent("alias")
        try fm.createSymbolicLink(atPath: alias.path, withDestinationPath: (dataDir as NSString).deletingLastPathComponent)
        var through = v
        through["downloadURL"] = URL(fileURLWithPath: alias.path + "/" + (dataDir as NSString).lastPathComponent + "/assets/" + String((path as NSString).lastPathComponent.prefix(2)) + "/" + (path as NSString).lastPathComponent).absoluteString
        let b = sandbox()
        let r = b.run(["import"], stdin: line("ok", through) + "\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(b.run(["--zone", "Z", "record", "get", "ok", "--asset", "a"]).stdout, "linked bytes\n")
        _ = a
    }

    /// A FIFO or a device in an asset store's place is never opened for long or read.
    func testAFIFOOrDirectoryInAnAssetStoreIsNotRead() throws {
        let (a, v) = try source(Data("fifo\n".utf8))
        let path = URL(string: v["downloadURL"] as? String ?? "")!.path
        try FileManager.default.removeItem(atPath: path)
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        let b = sandbox()
        let started = Date()
        assertImportRefuses(b, line("f", v), contains: "it is a FIFO, not a regular file")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        assertImportRefuses(b, line("f", v), contains: "could not be read")
        _ = a
    }
}
