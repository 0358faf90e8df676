import CKModel

/// Index lines handed on in order with the records they name, whose files are read a batch at a
/// time (a large batch on every core): reading and parsing a record file is most of what an
/// indexed query costs, and the lines to read next are known before any is checked. The first
/// batch is what the plan expects a page to read; later ones grow from 32 (64, … 512), so a page
/// reads few records it does not use.
struct RecordPrefetch {
    package let snapshot: ZoneSnapshot
    let fieldRun: Bool
    private var pending: [[UInt8]] = []
    private var batch: Int
    private var next = 32
    /// `body` asked to stop: nothing more is read or handed on.
    private(set) var stopped = false

    package init(snapshot: ZoneSnapshot, fieldRun: Bool, firstBatch: Int = 32) {
        self.snapshot = snapshot
        self.fieldRun = fieldRun
        batch = max(1, firstBatch)
    }

    typealias Body = (ArraySlice<UInt8>, Record?) throws -> Bool

    /// Queues a line; a full batch is read and handed on. False once `body` has asked to stop.
    package mutating func add(_ line: ArraySlice<UInt8>, _ body: Body) throws -> Bool {
        guard !stopped else { return false }
        pending.append(Array(line))
        if pending.count >= batch { try flush(body) }
        return !stopped
    }

    /// Hands on what is queued.
    package mutating func flush(_ body: Body) throws {
        guard !stopped, !pending.isEmpty else { return }
        let lines = pending
        pending = []
        batch = next
        next = min(next * 2, 512)
        let names = lines.map { IndexKey.name(ofLine: $0[...], fieldRun: fieldRun) }
        let files = read(names)
        for (k, line) in lines.enumerated() {
            // A file that cannot be read fails the query only when its line is reached.
            let record = try names[k].flatMap { try snapshot.record(named: $0, file: try files[k].get()) }
            if try !body(line[...], record) { stopped = true; return }
        }
    }

    /// Batches from this size are read on every core. Waking the threads costs a process its
    /// first parallel batch's gain: a page of 200 (a first batch of 209) took 7.2 ms on 2
    /// cores read on one thread and 7.4 ms on both, with a third more CPU; `--all` of 40,000
    /// (batches of 512) 0.88 s on one and 0.64 s on both.
    static let parallelFrom = 256

    /// The record files of `names`, read on every core when there are enough (each slot written
    /// by one thread).
    private func read(_ names: [String?]) -> [Result<Record?, Error>] {
        let snapshot = self.snapshot
        func file(_ k: Int) -> Result<Record?, Error> { names[k].map { n in Result { try snapshot.file(named: n) } } ?? .success(nil) }
        return Parallel.map(names.count, chunk: 8, parallelFrom: Self.parallelFrom, file)
    }
}
