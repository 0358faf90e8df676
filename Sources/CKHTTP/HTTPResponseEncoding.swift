import Glibc

/// A response as bytes on the wire: status line, the handler's fields, and the fields the engine
/// owns (Content-Length, Date, Connection).
extension HTTPResponse {
    /// - Parameters:
    ///   - omitBody: a HEAD request: the fields of the GET, no body.
    ///   - close: the connection closes after this response.
    ///   - keepAlive10: an HTTP/1.0 peer asked to keep the connection.
    func encoded(omitBody: Bool, close: Bool, keepAlive10: Bool = false) -> [UInt8] {
        var out = "HTTP/1.1 \(status) \(HTTPResponse.reasonPhrase(status))\r\n"
        var hasDate = false
        for (name, value) in headers where !Self.engineOwned(name) {
            // Handlers' fields are trusted for meaning but never allowed to split the response.
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else { continue }
            if HTTPHeaders.sameName(name, "Date") { hasDate = true }
            // By scalar: "\r\n" is one Character, equal to neither "\r" nor "\n".
            if !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) {
                out += "\(name): \(value)\r\n"
                continue
            }
            var clean = String.UnicodeScalarView()
            clean.append(contentsOf: value.unicodeScalars.filter { $0 != "\r" && $0 != "\n" && $0 != "\0" })
            out += "\(name): \(String(clean))\r\n"
        }
        let handlerCloses = headers.values("Connection").contains { $0.lowercased().contains("close") }
        if !(100...199).contains(status) && status != 204 { out += "Content-Length: \(body.count)\r\n" }
        if !hasDate { out += "Date: \(httpDate())\r\n" }
        if close || handlerCloses { out += "Connection: close\r\n" } else if keepAlive10 { out += "Connection: keep-alive\r\n" }
        out += "\r\n"
        var bytes = Array(out.utf8)
        if !omitBody { bytes += body }
        return bytes
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
    var t = seconds
    var parts = tm()
    gmtime_r(&t, &parts)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
        + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
}
