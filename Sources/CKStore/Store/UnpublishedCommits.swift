import CKModel
import Foundation

/// A zone as one process keeps it between its group commits (GroupCommit): the zone's locks,
/// and the commits that are durable — history synced, requests answered — but whose derived
/// files (record files, reference index, tombstones, notifications, the applied cursor, the
/// indexes) are not published yet.
///
/// Where commits come in groups (`ck serve`), publishing is not on the commit path: a thread of
/// the zone's own publishes each group's files, in commit order, while the next group commits.
/// Until they are published:
/// - the process keeps the zone's locks, so no other process — writer, `ck fsck`, a reset —
///   ever finds the zone part-way; it lets them go once everything is published and no group
///   has begun for `linger` (and at least every `lockTurn`, so another process waiting for the
///   zone gets its turn);
/// - its next groups read the unpublished records from here (`Overlay`, over the files);
/// - readers take from the history what the files do not hold yet, as they do after a crash;
/// - a crash leaves what a crash after any commit's point of no return leaves: the next
///   writer of the zone, or `ck fsck`, publishes it from the history.
/// A publication that fails (a full disk) gives up the ones after it too, and the locks are let
/// go once no group is being committed: the next holder of the zone's lock — this process's
/// next group, or another process — publishes them from the history, as after a crash.
package final class UnpublishedCommits: @unchecked Sendable {
    /// Records (nil: deleted) and reference-index entries the unpublished commits leave, the
    /// later over the earlier.
    package struct Overlay {
        package var records: [NameKey: Record?] = [:]
        package var refs: [NameKey: [NameKey: [String]]] = [:]
        var isEmpty: Bool { records.isEmpty && refs.isEmpty }
    }

    /// One committed group's derived files, ready to publish.
    struct Publication {
        let changes: Overlay
        /// Directories its prepared files hold open until it is published (none for a server's
        /// groups, whose files are prepared by the publication itself).
        let directories: Int
        /// Publishes the files; false if it could not (the replay redoes it).
        let publish: () -> Bool
        /// Gives the prepared files up: a publication before it failed.
        let abandon: () -> Void
    }

    /// What a group starts from: the zone, its history's head, and what is not published yet.
    struct Start {
        let zone: ZoneStore
        let head: Int64
        let unpublished: Overlay
    }

    /// Test hook, called on the publisher's thread before each publication: holds the window
    /// between the answer and the files open (`CK_DEBUG_PUBLISH_DELAY_MS`, the tests).
    package nonisolated(unsafe) static var willPublish: (() -> Void)?

    /// Publications waiting at most, and the directories they may hold open: a group waits
    /// for the publisher past either (memory; file descriptors, whose limit is 1,024 by default).
    static let queueLimit = 8
    static let openDirectoryLimit = 256
    /// How long the process keeps a busy zone's locks before it lets them go once.
    static let lockTurn: UInt64 = 250_000_000

    private let state = NSCondition()
    // Guarded by `state`.
    private var locks: [FileLock] = []
    private var lockedAt: UInt64 = 0
    private var zone: ZoneStore?
    private var head: Int64 = 0
    private var leading = false
    /// Committed groups not yet published, oldest first: those waiting, then the one being
    /// published (while `publishing`), then — after a failure, until the locks are let go —
    /// those given up.
    private var pending: [Publication] = []
    private var waiting = 0
    private var waitingDirectories = 0
    private var publishing = false
    private var failed = false

    /// Starts a group (its leader, one at a time): takes the locks unless this process holds
    /// them, finishing what an interrupted commit left (`lock`).
    func begin(lock: () throws -> (locks: [FileLock], zone: ZoneStore, head: Int64)) throws -> Start {
        state.lock()
        defer { state.unlock() }
        leading = true
        begun &+= 1
        do {
            while waiting >= UnpublishedCommits.queueLimit || (waiting > 0 && waitingDirectories >= UnpublishedCommits.openDirectoryLimit) { state.wait() }
            if !locks.isEmpty, DispatchTime.now().uptimeNanoseconds - lockedAt > UnpublishedCommits.lockTurn {
                // Another process's turn: everything published, the locks let go — for a moment,
                // so that one blocked on them is woken and takes them first — and taken again.
                while waiting > 0 || publishing { state.wait() }
                release()
                state.unlock()
                usleep(1_000)
                state.lock()
            }
            if locks.isEmpty {
                // Nothing of this process is unpublished: the disk is the zone.
                state.unlock()
                let taken: (locks: [FileLock], zone: ZoneStore, head: Int64)
                do { taken = try lock() } catch { state.lock(); throw error }
                state.lock()
                (locks, zone, head, lockedAt) = (taken.locks, taken.zone, taken.head, DispatchTime.now().uptimeNanoseconds)
            }
            var overlay = Overlay()
            for p in pending {
                for (k, v) in p.changes.records { overlay.records[k] = .some(v) }
                for (k, v) in p.changes.refs { overlay.refs[k] = v }
            }
            return Start(zone: zone!, head: head, unpublished: overlay)
        } catch {
            leading = false
            if !publishing && waiting == 0 { release() }
            throw error
        }
    }

    /// Ends a group: its publication (if it committed) is published — on the zone's publisher
    /// thread when `afterAnswer`, else here, before the answer — and the locks are let go once
    /// nothing is left to publish (after `linger`, for a server's next group).
    func end(committed publication: Publication?, head newHead: Int64?, afterAnswer: Bool) {
        state.lock()
        defer { state.unlock() }
        if let h = newHead { head = h }
        if let p = publication {
            if !afterAnswer {
                // After what a server's database of this process left to publish (a process
                // that serves and commands at once: tests, an embedding), never before it.
                while publishing || waiting > 0 { state.wait() }
                // Never past commits a failed publication gave up: their redo, from the
                // history, is the next lock holder's, and this one's with them.
                if failed { p.abandon() } else if !p.publish() { failed = true }
            } else if failed {
                // Published from the history by the zone's next lock holder.
                p.abandon()
                pending.append(p)
            } else {
                pending.append(p)
                waiting += 1
                waitingDirectories += p.directories
                if !publishing {
                    publishing = true
                    DispatchQueue.global().async { self.drain() }
                }
            }
        }
        leading = false
        guard !publishing && waiting == 0 else { return }
        if afterAnswer && !failed { releaseSoon() } else { release() }
    }

    /// The publisher: publishes what waits, in order, then lets the locks go if no group is
    /// being committed.
    private func drain() {
        state.lock()
        defer { state.unlock() }
        while waiting > 0 {
            let next = pending[pending.count - waiting]
            state.unlock()
            UnpublishedCommits.willPublish?()
            let published = next.publish()
            state.lock()
            waiting -= 1
            waitingDirectories -= next.directories
            if published {
                pending.removeFirst()
            } else {
                failed = true
                for p in pending.suffix(waiting) { p.abandon() }
                waiting = 0
                waitingDirectories = 0
            }
            state.broadcast()
        }
        publishing = false
        state.broadcast()
        if !leading { if failed { release() } else { releaseSoon() } }
    }

    /// Waits until everything committed is published and the locks are let go (a server
    /// stopping, tests).
    func finish() {
        state.lock()
        defer { state.unlock() }
        while publishing || leading { state.wait() }
        release()
    }

    /// How long an idle zone's locks are kept for a next group: a busy server's groups follow
    /// each other closer than that, and taking the locks again costs each group a dozen system
    /// calls; another process waits that much longer at most.
    static let linger: DispatchTimeInterval = .milliseconds(2)
    /// Counts the groups begun: a release due after `linger` is off if another began meanwhile.
    private var begun: UInt64 = 0

    /// Lets the locks go after `linger`, unless a group begins meanwhile. Called holding `state`.
    private func releaseSoon() {
        let mark = begun
        DispatchQueue.global().asyncAfter(deadline: .now() + UnpublishedCommits.linger) {
            self.state.lock()
            defer { self.state.unlock() }
            if self.begun == mark && !self.leading && !self.publishing && self.waiting == 0 { self.release() }
        }
    }

    /// Lets the locks go. Whatever is unpublished then (after a failure) is the next lock
    /// holder's to finish, from the history. Called holding `state`.
    private func release() {
        for l in locks.reversed() { l.unlock() }
        locks = []
        zone = nil
        pending = []
        failed = false
        state.broadcast()
    }
}
