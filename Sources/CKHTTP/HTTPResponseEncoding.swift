import Glibc

/// A response as bytes on the wire: status line, the handler's fields, and the fields the engine
/// owns (Content-Length, Date, Connection).
extension HTTPResponse {
    /// - Parameters:
    ///   - omitBody: a HEAD request: the fields of the GET, no body.
    ///   - close: the connection closes after this response.
    ///   - keepAlive10: an HTTP/1.0 peer asked to keep the connection.
    func encoded(omitBody: Bool, close: Bool, keepAlive10: Bool = false) -> [UInt8] {
        // Bytes appended straight into the answer: building it as a String first cost a lookup
        // about 2% of its instructions.
        var out: [UInt8] = []
        out.reserveCapacity(160 + headers.fields.count * 48 + (omitBody ? 0 : body.count))
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(status, to: &out)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: HTTPResponse.reasonPhrase(status).utf8)
        out.append(contentsOf: crlf)
        var hasDate = false
        for (name, value) in headers where !Self.engineOwned(name) {
            // Handlers' fields are trusted for meaning but never allowed to split the response:
            // CR, LF and NUL are dropped (in UTF-8 those bytes are those characters only).
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else { continue }
            if HTTPHeaders.sameName(name, "Date") { hasDate = true }
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: ": ".utf8)
            // Whole when clean (nearly always), else a byte at a time without those.
            let splits = { (b: UInt8) in b == 13 || b == 10 || b == 0 }
            if value.utf8.contains(where: splits) {
                for b in value.utf8 where !splits(b) { out.append(b) }
            } else {
                out.append(contentsOf: value.utf8)
            }
            out.append(contentsOf: crlf)
        }
        let handlerCloses = headers.values("Connection").contains { $0.lowercased().contains("close") }
        if !(100...199).contains(status) && status != 204 {
            out.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(body.count, to: &out)
            out.append(contentsOf: crlf)
        }
        if !hasDate {
            out.append(contentsOf: "Date: ".utf8)
            appendHTTPDate(time(nil), to: &out)
            out.append(contentsOf: crlf)
        }
        if close || handlerCloses { out.append(contentsOf: "Connection: close\r\n".utf8) } else if keepAlive10 { out.append(contentsOf: "Connection: keep-alive\r\n".utf8) }
        out.append(contentsOf: crlf)
        if !omitBody { out.append(contentsOf: body) }
        return out
    }

    /// The fields the engine writes itself.
    static func engineOwned(_ name: String) -> Bool {
        HTTPHeaders.sameName(name, "Content-Length") || HTTPHeaders.sameName(name, "Connection") || HTTPHeaders.sameName(name, "Transfer-Encoding")
    }

    /// The handler asked for the connection to close after this response.
    var closesConnection: Bool { headers.values("Connection").contains { $0.lowercased().contains("close") } }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 417: return "Expectation Failed"
        case 421: return "Misdirected Request"
        case 422: return "Unprocessable Content"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        default:
            switch status / 100 {
            case 1: return "Informational"
            case 2: return "Success"
            case 3: return "Redirection"
            case 4: return "Client Error"
            default: return "Server Error"
            }
        }
    }
}

/// Now as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), without a formatter: formatters
/// are not for sharing across threads and this is on every response.
func httpDate(_ seconds: time_t = time(nil)) -> String {
    var out: [UInt8] = []
    appendHTTPDate(seconds, to: &out)
    return String(decoding: out, as: UTF8.self)
}

private let crlf: [UInt8] = [13, 10]
private let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].map { Array($0.utf8) }
private let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map { Array($0.utf8) }

/// `seconds` as an IMF-fixdate, appended.
func appendHTTPDate(_ seconds: time_t, to out: inout [UInt8]) {
    var t = seconds
    var parts = tm()
    gmtime_r(&t, &parts)
    func two(_ n: Int32) {
        out.append(UInt8(ascii: "0") + UInt8(n / 10 % 10))
        out.append(UInt8(ascii: "0") + UInt8(n % 10))
    }
    out.append(contentsOf: weekdays[Int(parts.tm_wday)])
    out.append(contentsOf: ", ".utf8)
    two(parts.tm_mday)
    out.append(UInt8(ascii: " "))
    out.append(contentsOf: months[Int(parts.tm_mon)])
    out.append(UInt8(ascii: " "))
    appendDecimal(Int(parts.tm_year) + 1900, to: &out)
    out.append(UInt8(ascii: " "))
    two(parts.tm_hour)
    out.append(UInt8(ascii: ":"))
    two(parts.tm_min)
    out.append(UInt8(ascii: ":"))
    two(parts.tm_sec)
    out.append(contentsOf: " GMT".utf8)
}

/// An integer's decimal digits, appended (`String(n)` makes them without the heap).
func appendDecimal(_ n: Int, to out: inout [UInt8]) {
    out.append(contentsOf: String(n).utf8)
}
