/// Reading a request from bytes as they arrive: the head (request line and header fields), how
/// its body is framed, and chunked bodies. Pure: no sockets, so every malformed input can be
/// tried in a unit test.

/// A request the engine answers itself, with the status and what was wrong.
struct HTTPRefusal: Error, Equatable {
    var status: Int
    var reason: String
}

private let LF: UInt8 = 0x0A, CR: UInt8 = 0x0D, SP: UInt8 = 0x20, HT: UInt8 = 0x09, COLON: UInt8 = 0x3A

/// RFC 9110 tchar: what a method or a field name may hold.
func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
}

/// Text of bytes that may hold obs-text: UTF-8 when it is, else one character per byte.
func fieldText(_ bytes: ArraySlice<UInt8>) -> String {
    bytes.withUnsafeBufferPointer { buf in
        // A header's text is nearly always ASCII, which needs no validating (asked of every
        // field of every request; the generic validation of a slice cost 1,000 instructions).
        if buf.allSatisfy({ $0 < 0x80 }) { return String(decoding: buf, as: UTF8.self) }
        if let s = String(validating: buf, as: UTF8.self) { return s }
        return String(buf.map { Character(Unicode.Scalar($0)) })
    }
}

enum HeadParseResult {
    case incomplete
    /// The head, and how many bytes of the buffer it took (with any empty lines before it).
    case complete(HTTPRequestHead, length: Int)
    case refused(HTTPRefusal)
}

/// A request's head, parsed once its lines are found (HeadLines).
struct HTTPHeadParser {
    private var scanner: HeadLines
    var limit: Int { scanner.limit }

    init(limit: Int) { scanner = HeadLines(limit: limit) }

    /// `bytes` is the buffer from where the request starts; call again with more of it.
    mutating func parse(_ buffer: ArraySlice<UInt8>) -> HeadParseResult {
        switch scanner.scan(buffer) {
        case .incomplete: return .incomplete
        case .tooLong: return .refused(tooLong())
        case .complete(let length): return build(buffer, length: length)
        }
    }

    private func tooLong() -> HTTPRefusal {
        scanner.lines.isEmpty
            ? HTTPRefusal(status: 414, reason: "the request line is longer than \(limit) bytes")
            : HTTPRefusal(status: 431, reason: "the request's header fields are longer than \(limit) bytes")
    }

    private func build(_ buffer: ArraySlice<UInt8>, length: Int) -> HeadParseResult {
        switch Self.head(scanner.lines.map { buffer[$0] }) {
        case .success(let head): return .complete(head, length: length)
        case .failure(let refusal): return .refused(refusal)
        }
    }

