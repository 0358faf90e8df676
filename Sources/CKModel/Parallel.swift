import Dispatch

/// Work shared by the cores: what reading or writing many record files does.
public enum Parallel {
    /// `body(i)` for every i in 0..<count, `chunk` indices at a time on every core; the results
    /// in index order (each slot written by the one thread that made it).
    public static func map<T>(_ count: Int, chunk: Int, _ body: (Int) -> T) -> [T] {
        guard count > 0 else { return [] }
        return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            nonisolated(unsafe) let slots = buffer
            DispatchQueue.concurrentPerform(iterations: (count + chunk - 1) / chunk) { c in
                for i in (c * chunk)..<min(count, (c + 1) * chunk) { (slots.baseAddress! + i).initialize(to: body(i)) }
            }
            initialized = count
        }
    }

    /// `map`, on the calling thread alone below `parallelFrom` items: waking the threads costs
    /// more than they give a small batch.
    @inlinable
    public static func map<T>(_ count: Int, chunk: Int, parallelFrom: Int, _ body: (Int) -> T) -> [T] {
        count < parallelFrom ? (0..<count).map(body) : map(count, chunk: chunk, body)
    }
}
