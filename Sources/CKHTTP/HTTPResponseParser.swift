/// Reading a response from bytes as they arrive: the status line and header fields, and how its
/// body is framed. Pure: no streams, so every odd answer can be tried in a unit test. Errors
/// name what was wrong with the answer, never the request it answers.

private let SP: UInt8 = 0x20

/// A response's status line and header fields.
struct HTTPResponseHead {
    /// `HTTP/1.1` or `HTTP/1.0`.
    var version: String
    var status: Int
    var reason: String
    var headers: HTTPHeaders

    /// 1xx other than 101: an interim answer (100 Continue, 103 Early Hints) the final one follows.
    var isInterim: Bool { (100..<200).contains(status) && status != 101 }

    /// Whether the connection may carry another request after this answer, as far as the answer
    /// says (RFC 9112 §9.3): HTTP/1.1 unless it says `close`; HTTP/1.0 only if it says `keep-alive`.
    var keepsAlive: Bool {
        let options = connectionOptions(headers)
        if options.contains("close") { return false }
        return version == "HTTP/1.1" || options.contains("keep-alive")
    }
}

/// The options of the `Connection` fields, lowercased.
func connectionOptions(_ headers: HTTPHeaders) -> [String] {
    headers.values("Connection").flatMap { $0.split(separator: ",") }
        .map { $0.trimmingBlanks().lowercased() }
}

enum ResponseHeadParseResult {
    case incomplete
    /// The head, and how many bytes of the buffer it took (with any empty lines before it).
    case complete(HTTPResponseHead, length: Int)
    case failed(HTTPClientError)
}

/// A response's head, parsed once its lines are found (HeadLines).
struct HTTPResponseHeadParser {
    private var scanner: HeadLines
    /// The limit an error names: all the heads of one answer share it (interim ones took part).
    let statedLimit: Int

    /// `limit`: bytes the head may take, empty lines before it included.
    init(limit: Int, statedLimit: Int? = nil) {
        scanner = HeadLines(limit: limit)
        self.statedLimit = statedLimit ?? limit
    }

    /// `buffer` holds the answer from its first byte; call again with more of it.
    mutating func parse(_ buffer: ArraySlice<UInt8>) -> ResponseHeadParseResult {
        switch scanner.scan(buffer) {
        case .incomplete: return .incomplete
        case .tooLong: return .failed(tooLong())
        case .complete(let length):
            switch Self.head(scanner.lines.map { buffer[$0] }) {
            case .success(let head): return .complete(head, length: length)
            case .failure(let error): return .failed(error)
            }
        }
    }

    private func tooLong() -> HTTPClientError {
        HTTPClientError(.tooLarge, "the response's status line and header fields are longer than \(statedLimit) bytes")
    }

    /// The head from its lines (status line first, no line ends).
    static func head(_ lines: [ArraySlice<UInt8>]) -> Result<HTTPResponseHead, HTTPClientError> {
        guard let statusLine = lines.first else { return .failure(malformed("the response is empty")) }
        // HTTP-version SP 3DIGIT SP [reason-phrase]; a missing SP after the code is tolerated.
        let version = Array(statusLine.prefix(8))
        let digit = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard version.count == 8, version[0..<5].elementsEqual("HTTP/".utf8), digit.contains(version[5]),
              version[6] == UInt8(ascii: "."), digit.contains(version[7])
        else { return .failure(malformed("the response does not begin with a status line ('HTTP/1.1 200 OK')")) }
        guard version[5] == UInt8(ascii: "1"), version[7] == UInt8(ascii: "0") || version[7] == UInt8(ascii: "1") else {
            return .failure(malformed("the response's HTTP version \(fieldText(version[...])) is not 1.0 or 1.1"))
        }
        let rest = statusLine.dropFirst(8)
        let code = Array(rest.dropFirst().prefix(3))
        guard rest.first == SP, code.count == 3, code.allSatisfy(digit.contains),
              rest.count == 4 || rest[rest.startIndex + 4] == SP
        else { return .failure(malformed("the status line has no three-digit status code")) }
        let status = code.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard (100...599).contains(status) else { return .failure(malformed("the status code \(status) is not between 100 and 599")) }
        let reason = rest.dropFirst(5)
        guard reason.allSatisfy({ $0 == 0x09 || ($0 >= SP && $0 != 0x7F) }) else {
            return .failure(malformed("the reason phrase holds a control character"))
        }
        switch headerFields(lines[1...]) {
        case .success(let headers):
            return .success(HTTPResponseHead(version: fieldText(version[...]), status: status, reason: fieldText(reason), headers: headers))
        case .failure(let error):
            return .failure(malformed("the response's header fields are malformed: " + error.reason))
        }
    }
}

private func malformed(_ message: String) -> HTTPClientError { HTTPClientError(.malformed, message) }

/// How a response's body is delimited (RFC 9112 §6.3).
enum ResponseBodyFraming: Equatable {
    case none
    case length(Int)
    case chunked
    /// No length given: the body is what comes until the server closes the connection.
    case untilClose

    static func of(_ head: HTTPResponseHead, requestMethod: String) -> Result<ResponseBodyFraming, HTTPClientError> {
        // An answer to HEAD, a 1xx, 204 and 304 never have a body, whatever their fields say.
        if requestMethod == "HEAD" || head.status < 200 || head.status == 204 || head.status == 304 { return .success(.none) }
        let lengths = head.headers.values("Content-Length")
        let codingFields = head.headers.values("Transfer-Encoding")
        if !codingFields.isEmpty {
            // Both is how responses are split and smuggled (RFC 9112 §6.3 ¶3): an error.
            guard lengths.isEmpty else { return .failure(malformed("the response has both Content-Length and Transfer-Encoding")) }
            let codings = codingFields.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
                .map { $0.trimmingBlanks().lowercased() }
            // The client asks for no coding (it sends no TE field): only chunked is expected.
            guard codings == ["chunked"] else {
                let unknown = codings.first { $0 != "chunked" } ?? "chunked"
                return .failure(malformed(unknown == "chunked" ? "the response is chunked more than once"
                                                               : "the response's transfer coding '\(unknown)' is not supported"))
            }
            return .success(.chunked)
        }
        guard !lengths.isEmpty else { return .success(.untilClose) }
        var value: Int?
        for item in lengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = item.trimmingBlanks()
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return .failure(malformed("the response's Content-Length '\(digits)' is not a number of bytes"))
            }
            // Saturates: an absurd length is over any limit, not an overflow.
            var n = 0
            for d in digits.utf8 {
                let (times, o1) = n.multipliedReportingOverflow(by: 10)
                let (plus, o2) = times.addingReportingOverflow(Int(d - UInt8(ascii: "0")))
                n = (o1 || o2) ? Int.max : plus
            }
            if let value, value != n { return .failure(malformed("the response's Content-Length values disagree")) }
            value = n
        }
        return .success(.length(value ?? 0))
    }
}

private extension Substring {
    func trimmingBlanks() -> String {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
