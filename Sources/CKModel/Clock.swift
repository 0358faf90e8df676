import Foundation

/// The time source; tests and fixtures may pin it.
public struct Clock: Sendable {
    public var now: @Sendable () -> Int64
    public init(now: @escaping @Sendable () -> Int64) { self.now = now }
    public static let system = Clock { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