    /// The head from its lines (request line first, no line ends).
    static func head(_ lines: [ArraySlice<UInt8>]) -> Result<HTTPRequestHead, HTTPRefusal> {
        guard let requestLine = lines.first else { return .failure(bad("the request is empty")) }
        // Exactly two spaces, found by one scan (a generic split was 2.5% of a lookup).
        var first: Int?, second: Int?, more = false
        for i in requestLine.indices where requestLine[i] == SP {
            if first == nil { first = i } else if second == nil { second = i } else { more = true; break }
        }
        guard let a = first, let b = second, !more else { return .failure(bad("the request line is not 'METHOD target HTTP/1.1'")) }
        let (method, target, version) = (requestLine[..<a], requestLine[(a + 1)..<b], requestLine[(b + 1)...])
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else { return .failure(bad("the method is not a token")) }
        guard !target.isEmpty, target.allSatisfy({ $0 > SP && $0 < 0x7F }) else {
            return .failure(bad("the request target is empty or holds spaces, controls or non-ASCII bytes"))
        }
        let v = Array(version)
        guard v.count == 8, v[0..<5].elementsEqual("HTTP/".utf8), v[6] == UInt8(ascii: "."),
              (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(v[5]), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(v[7])
        else { return .failure(bad("the request line does not end with an HTTP version")) }
        guard v[5] == UInt8(ascii: "1"), v[7] == UInt8(ascii: "0") || v[7] == UInt8(ascii: "1") else {
            return .failure(HTTPRefusal(status: 505, reason: "HTTP version \(fieldText(version[...])) is not supported; use HTTP/1.1"))
        }
        let headers: HTTPHeaders
        switch headerFields(lines.dropFirst()) {
        case .success(let fields): headers = fields
        case .failure(let error): return .failure(bad(error.reason))
        }
        let head = HTTPRequestHead(method: fieldText(method), target: fieldText(target), headers: headers, version: fieldText(version))
        if head.version == "HTTP/1.1" {
            let hosts = headers.values("Host")
            guard hosts.count == 1 else {
                return .failure(bad(hosts.isEmpty ? "an HTTP/1.1 request needs a Host header" : "the request has more than one Host header"))
            }
        }
        return .success(head)
    }
}

/// Header field lines (without their line ends) as fields, for a request or a response: a
/// field folded over lines, a name that is not a token and a value holding a control are
/// refused, with what was wrong.
func headerFields(_ lines: ArraySlice<ArraySlice<UInt8>>) -> Result<HTTPHeaders, HeaderFieldError> {
    var headers = HTTPHeaders()
    for line in lines {
        guard line.first != SP && line.first != HT else {
            return .failure(HeaderFieldError("a header field is folded over lines (obs-fold)"))
        }
        guard let colon = line.firstIndex(of: COLON) else { return .failure(HeaderFieldError("a header field has no colon")) }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            return .failure(HeaderFieldError("a header field name is empty or not a token"))
        }
        var value = line[(colon + 1)...]
        while let f = value.first, f == SP || f == HT { value = value.dropFirst() }
        while let l = value.last, l == SP || l == HT { value = value.dropLast() }
        // CTLs other than HTAB (NUL, a bare CR, …) and DEL are never part of a value.
        guard value.allSatisfy({ $0 == HT || ($0 >= SP && $0 != 0x7F) }) else {
            return .failure(HeaderFieldError("header field '\(fieldText(name))' holds a control character"))
        }
        headers.add(fieldText(name), fieldText(value))
    }
    return .success(headers)
}

/// What is wrong with a header field line.
struct HeaderFieldError: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

private func bad(_ reason: String) -> HTTPRefusal { HTTPRefusal(status: 400, reason: reason) }

/// How a request's body is delimited (RFC 9112 §6.3).
enum BodyFraming: Equatable {
    case none
    /// Saturates at Int.max: an absurd length is over any limit, not an overflow.
    case length(Int)
    case chunked

    var hasBody: Bool { self == .chunked || (self != .none && self != .length(0)) }

    static func of(_ head: HTTPRequestHead) -> Result<BodyFraming, HTTPRefusal> {
        let lengths = head.headers.values("Content-Length")
        let codingFields = head.headers.values("Transfer-Encoding")
        if !codingFields.isEmpty {
            guard lengths.isEmpty else { return .failure(bad("the request has both Content-Length and Transfer-Encoding")) }
            let codings = codingFields.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
                .map { $0.trimmingSpaces.lowercased() }
            if let unknown = codings.first(where: { $0 != "chunked" && !$0.isEmpty }) {
                return .failure(HTTPRefusal(status: 501, reason: "transfer coding '\(unknown)' is not supported; send the body plain or chunked"))
            }
            guard codings == ["chunked"] else { return .failure(bad("Transfer-Encoding must be 'chunked', once")) }
            return .success(.chunked)
        }
        guard !lengths.isEmpty else { return .success(.none) }
        var value: Int?
        for item in lengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = item.trimmingSpaces
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return .failure(bad("Content-Length '\(item)' is not a number of bytes"))
            }
            var n = 0
            for d in digits.utf8 {
                let (times, o1) = n.multipliedReportingOverflow(by: 10)
                let (plus, o2) = times.addingReportingOverflow(Int(d - UInt8(ascii: "0")))
                n = (o1 || o2) ? Int.max : plus
            }
            if let value, value != n { return .failure(bad("the request's Content-Length values disagree")) }
            value = n
        }
        return .success(.length(value ?? 0))
    }
}

