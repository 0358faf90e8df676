import Foundation
import XCTest

/// The layers of Package.swift hold in the sources: a file imports only the ck targets its own
/// target depends on. SwiftPM builds every target of the package into one directory, so an
/// `import CKStore` in the command line could compile although CKCLI does not depend on it;
/// this test is what refuses it.
final class LayerImportTests: XCTestCase {
    private var root: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }

    /// Each source target's ck dependencies, as Package.swift declares them.
    private func declaredDependencies() throws -> [String: Set<String>] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let target = try NSRegularExpression(pattern: #"\.(?:executableTarget|target)\(name: "(\w+)"(?:, dependencies: \[([^\]]*)\])?"#)
        var out: [String: Set<String>] = [:]
        for m in target.matches(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)) {
            let name = String(manifest[Range(m.range(at: 1), in: manifest)!])
            let list = Range(m.range(at: 2), in: manifest).map { String(manifest[$0]) } ?? ""
            out[name] = Set(list.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \"")) }.filter { !$0.isEmpty })
        }
        return out
    }

    func testEverySourceImportsOnlyTheTargetsItsTargetDependsOn() throws {
        let dependencies = try declaredDependencies()
        XCTAssertEqual(dependencies["CKStore"], ["CKModel", "CKJSON", "CKCrypto"], "the manifest was not read as expected")
        let targets = Set(dependencies.keys)
        var checked = 0
        for (target, allowed) in dependencies {
            let dir = root.appendingPathComponent("Sources/" + target)
            guard let files = FileManager.default.enumerator(atPath: dir.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") where line.hasPrefix("import ") {
                    let module = String(line.dropFirst("import ".count))
                    if targets.contains(module) {
                        XCTAssertTrue(allowed.contains(module), "Sources/\(target)/\(file) imports \(module), which \(target) does not depend on")
                    }
                }
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 300, "the sources were not found")
    }
}

/// `make test` runs every test target: a target its filters leave out would never run, in CI
/// or anywhere (CKRemoteTests once went unrun so).
final class MakeTestCoverageTests: XCTestCase {
    func testMakeTestRunsEveryTestTarget() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let makefile = try String(contentsOf: root.appendingPathComponent("Makefile"), encoding: .utf8)
        let targetPattern = try NSRegularExpression(pattern: #"\.testTarget\(name: "(\w+)""#)
        let targets = targetPattern.matches(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)).map { String(manifest[Range($0.range(at: 1), in: manifest)!]) }
        XCTAssertGreaterThan(targets.count, 5, "the manifest was not read as expected")
        // The test recipe's filters: its lines from `test:` to the next blank line.
        let recipe = makefile.components(separatedBy: "\ntest:")[1].components(separatedBy: "\n\n")[0]
        for t in targets where t != "CKTestSupport" {
            XCTAssertTrue(recipe.contains("--filter '\(t)") || recipe.contains("|\(t)'") || recipe.contains("|\(t)|") || recipe.contains("--filter \(t)"),
                          "make test runs no test of \(t): add it to the Makefile's test filters")
        }
    }
}
