/// The lines of a message's head, found incrementally — a request's head (HTTPHeadParser) and a
/// response's (HTTPResponseHeadParser) alike: bytes already scanned are not scanned again, so a
/// peer sending one byte at a time costs linear work, and the scan jumps from line end to line
/// end (every byte of every message passes here).
struct HeadLines {
    /// Bytes the head may take, empty lines before it included.
    let limit: Int
    private var scanned = 0
    private var lineStart = 0
    /// The lines so far, without their CR LF (empty lines before the first are skipped).
    private(set) var lines: [Range<Int>] = []

    enum Outcome {
        case incomplete
        /// A byte past the limit came before the head's end.
        case tooLong
        /// The head ended: how many bytes of the buffer it took (with any empty lines before it).
        case complete(length: Int)
    }

    private static let lf: UInt8 = 0x0A, cr: UInt8 = 0x0D

    init(limit: Int) { self.limit = limit }

    /// `buffer` holds the message from its first byte; call again with more of it.
    mutating func scan(_ buffer: ArraySlice<UInt8>) -> Outcome {
        let base = buffer.startIndex
        var i = base + scanned
        while i < buffer.endIndex {
            let lf = buffer.withUnsafeBufferPointer { buf in buf[(i - base)...].firstIndex(of: HeadLines.lf).map { base + $0 } }
            guard let lf, lf - base <= limit else {
                // No line end within the limit: the bytes up to it are taken as they were one
                // at a time (a byte past the limit refuses the head).
                i = buffer.endIndex
                if i - base > limit {
                    scanned = limit + 1
                    return .tooLong
                }
                break
            }
            i = lf
            var end = i
            if end > base + lineStart && buffer[end - 1] == HeadLines.cr { end -= 1 }
            let line = (base + lineStart)..<end
            lineStart = i + 1 - base
            if line.isEmpty {
                // An empty line before the first line is tolerated (RFC 9112 §2.2); it counts
                // towards the limit, so endless empty lines are refused too.
                if !lines.isEmpty {
                    scanned = i + 1 - base
                    return scanned > limit ? .tooLong : .complete(length: scanned)
                }
            } else {
                lines.append(line)
            }
            i += 1
            if i - base > limit {
                scanned = i - base
                return .tooLong
            }
        }
        scanned = i - base
        return .incomplete
    }
}
