import CKTestSupport
import Foundation
import XCTest

/// `kill -9` at random moments — mid-write included, which no crash point can reach — of
/// saves, batches, imports, zone creations and deletions, schema resets and sign-ins, each
/// followed by another write and then fsck: nothing acknowledged is lost, the change feeds, the
/// database history and the notifications agree with the records, a second fsck is clean.
/// (`make stress` runs it, not `make test`: SCALE times 40 rounds, bench/stress.sh.)
final class KillLoopTests: XCTestCase {
    /// Starts ck, kills it after `delay` seconds (unless it finished), returns its stdout and
    /// whether it completed.
    private func killed(_ s: Sandbox, _ args: [String], stdin: String?, after delay: Double) -> (stdout: String, completed: Bool) {
        let l = s.launch(args, stdin: .bytes(Data((stdin ?? "").utf8)))
        usleep(useconds_t(delay * 1_000_000))
        kill(l.process.processIdentifier, SIGKILL)
        let r = l.collect()
        return (r.stdout, l.process.terminationReason == .exit && r.status == 0)
    }

    func testRandomKillsFollowedByAnotherWriteLoseNothing() {
        let seed = UInt64(ProcessInfo.processInfo.environment["CK_KILL_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max / 2)
        print("KillLoopTests seed \(seed) (CK_KILL_SEED=\(seed) replays it)")
        var rng = SplitMix(seed: seed)
        let s = Sandbox()
        s.signIn()
        XCTAssertEqual(s.ck("zone", "create", "Z").status, 0)
        XCTAssertEqual(s.ck("--device", "v", "subscribe", "query", "--type", "T", "--fires-on", "create").status, 0)
        var acknowledged: [String: String] = [:]
        var kills = 0
        let rounds = 40 * Sandbox.stressScale
        for round in 0..<rounds {
            let kind = Int.random(in: 0..<7, using: &rng)
            var args: [String] = []
            var stdin: String?
            var names: [String] = []
            switch kind {
            case 0:
                args = ["--zone", "Z", "record", "save", "--type", "T", "--name", "s\(round)", "n=\(round)"]
                names = ["s\(round)"]
            case 1:
                names = (0..<30).map { "b\(round)-\($0)" }
                stdin = "{\"operations\": [" + names.map { "{\"operationType\": \"create\", \"record\": {\"recordName\": \"\($0)\", \"recordType\": \"T\", \"fields\": {\"n\": {\"value\": 1}}}}" }
                    .joined(separator: ",") + "]}"
                args = ["--zone", "Z", "record", "modify"]
            case 2:
                stdin = (0..<60).map { "{\"recordName\": \"i\(round)-\($0)\", \"recordType\": \"T\", \"fields\": {\"n\": {\"value\": \($0)}}}" }.joined(separator: "\n")
                args = ["--zone", "Z", "import", "--batch", "10", "--format", "ndjson"]
            case 3: args = ["zone", "create", "Y\(round)"]
            case 4:
                let zones = (0..<round).map { "Y\($0)" }.filter { s.ck("--zone", $0, "record", "list").status == 0 }
                args = ["zone", "delete", zones.first ?? "nonexistent"]
            case 5: args = ["account", "signin", "alice@example.com", "--given-name", "A\(round)"]
            default:
                args = ["--zone", "Z", "record", "save", "--name", "s\(max(round - 1, 0))", "--force", "m=\(round)"]
            }
            let r = killed(s, args, stdin: stdin, after: Double.random(in: 0.0...0.03, using: &rng))
            if !r.completed { kills += 1 }
            if kind == 2 {
                for line in r.stdout.split(separator: "\n") where line.hasSuffix("}") && !line.contains("serverErrorCode") {
                    if let n = (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["recordName"] as? String { acknowledged[n] = "Z" }
                }
            } else if r.completed {
                for n in names { acknowledged[n] = "Z" }
            }
            // Another write before any repair; then fsck, and a clean second fsck.
            let w = s.ck("--zone", "Z", "record", "save", "--type", "T", "--name", "w\(round)", "n=1")
            XCTAssertEqual(w.status, 0, "round \(round) (seed \(seed)): the write after the kill failed: \(w.stderr)")
            acknowledged["w\(round)"] = "Z"
            XCTAssertEqual(s.ck("fsck").status, 0, "round \(round) (seed \(seed))")
            XCTAssertTrue(s.ck("fsck", "--dry-run").stdout.contains("\"clean\": true"), "round \(round) (seed \(seed)): second fsck not clean")
            for broken in s.brokenPromises(acknowledged: acknowledged, watcher: "v") { XCTFail("round \(round) (seed \(seed)), \(args.prefix(4)): \(broken)") }
        }
        XCTAssertGreaterThan(kills, rounds / 4, "too few commands were killed before they finished")
        let lost = acknowledged.filter { name, zone in s.run(["--zone", zone, "record", "get", name]).status != 0 }.count
        print("STRESS kill: \(rounds) commands, \(kills) killed by kill -9 part-way, each followed by another write and fsck; \(acknowledged.count) acknowledged records, \(lost) lost (seed \(seed))")
    }
}