private extension Substring {
    var trimmingSpaces: String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

private extension String {
    var trimmingSpaces: String { self[...].trimmingSpaces }
}

/// Decodes a chunked body as it arrives: sizes in hex (extensions ignored), data, and trailer
/// fields read and dropped. The data is handed to `feed`'s `data` as it comes.
struct ChunkedBodyDecoder {
    enum Progress: Equatable { case needMore, done, refused(HTTPRefusal) }

    let maxBytes: Int
    /// A size line or a trailer field longer than this is refused.
    let lineLimit: Int
    /// Data bytes decoded so far.
    private(set) var received = 0
    private enum State { case size, data(remaining: Int), dataEnd, trailer, done }
    private var state = State.size
    private var trailerBytes = 0

    init(maxBytes: Int, lineLimit: Int = 64 * 1024) {
        self.maxBytes = maxBytes
        self.lineLimit = lineLimit
    }

    /// Takes what it can from the front of `buffer`, handing the body's bytes to `data` as they
    /// come (false: stop, `.needMore` is returned and the decoder is left as it is).
    mutating func feed(_ buffer: inout ReadBuffer, data: (ArraySlice<UInt8>) -> Bool) -> Progress {
        while true {
            switch state {
            case .done:
                return .done
            case .size:
                guard let line = takeLine(&buffer) else {
                    return buffer.count > 4096 ? .refused(bad("a chunk size line is too long")) : .needMore
                }
                var digits = line[...]
                if let semicolon = digits.firstIndex(of: UInt8(ascii: ";")) { digits = digits[..<semicolon] }
                while let l = digits.last, l == SP || l == HT { digits = digits.dropLast() }
                guard !digits.isEmpty else { return .refused(bad("a chunk size is missing")) }
                var size = 0, overflowed = false
                for d in digits {
                    guard let v = hexValue(d) else { return .refused(bad("a chunk size is not hexadecimal")) }
                    let (times, o1) = size.multipliedReportingOverflow(by: 16)
                    let (plus, o2) = times.addingReportingOverflow(v)
                    if o1 || o2 { overflowed = true } else { size = plus }
                }
                // An overflowing size is over any limit: 413, like any other too-large chunk.
                if overflowed || size > maxBytes - received { return .refused(tooLarge()) }
                state = size == 0 ? .trailer : .data(remaining: size)
            case .data(let remaining):
                if buffer.isEmpty { return .needMore }
                let piece = buffer.bytes.prefix(remaining)
                guard data(piece) else { return .needMore }
                let n = piece.count
                buffer.consume(n)
                received += n
                state = n == remaining ? .dataEnd : .data(remaining: remaining - n)
            case .dataEnd:
                guard let line = takeLine(&buffer) else {
                    return buffer.count >= 2 ? .refused(bad("a chunk is longer than its size")) : .needMore
                }
                guard line.isEmpty else { return .refused(bad("a chunk is longer than its size")) }
                state = .size
            case .trailer:
                guard let line = takeLine(&buffer) else {
                    return buffer.count > lineLimit ? .refused(HTTPRefusal(status: 431, reason: "the trailer fields are too long")) : .needMore
                }
                trailerBytes += line.count + 2
                if trailerBytes > lineLimit { return .refused(HTTPRefusal(status: 431, reason: "the trailer fields are too long")) }
                if line.isEmpty { state = .done }
            }
        }
    }

    private func tooLarge() -> HTTPRefusal {
        HTTPRefusal(status: 413, reason: "the request body is larger than \(maxBytes) bytes")
    }

    /// The next line without its CR LF (or LF), if a whole one is there.
    private func takeLine(_ buffer: inout ReadBuffer) -> [UInt8]? {
        let bytes = buffer.bytes
        guard let lf = bytes.firstIndex(of: LF) else { return nil }
        var line = Array(bytes[bytes.startIndex..<lf])
        if line.last == CR { line.removeLast() }
        buffer.consume(lf - bytes.startIndex + 1)
        return line
    }
}

private func hexValue(_ b: UInt8) -> Int? {
    switch b {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(b - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(b - UInt8(ascii: "a")) + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(b - UInt8(ascii: "A")) + 10
    default: return nil
    }
}
