/// How an indexed log's line carries its own proof of being whole: the log is the only file a
/// commit syncs (AppendLogIndex), so after a crash the lines beyond what the index covers must
/// say for themselves whether they were written whole and where their commit ends.
///
/// A line is the entry's JSON object with two members put first:
/// `{"check":"<16 hex digits>","commit":true,"deviceID":…}` — `check` is FNV-1a (64 bits) of
/// every byte after `"check":"…",`; `commit` marks the last line of each commit (absent on the
/// others). The line stays one sorted-keys JSON object, so `jq` reads the log as before, and
/// typed readers ignore both members. Lines written before issue 38 carry neither: they are
/// trusted where the index (synced with them then) covers them, never beyond it.
enum AppendLogFraming {
    /// `{"check":"` + 16 hex digits + `",`
    static let prefixLength = 10 + 16 + 2
    private static let checkOpening = Array(#"{"check":""#.utf8)
    static let commitMember = Array(#""commit":true,"#.utf8)

    /// The framed line (without its newline) for an entry's compact JSON object.
    static func frame(_ json: [UInt8], commits: Bool) -> [UInt8] {
        precondition(json.count > 2 && json.first == 0x7B, "a log entry is a non-empty JSON object")
        var body = [UInt8]()
        body.reserveCapacity(json.count + commitMember.count)
        if commits { body += commitMember }
        body += json.dropFirst()
        var line = checkOpening
        line.reserveCapacity(prefixLength + body.count)
        line += hex(checksum(body[...]))
        line += [0x22, 0x2C]  // ",
        line += body
        return line
    }

    /// What a line says of itself.
    enum Verdict: Equatable {
        /// Whole; `commits`: the last line of its commit.
        case whole(commits: Bool)
        /// Written without a checksum (before issue 38): only its index word vouches for it.
        case unframed
        /// Framed, but not as written: torn, or overwritten.
        case torn
    }

    static func verdict(_ line: ArraySlice<UInt8>) -> Verdict {
        guard line.count > prefixLength, line.starts(with: checkOpening) else { return .unframed }
        let start = line.startIndex
        let digits = line[(start + checkOpening.count)..<(start + checkOpening.count + 16)]
        guard line[start + prefixLength - 2] == 0x22, line[start + prefixLength - 1] == 0x2C,
              let stated = UInt64(String(decoding: digits, as: UTF8.self), radix: 16) else { return .torn }
        let body = line[(start + prefixLength)...]
        guard checksum(body) == stated, line.last == 0x7D else { return .torn }
        return .whole(commits: body.starts(with: commitMember))
    }

    /// FNV-1a, 64 bits.
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }

    private static func hex(_ v: UInt64) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        return stride(from: 60, through: 0, by: -4).map { digits[Int((v >> UInt64($0)) & 0xf)] }
    }
}
