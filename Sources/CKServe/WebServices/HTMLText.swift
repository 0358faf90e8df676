/// Text as an HTML page shows it: the five characters markup gives meaning escaped. What ck
/// serve's own pages (the sign-in page, the console's refusal) put between tags.
enum HTMLText {
    static func escaped(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
