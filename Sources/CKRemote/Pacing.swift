import CKModel
import Foundation

/// How a remote client paces itself (Docs/remote.md "Pacing"): CloudKit publishes no request
/// rate, throttles with THROTTLED (429) or 503 and a time to wait, and expects clients to
/// honour it. One request is in flight per session (the client is synchronous); a token
/// bucket spaces them; waits asked for are honoured; 5xx and ZONE_BUSY back off exponentially
/// with jitter; and all waiting stops at a budget, with the state saved.
public struct PacingPolicy: Sendable {
    /// Requests per second (nil: unpaced). Apple's host defaults to `defaultRate`; a ck serve
    /// or another host is unpaced unless asked.
    public var rate: Double?
    /// The most this session waits in all, in seconds, before it gives up (exit 10).
    public var maxWait: Double
    /// Retries of one request after a failure that is not a wait asked for.
    public var retries: Int

    public static let defaultRate = 10.0
    public static let defaultMaxWait = 600.0

    public init(rate: Double?, maxWait: Double = PacingPolicy.defaultMaxWait, retries: Int = 5) {
        self.rate = rate
        self.maxWait = maxWait
        self.retries = retries
    }

    /// The default for a remote: paced on Apple's host, not on loopback.
    public static func standard(for url: RemoteURL) -> PacingPolicy {
        PacingPolicy(rate: url.host == RemoteURL.appleHost || url.host.hasSuffix(".apple-cloudkit.com") ? defaultRate : nil)
    }
}

/// The waiting a session did, against its budget.
final class Pacer {
    let policy: PacingPolicy
    private var next: Double = 0
    private(set) var waited: Double = 0
    let sleep: (Double) -> Void
    let now: () -> Double

    init(_ policy: PacingPolicy, sleep: @escaping (Double) -> Void = { s in if s > 0 { usleep(useconds_t(min(s, 4000) * 1_000_000)) } },
         now: @escaping () -> Double = { Date().timeIntervalSince1970 }) {
        self.policy = policy
        self.sleep = sleep
        self.now = now
    }

    /// Waits for the bucket before a request.
    func beforeRequest() {
        guard let rate = policy.rate, rate > 0 else { return }
        let t = now()
        if next > t { sleep(next - t) }
        next = max(t, next) + 1 / rate
    }

    /// Waits `seconds` if the budget allows; false (nothing waited) when it does not.
    func wait(_ seconds: Double) -> Bool {
        guard waited + seconds <= policy.maxWait else { return false }
        waited += seconds
        sleep(seconds)
        return true
    }

    /// The n-th backoff (0-based): 1, 2, 4 … 32 s, with up to half again of jitter.
    static func backoff(_ attempt: Int, jitter: Double = Double.random(in: 0..<0.5)) -> Double {
        let base = pow(2.0, Double(min(attempt, 5)))
        return base * (1 + jitter)
    }
}

/// A session stopped waiting: it used its budget (`--max-wait`) on throttles and retries.
/// Everything fetched so far is saved; run the command again to go on.
public struct RemoteGaveUp: Error, Sendable {
    public let error: CloudKitError
    public let waited: Double
}
