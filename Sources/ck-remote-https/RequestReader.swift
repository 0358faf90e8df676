#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request ck sent on stdin, in absolute form: the whole URL on the request line.
struct ForwardedRequest {
    var method: String
    /// As written on the request line (`https://host/path?query`).
    var target: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]
}

/// Why the bytes on stdin are not a request: the helper answers 400 and exits.
struct MalformedRequest: Error {
    let reason: String
}

/// Reads HTTP/1.1 requests one after another from a descriptor. Strict: ck is the only writer,
/// so anything unexpected is a bug worth stopping for, not something to guess around.
struct RequestReader {
    static let headLimit = 64 * 1024
    static let headerCountLimit = 200
    /// An asset upload is held in memory whole: CloudKit's own limit for one is far below.
    static let bodyLimit = 1 << 31

    private let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    /// The next request; nil at the end of the input between requests.
    mutating func next() throws -> ForwardedRequest? {
        var headEnd: Int
        var scanned = 0
        while true {
            if let end = Self.endOfHead(buffer, from: scanned) { headEnd = end; break }
            scanned = max(0, buffer.count - 3)
            guard buffer.count <= Self.headLimit else { throw MalformedRequest(reason: "the request head exceeds \(Self.headLimit) bytes") }
            if try fill() == 0 {
                if buffer.isEmpty { return nil }
                throw MalformedRequest(reason: "the input ended inside a request head")
            }
        }
        let head = Array(buffer[..<headEnd])
        buffer.removeFirst(headEnd)
        var request = try Self.parseHead(head)
        let length = try Self.contentLength(request.headers)
        while buffer.count < length {
            if try fill() == 0 { throw MalformedRequest(reason: "the input ended inside a request body (\(buffer.count) of \(length) bytes)") }
        }
        request.body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return request
    }

    private mutating func fill() throws -> Int {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw MalformedRequest(reason: "reading the input failed: \(String(cString: strerror(errno)))") }
            buffer.append(contentsOf: chunk[..<n])
            return n
        }
    }

    /// Where the empty line ending a head is (the index past it), CRLF or bare LF.
    static func endOfHead(_ bytes: [UInt8], from start: Int) -> Int? {
        var i = start
        while i < bytes.count {
            if bytes[i] == 0x0A {
                if i + 1 < bytes.count && bytes[i + 1] == 0x0A { return i + 2 }
                if i + 2 < bytes.count && bytes[i + 1] == 0x0D && bytes[i + 2] == 0x0A { return i + 3 }
            }
            i += 1
        }
        return nil
    }

    static func parseHead(_ head: [UInt8]) throws -> ForwardedRequest {
        // Split on bytes: in a Swift String "\r\n" is one character.
        var lines: [Substring] = []
        for raw in head.split(separator: 0x0A, omittingEmptySubsequences: false) {
            let bytes = raw.last == 0x0D ? raw.dropLast() : raw
            guard let line = String(validating: bytes, as: UTF8.self) else { throw MalformedRequest(reason: "the request head is not UTF-8") }
            lines.append(Substring(line))
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let requestLine = lines.first else { throw MalformedRequest(reason: "the request line is missing") }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].utf8.allSatisfy(isTokenByte) else {
            throw MalformedRequest(reason: "the request line is not 'METHOD URL HTTP/1.1'")
        }
        guard parts[2] == "HTTP/1.1" else { throw MalformedRequest(reason: "the request's version is not HTTP/1.1") }
        let target = String(parts[1])
        // Absolute form only: a path alone would not say which host to reach.
        guard let colon = target.firstIndex(of: ":"), target[target.index(after: colon)...].hasPrefix("//"),
              target[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }), !target[..<colon].isEmpty
        else { throw MalformedRequest(reason: "the request target is not an absolute URL (scheme://host/path)") }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let sep = line.firstIndex(of: ":") else { throw MalformedRequest(reason: "a header line has no ':'") }
            let name = line[..<sep]
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                throw MalformedRequest(reason: "a header name is empty or holds a character a token may not (folded lines are not accepted)")
            }
            let value = line[line.index(after: sep)...].trimmingSpaces
            guard !value.utf8.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }) else {
                throw MalformedRequest(reason: "header \(name) holds a control character")
            }
            headers.append((String(name), String(value)))
        }
        guard headers.count <= headerCountLimit else { throw MalformedRequest(reason: "the request has more than \(headerCountLimit) headers") }
        return ForwardedRequest(method: String(parts[0]), target: target, headers: headers, body: [])
    }

    static func contentLength(_ headers: [(name: String, value: String)]) throws -> Int {
        if headers.contains(where: { $0.name.lowercased() == "transfer-encoding" }) {
            throw MalformedRequest(reason: "Transfer-Encoding is not accepted: send the body with Content-Length")
        }
        let values = Set(headers.filter { $0.name.lowercased() == "content-length" }.map(\.value))
        guard let value = values.first else { return 0 }
        guard values.count == 1, !value.isEmpty, value.count <= 12, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let n = Int(value) else { throw MalformedRequest(reason: "Content-Length is not one decimal number") }
        guard n <= bodyLimit else { throw MalformedRequest(reason: "Content-Length \(n) exceeds the helper's limit of \(bodyLimit) bytes") }
        return n
    }
}

/// RFC 9110 tchar: what a method or a header name may hold.
func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return s
    }
}
