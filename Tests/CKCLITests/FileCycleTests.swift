import Foundation
import XCTest

/// No knot of files inside a target: within each target, files that reach each other through
/// the types they name form cycles, and no cycle may hold more than 2,500 lines. A cycle is
/// code that can only be understood, tested and changed as one piece; past that size the
/// target has a hub (as `Database` once was) that everything leans on and that leans on
/// everything.
///
/// A file depends on another when it names a type the other declares at its top level (nested
/// types are reached through their outer type's name, so `Kind` in one file is not taken for
/// another file's `Directory.Kind`). Extensions count as uses of the type they extend.
final class FileCycleTests: XCTestCase {
    static let largestCycleLines = 2_500

    private var sources: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
    }

    struct SourceFile {
        var path: String
        var target: String
        var lines: Int
        var declared: Set<String>
        var named: Set<String>
    }

    private static let declaration = try! NSRegularExpression(
        pattern: #"^(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate|final|indirect)\s+)*(?:enum|struct|class|protocol|typealias|actor)\s+(\w+)"#,
        options: [.anchorsMatchLines])
    private static let typeName = try! NSRegularExpression(pattern: #"\b[A-Z]\w*\b"#)

    static func parse(path: String, target: String, text: String) -> SourceFile {
        let ns = text as NSString
        let declared = Set(declaration.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { ns.substring(with: $0.range(at: 1)) })
        // Names in code, not in comments.
        let code = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            guard let r = line.range(of: "//") else { return line }
            return line[..<r.lowerBound]
        }.joined(separator: "\n") as NSString
        let named = Set(typeName.matches(in: code as String, range: NSRange(location: 0, length: code.length)).map { code.substring(with: $0.range) })
        return SourceFile(path: path, target: target, lines: text.split(separator: "\n", omittingEmptySubsequences: false).count, declared: declared, named: named)
    }

    /// The cycles (strongly connected components of more than one file), largest first.
    static func cycles(_ files: [SourceFile]) -> [[SourceFile]] {
        var declaredIn: [String: [Int]] = [:]
        for (i, f) in files.enumerated() { for d in f.declared { declaredIn[f.target + "." + d, default: []].append(i) } }
        let edges: [[Int]] = files.enumerated().map { i, f in
            Array(Set(f.named.flatMap { declaredIn[f.target + "." + $0] ?? [] }).subtracting([i]))
        }
        // Tarjan's algorithm, iteratively (no recursion limit).
        var index = [Int?](repeating: nil, count: files.count), low = [Int](repeating: 0, count: files.count)
        var onStack = [Bool](repeating: false, count: files.count), stack: [Int] = [], next = 0
        var components: [[Int]] = []
        for root in files.indices where index[root] == nil {
            var work: [(node: Int, edge: Int)] = [(root, 0)]
            index[root] = next; low[root] = next; next += 1; stack.append(root); onStack[root] = true
            while let (v, e) = work.last {
                if e < edges[v].count {
                    work[work.count - 1].edge += 1
                    let w = edges[v][e]
                    if index[w] == nil {
                        index[w] = next; low[w] = next; next += 1; stack.append(w); onStack[w] = true
                        work.append((w, 0))
                    } else if onStack[w] {
                        low[v] = min(low[v], index[w]!)
                    }
                    continue
                }
                work.removeLast()
                if let parent = work.last?.node { low[parent] = min(low[parent], low[v]) }
                if low[v] == index[v]! {
                    var component: [Int] = []
                    while let w = stack.popLast() {
                        onStack[w] = false
                        component.append(w)
                        if w == v { break }
                    }
                    if component.count > 1 { components.append(component) }
                }
            }
        }
        return components.map { $0.map { files[$0] } }.sorted { $0.reduce(0) { $0 + $1.lines } > $1.reduce(0) { $0 + $1.lines } }
    }

    private func sourceFiles() throws -> [SourceFile] {
        var out: [SourceFile] = []
        let targets = try FileManager.default.contentsOfDirectory(atPath: sources.path)
        for target in targets {
            guard let files = FileManager.default.enumerator(atPath: sources.appendingPathComponent(target).path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: sources.appendingPathComponent(target + "/" + file), encoding: .utf8)
                out.append(Self.parse(path: target + "/" + file, target: target, text: text))
            }
        }
        return out
    }

    func testNoCycleOfFilesHoldsMoreThan2500Lines() throws {
        let files = try sourceFiles()
        XCTAssertGreaterThan(files.count, 300, "the sources were not found")
        for cycle in Self.cycles(files) {
            let lines = cycle.reduce(0) { $0 + $1.lines }
            XCTAssertLessThanOrEqual(lines, Self.largestCycleLines,
                                     "\(cycle.count) files (\(lines) lines) depend on each other: \(cycle.map(\.path).sorted().joined(separator: ", "))")
        }
    }

    /// The measure itself: a ring of three files is one cycle; a file only used is outside it;
    /// a nested type's name does not tie files together; names in comments do not count.
    func testTheMeasureFindsACycleAndOnlyThatCycle() {
        let files = [
            Self.parse(path: "T/A.swift", target: "T", text: "struct A { var b: B }"),
            Self.parse(path: "T/B.swift", target: "T", text: "struct B { var c: C\n  enum Kind {} }"),
            Self.parse(path: "T/C.swift", target: "T", text: "final class C { let a: A? = nil } // D"),
            Self.parse(path: "T/D.swift", target: "T", text: "struct D { var a: A; var k: Kind }"),
            Self.parse(path: "U/E.swift", target: "U", text: "struct E { var a: A }\nstruct A { var e: E }"),
        ]
        let found = Self.cycles(files)
        XCTAssertEqual(found.map { $0.map(\.path).sorted() }, [["T/A.swift", "T/B.swift", "T/C.swift"]])
    }
}
