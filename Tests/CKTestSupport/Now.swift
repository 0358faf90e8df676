import CKCore

/// The time a test's clock reads, which the test moves: `CloudKitAPI(…, clock: Clock { now.ms })`.
public final class Now: @unchecked Sendable {
    public var ms: Int64

    public init(_ ms: Int64 = 1_700_000_000_000) { self.ms = ms }
}
