import CKModel
import Foundation

/// Group commit: requests of this process that write one zone at the same time share one
/// durable commit — one history append, one sync — instead of queueing for the zone's lock
/// and syncing one after another (`ck serve` with many clients). Each request is still its own
/// unit: its operations run in order against the zone as the requests before it in the group
/// left it, with its own atomicity and results; only the commit is shared, and no request is
/// answered before that commit is durable.
///
/// The first request to arrive for a zone leads: it takes the locks, runs every request
/// waiting at that moment, commits them together and hands each its results. Requests that
/// arrive meanwhile wait; when the leader is done, the first of them leads the next group.
/// Another process (the CLI) still takes the zone's lock as before.
///
/// Where the database `publishesAfterAnswer` (`ck serve`), a group's derived files are published after its
/// requests are answered, while the next group commits (UnpublishedCommits).
final class GroupCommit: @unchecked Sendable {
    package static let shared = GroupCommit()

    /// One request: what to run under the locks, and its outcome.
    final class Job {
        /// Runs the request's operations into a child of the group's transaction (under the
        /// locks); returns that child and the results.
        package let apply: (ZoneStore, Transaction) throws -> (Transaction, [OperationResult])
        fileprivate var outcome: Result<[OperationResult], Error>?
        fileprivate let wake = DispatchSemaphore(value: 0)

        package init(apply: @escaping (ZoneStore, Transaction) throws -> (Transaction, [OperationResult])) { self.apply = apply }
    }

    private let lock = NSLock()
    /// Zone → requests waiting for the next group.
    private var waiting: [String: [Job]] = [:]
    /// Zones with a group being committed.
    private var busy: Set<String> = []
    /// Each zone's locks and unpublished commits, kept between its groups.
    private var zones: [String: UnpublishedCommits] = [:]

    /// The zone `key` as this process keeps it between groups.
    func unpublished(_ key: String) -> UnpublishedCommits {
        lock.lock()
        defer { lock.unlock() }
        if let u = zones[key] { return u }
        let u = UnpublishedCommits()
        zones[key] = u
        return u
    }

    /// Waits until every zone's commits are published and their locks let go (a server
    /// stopping; tests).
    func finishPublishing() {
        lock.lock()
        let all = Array(zones.values)
        lock.unlock()
        for u in all { u.finish() }
    }

    /// Runs `job` in a group of the zone `key`; `commitGroup` commits a group (called on the
    /// leader's thread) and returns each job's outcome, in order.
    package func run(_ job: Job, key: String, commitGroup: ([Job]) -> [Result<[OperationResult], Error>]) throws -> [OperationResult] {
        lock.lock()
        waiting[key, default: []].append(job)
        let leadsNow = busy.insert(key).inserted
        lock.unlock()
        // Woken either with its outcome, or (none yet) to lead the next group.
        if !leadsNow { job.wake.wait() }
        if job.outcome == nil { lead(key, commitGroup: commitGroup, leader: job) }
        guard let outcome = job.outcome else { throw CloudKitError.internalError("a group commit gave a request no outcome") }
        return try outcome.get()
    }

    /// How many requests wait for the next group of `key` (tests).
    func waitingCount(_ key: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return waiting[key]?.count ?? 0
    }

    /// Commits every request waiting for `key`, answers them, and hands the lead to the first
    /// that arrived meanwhile (or frees the zone).
    private func lead(_ key: String, commitGroup: ([Job]) -> [Result<[OperationResult], Error>], leader: Job) {
        lock.lock()
        let group = waiting.removeValue(forKey: key) ?? []
        lock.unlock()
        let outcomes = commitGroup(group)
        for (j, o) in zip(group, outcomes) { j.outcome = o }
        lock.lock()
        let next = waiting[key]?.first
        if next == nil { busy.remove(key) }
        lock.unlock()
        for j in group where j !== leader { j.wake.signal() }
        next?.wake.signal()
    }
}
