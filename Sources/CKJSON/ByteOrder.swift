#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The order of byte strings — names, index lines, query text (code-point order is UTF-8's
/// byte order) — in one `memcmp`. The standard library's `elementsEqual` and
/// `lexicographicallyPrecedes` go a byte at a time through generic code: about 700
/// instructions for a record name, and most of sorting a query's index lines.
@usableFromInline
package enum ByteOrder {
    /// -1, 0 or 1 as `x` sorts before, with or after `y`.
    @inlinable @usableFromInline
    package static func of(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(x.count, y.count)
        let c = n == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, n)
        if c != 0 { return c < 0 ? -1 : 1 }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }
}

extension String {
    /// Equal bytes: the only equality names have.
    package func sameBytes(_ other: String) -> Bool {
        utf8.count == other.utf8.count && byteOrder(other) == 0
    }

    /// The order of two strings' UTF-8 bytes (code-point order): -1, 0 or 1. Read in place:
    /// a copy to call `withUTF8` on would count a reference to each string, and the strings a
    /// server compares (names, keys) are shared by its threads.
    package func byteOrder(_ other: String) -> Int {
        if let order = utf8.withContiguousStorageIfAvailable({ x in other.utf8.withContiguousStorageIfAvailable { y in ByteOrder.of(x, y) } }),
           let order {
            return order
        }
        // Not stored as UTF-8 (bridged text): the views, a byte at a time.
        if utf8.elementsEqual(other.utf8) { return 0 }
        return utf8.lexicographicallyPrecedes(other.utf8) ? -1 : 1
    }
}

extension ArraySlice where Element == UInt8 {
    /// -1, 0 or 1 as these bytes sort before, with or after `other`'s.
    @inlinable
    package func byteOrder(_ other: ArraySlice<UInt8>) -> Int {
        withUnsafeBufferPointer { x in other.withUnsafeBufferPointer { y in ByteOrder.of(x, y) } }
    }

    /// Whether these bytes sort before `other`'s.
    @inlinable
    package func precedes(_ other: ArraySlice<UInt8>) -> Bool { byteOrder(other) < 0 }

    @inlinable
    package func precedes(_ other: [UInt8]) -> Bool { precedes(other[...]) }
}

extension Array where Element == UInt8 {
    /// Whether these bytes sort before `other`'s.
    @inlinable
    package func precedes(_ other: [UInt8]) -> Bool { self[...].precedes(other[...]) }

    @inlinable
    package func precedes(_ other: ArraySlice<UInt8>) -> Bool { self[...].precedes(other) }
}
