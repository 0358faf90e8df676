import CKModel

/// The temporary files of a commit's record files (`{schemaVersion, record}`, pretty JSON), made
/// on every core when there are enough of them and no fault is armed. On failure none is left.
enum RecordFileWriter {
    /// Records at which a commit's files are written on several threads.
    static let parallelFrom = 64

    /// Per record (nil: a delete, no file), its temporary file's name in `directories[i]`.
    package static func prepare(_ records: [Record?], in directories: [Directory]) throws -> [String?] {
        func write(_ i: Int) throws -> String? {
            guard let r = records[i] else { return nil }
            return try directories[i].prepare(StoredRecordFile(r).bytes)
        }
        if records.count < parallelFrom || CrashPoints.isArmed {
            var out: [String?] = []
            do {
                for i in records.indices { out.append(try write(i)) }
            } catch {
                for (i, t) in out.enumerated() { if let t { directories[i].discard(t) } }
                throw error
            }
            return out
        }
        let results = Parallel.map(records.count, chunk: 16) { i in Result { try write(i) } }
        var out: [String?] = []
        for r in results {
            switch r {
            case .success(let t): out.append(t)
            case .failure(let e):
                for (i, r) in results.enumerated() { if case .success(let t?) = r { directories[i].discard(t) } }
                throw e
            }
        }
        return out
    }
}
