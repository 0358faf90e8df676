import CKCore
import CKModel
import Foundation

/// The long-polls waiting now (`GET webcourierURL`): how many one push token, the push tokens
/// of one credential, and all of them together may have — so polls never take the connections
/// ordinary requests need — and which push tokens have an answer on its way. A poll over a cap
/// is answered at once with `retryAfter`, which CloudKit JS meets by polling again (after 10 ms,
/// 100 ms, then every second).
final class LongPolls: @unchecked Sendable {
    struct Limits: Sendable {
        /// Polls of one push token at once. CloudKit JS keeps one; a second covers a page
        /// reloaded while its old poll is still ending.
        var perPushToken = 2
        /// Polls of the push tokens one API token made.
        var perCredential = 32
        /// Polls in all: `ck serve` makes it half its connections.
        var total = 128
    }

    let limits: Limits
    private let lock = NSLock()
    /// The waiting polls' watches, by push token: how many each has, and whom a stop wakes.
    private var watches: [String: [ObjectIdentifier: WebPushWatch]] = [:]
    private var byCredential: [String: Int] = [:]
    private var total = 0
    /// Push tokens with an answer on its way: their next poll waits until it is acknowledged,
    /// so it never gets the same notification twice.
    private var delivering: Set<String> = []
    /// Polls that found their push token delivering: its end wakes them (and only them — two
    /// polls of one token waking each other would spin).
    private var awaitingTurn: [String: [WebPushWatch]] = [:]
    private var stopped = false

    init(_ limits: Limits = Limits()) { self.limits = limits }

    /// Counts a poll in, or refuses it: THROTTLED (429) past its push token's or its
    /// credential's polls, SERVICE_UNAVAILABLE (503) past all polls.
    func enter(_ key: String, credential: String?, watch: WebPushWatch) throws {
        lock.lock()
        defer { lock.unlock() }
        func over(_ code: ServerErrorCode, _ why: String) -> CloudKitError {
            var e = CloudKitError(code, why + "; poll again later")
            e.retryAfter = 1
            return e
        }
        if watches[key, default: [:]].count >= limits.perPushToken {
            throw over(.throttled, "this push token already has \(limits.perPushToken) long-polls waiting")
        }
        if let c = credential, byCredential[c, default: 0] >= limits.perCredential {
            throw over(.throttled, "the push tokens of this API token already have \(limits.perCredential) long-polls waiting")
        }
        if total >= limits.total { throw over(.serviceUnavailable, "the server already has \(limits.total) long-polls waiting") }
        if let c = credential { byCredential[c, default: 0] += 1 }
        total += 1
        watches[key, default: [:]][ObjectIdentifier(watch)] = watch
    }

    func leave(_ key: String, credential: String?, watch: WebPushWatch) {
        lock.lock()
        defer { lock.unlock() }
        if let c = credential {
            byCredential[c, default: 1] -= 1
            if byCredential[c] == 0 { byCredential[c] = nil }
        }
        total -= 1
        watches[key]?[ObjectIdentifier(watch)] = nil
        if watches[key]?.isEmpty == true { watches[key] = nil }
    }

    /// Takes the push token's turn to look for a notification and answer it; false while
    /// another poll of it has one on its way (`watch` is then woken when that one ends).
    func startDelivery(_ key: String, _ watch: WebPushWatch) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if stopped { return false }
        if delivering.insert(key).inserted { return true }
        awaitingTurn[key, default: []].append(watch)
        return false
    }

    /// Ends the turn, and wakes the polls of the push token that waited for it.
    func finishDelivery(_ key: String) {
        lock.lock()
        delivering.remove(key)
        let waiting = awaitingTurn.removeValue(forKey: key) ?? []
        lock.unlock()
        waiting.forEach { $0.signal() }
    }

    var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    /// The server is stopping: every waiting poll answers at once.
    func stop() {
        lock.lock()
        stopped = true
        let all = watches.values.flatMap(\.values)
        lock.unlock()
        all.forEach { $0.signal() }
    }
}
